// SPDX-License-Identifier: Apache-2.0
//
// Proof of which offload plugin a test program ran on.  At exit it checks
// that the plugin libomptarget used is the expected one:
//
//   * at least one loaded object's file name starts with
//     "libomptarget.rtl.<OFFLOADIO_EXPECT_PLUGIN>", and
//   * every such object was loaded from OFFLOADIO_EXPECT_PLUGIN_DIR.
//
// libomptarget (16, 17 and 18 alike) silently falls back to the stock
// plugin from the LLVM library directory when ours is rejected; this turns
// that into a failure (message on stderr, exit status 97).  Without OFFLOADIO_EXPECT_PLUGIN in the
// environment it does nothing, so programs run by hand are unaffected.
// With OFFLOADIO_PLUGIN_CHECK_LOG=<file>, every program that passes the
// check appends "<pid> <program> <plugin>" to that file: a runner can then
// tell "all checked and right" from "the check never ran".
//
// Built two ways from this one source:
//
//   * linked into every offload-io lit test program (test/lit.cfg.py):
//     every such program must have loaded the plugin;
//   * with -DOFFLOADIO_PLUGIN_CHECK_PRELOAD, as a shared library that
//     tools/llvm-suite/run.sh preloads into every process of LLVM's own
//     test suite.  There the environment reaches the compiler, FileCheck and
//     the shell too, so the check only judges processes that loaded
//     libomptarget.  A process that loaded libomptarget but no plugin of
//     that name passes only under OMP_TARGET_OFFLOAD=disabled, where
//     libomptarget 16 and 17 load no plugin at all by design (18 loads and
//     initialises its plugins all the same, so there the plugin must be
//     ours as anywhere); anywhere else it means the program ran on the host
//     fallback, and fails.  The version is that of the libomptarget.so.<N>
//     the process loaded.  A process
//     whose vendor runtime was told to show no device (CUDA_VISIBLE_DEVICES
//     or ROCR_VISIBLE_DEVICES set and empty, for the cuda and amdgpu
//     plugins) passes too: every plugin of that name, ours and the stock
//     ones libomptarget tries after it, finds no device and runs nothing,
//     so there is no plugin to prove.

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <fcntl.h>
#include <unistd.h>

#define OFFLOADIO_CHECK_EXIT 97

struct offloadio_check_state {
  char prefix[256];
  char expected_dir[PATH_MAX];
  int matches;
  int mismatches;
  char bad_path[PATH_MAX];
  char found_path[PATH_MAX]; // the first matching object, for the log
  int nextgen;               // matching objects that are nextgen plugins
};

static const char *offloadio_basename(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

// 1 when `base` is `stem` itself or `stem` followed by '.' (a version or
// "nextgen" suffix), so that e.g. "cuda" does not match a hypothetical
// "libomptarget.rtl.cudax".
static int offloadio_names(const char *base, const char *stem) {
  size_t len = strlen(stem);
  return strncmp(base, stem, len) == 0 && (base[len] == '.' || base[len] == '\0');
}

// Real path of the directory part of `path` into `out`; 0 on success.
static int offloadio_real_dir(const char *path, char *out) {
  char dir[PATH_MAX];
  const char *slash = strrchr(path, '/');
  if (!slash) {
    // Found without a directory (should not happen for dlopen'ed objects).
    strcpy(dir, ".");
  } else if (slash == path) {
    strcpy(dir, "/");
  } else {
    size_t len = (size_t)(slash - path);
    if (len >= sizeof(dir))
      return -1;
    memcpy(dir, path, len);
    dir[len] = '\0';
  }
  return realpath(dir, out) ? 0 : -1;
}

static int offloadio_visit(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  struct offloadio_check_state *st = (struct offloadio_check_state *)data;
  const char *name = info->dlpi_name;
  if (!name || !*name)
    return 0;
  if (!offloadio_names(offloadio_basename(name), st->prefix))
    return 0;
  if (st->matches++ == 0)
    snprintf(st->found_path, sizeof(st->found_path), "%s", name);
  if (strstr(offloadio_basename(name), ".nextgen."))
    st->nextgen++;
  char real[PATH_MAX];
  if (offloadio_real_dir(name, real) != 0 || strcmp(real, st->expected_dir) != 0) {
    if (st->mismatches++ == 0)
      snprintf(st->bad_path, sizeof(st->bad_path), "%s", name);
  }
  return 0;
}

#ifdef OFFLOADIO_PLUGIN_CHECK_PRELOAD
// The major version of the libomptarget the process loaded (from its file
// name, libomptarget.so.<N>[.<minor>]): 1 + N, so that a loaded runtime of
// unknown version (libomptarget.so) still stops dl_iterate_phdr with 1.
static int offloadio_find_runtime(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  (void)data;
  const char *name = info->dlpi_name;
  if (!name || !offloadio_names(offloadio_basename(name), "libomptarget.so"))
    return 0;
  const char *version = offloadio_basename(name) + strlen("libomptarget.so");
  return 1 + (*version == '.' ? atoi(version + 1) : 0);
}
#endif

static void offloadio_fail(const char *fmt, const char *a, const char *b) {
  fflush(stdout);
  fprintf(stderr, "offload-io plugin check: FAILED: ");
  fprintf(stderr, fmt, a, b);
  fprintf(stderr, "\n");
  fflush(stderr);
  _exit(OFFLOADIO_CHECK_EXIT);
}

// One line per checked program; a single write() to an O_APPEND file, so
// that lines of concurrent test programs do not interleave.
static void offloadio_log(const char *plugin) {
  const char *log = getenv("OFFLOADIO_PLUGIN_CHECK_LOG");
  if (!log || !*log)
    return;
  char exe[PATH_MAX];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  exe[len > 0 ? len : 0] = '\0';
  char line[2 * PATH_MAX + 64];
  int n = snprintf(line, sizeof(line), "%ld %s %s\n", (long)getpid(), exe, plugin);
  int fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0 || n <= 0 || (size_t)n >= sizeof(line) || write(fd, line, (size_t)n) != n)
    offloadio_fail("cannot append to OFFLOADIO_PLUGIN_CHECK_LOG=%s%s", log, "");
  close(fd);
}

__attribute__((destructor)) static void offloadio_plugin_check(void) {
  const char *name = getenv("OFFLOADIO_EXPECT_PLUGIN");
  if (!name || !*name)
    return;
#ifdef OFFLOADIO_PLUGIN_CHECK_PRELOAD
  // Not an offload program (the compiler, FileCheck, the shell): nothing to
  // judge, whatever the environment says.
  int runtime_version = dl_iterate_phdr(offloadio_find_runtime, NULL) - 1;
  if (runtime_version < 0)
    return;
#endif
  const char *dir = getenv("OFFLOADIO_EXPECT_PLUGIN_DIR");
  if (!dir || !*dir)
    offloadio_fail("OFFLOADIO_EXPECT_PLUGIN=%s is set but OFFLOADIO_EXPECT_PLUGIN_DIR is "
                   "not%s",
                   name, "");

  struct offloadio_check_state st;
  memset(&st, 0, sizeof(st));
  if ((size_t)snprintf(st.prefix, sizeof(st.prefix), "libomptarget.rtl.%s", name) >=
      sizeof(st.prefix))
    offloadio_fail("plugin name too long: %s%s", name, "");
  if (!realpath(dir, st.expected_dir))
    offloadio_fail("expected plugin directory %s does not exist%s", dir, "");

  dl_iterate_phdr(offloadio_visit, &st);

#ifdef OFFLOADIO_PLUGIN_CHECK_PRELOAD
  const char *policy = getenv("OMP_TARGET_OFFLOAD");
  if (st.matches == 0 && runtime_version < 18 && policy && strcasecmp(policy, "disabled") == 0) {
    offloadio_log("none(OMP_TARGET_OFFLOAD=disabled)");
    return;
  }
  // LIBOMPTARGET_NEXTGEN_PLUGINS false: libomptarget 16 loads only the
  // legacy plugins, so no nextgen plugin, ours or stock, can run (upstream's
  // mapping/prelock.cpp tests the legacy amdgpu plugin that way). The
  // program passes when it loaded legacy plugins alone, logged as such.
  // 17 and 18 have neither the variable nor legacy plugins (nor ".nextgen"
  // in any plugin's name): there it changes nothing.
  const char *nextgen = runtime_version == 16 ? getenv("LIBOMPTARGET_NEXTGEN_PLUGINS") : NULL;
  if (nextgen && st.matches > 0 && st.nextgen == 0 &&
      (strcasecmp(nextgen, "0") == 0 || strcasecmp(nextgen, "false") == 0 ||
       strcasecmp(nextgen, "no") == 0 || strcasecmp(nextgen, "off") == 0)) {
    char why[PATH_MAX + 64];
    snprintf(why, sizeof(why), "legacy(LIBOMPTARGET_NEXTGEN_PLUGINS=%s):%s", nextgen,
             st.found_path);
    offloadio_log(why);
    return;
  }
  const char *visible = strcmp(name, "cuda") == 0     ? "CUDA_VISIBLE_DEVICES"
                        : strcmp(name, "amdgpu") == 0 ? "ROCR_VISIBLE_DEVICES"
                                                      : NULL;
  const char *shown = visible ? getenv(visible) : NULL;
  if (shown && !*shown) {
    char why[64];
    snprintf(why, sizeof(why), "none(%s empty)", visible);
    offloadio_log(why);
    return;
  }
#endif

  if (st.matches == 0)
    offloadio_fail("no %s* library was loaded (expected one from %s)", st.prefix, dir);
  if (st.mismatches != 0)
    offloadio_fail("plugin loaded from the wrong directory: %s (expected directory %s)", st.bad_path,
                   dir);
  offloadio_log(st.found_path);
}

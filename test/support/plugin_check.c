// SPDX-License-Identifier: Apache-2.0
//
// Linked into every offload-io lit test program.  At exit it checks that the
// offload plugin libomptarget used is the offload-io one:
//
//   * at least one loaded object's file name starts with
//     "libomptarget.rtl.<OFFLOADIO_EXPECT_PLUGIN>", and
//   * every such object was loaded from OFFLOADIO_EXPECT_PLUGIN_DIR.
//
// libomptarget 16 silently falls back to the stock plugin from the LLVM
// library directory when ours is rejected; this turns that into a failure
// (message on stderr, exit status 97).  Without OFFLOADIO_EXPECT_PLUGIN in the
// environment it does nothing, so programs run by hand are unaffected.

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OFFLOADIO_CHECK_EXIT 97

struct offloadio_check_state {
  char prefix[256];
  char expected_dir[PATH_MAX];
  int matches;
  int mismatches;
  char bad_path[PATH_MAX];
};

static const char *offloadio_basename(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
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
  if (strncmp(offloadio_basename(name), st->prefix, strlen(st->prefix)) != 0)
    return 0;
  // Require a separator after the plugin name so that e.g. "cuda" does not
  // match a hypothetical "libomptarget.rtl.cudax".
  char next = offloadio_basename(name)[strlen(st->prefix)];
  if (next != '.' && next != '\0')
    return 0;
  st->matches++;
  char real[PATH_MAX];
  if (offloadio_real_dir(name, real) != 0 || strcmp(real, st->expected_dir) != 0) {
    if (st->mismatches++ == 0)
      snprintf(st->bad_path, sizeof(st->bad_path), "%s", name);
  }
  return 0;
}

static void offloadio_fail(const char *fmt, const char *a, const char *b) {
  fflush(stdout);
  fprintf(stderr, "offload-io plugin check: FAILED: ");
  fprintf(stderr, fmt, a, b);
  fprintf(stderr, "\n");
  fflush(stderr);
  _exit(OFFLOADIO_CHECK_EXIT);
}

__attribute__((destructor)) static void offloadio_plugin_check(void) {
  const char *name = getenv("OFFLOADIO_EXPECT_PLUGIN");
  if (!name || !*name)
    return;
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

  if (st.matches == 0)
    offloadio_fail("no %s* library was loaded (expected one from %s)", st.prefix, dir);
  if (st.mismatches != 0)
    offloadio_fail("plugin loaded from the wrong directory: %s (expected directory %s)", st.bad_path,
                   dir);
}

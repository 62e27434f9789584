// SPDX-License-Identifier: Apache-2.0
//
// Helpers shared by the stand-alone benchmark programs in tools/bench:
// timing, medians, pseudo-random values, and which offload plugin libomptarget
// loaded (it silently falls back to the stock plugin when ours is rejected, so
// a benchmark must say which one it measured).
#ifndef OFFLOADIO_BENCH_UTIL_H
#define OFFLOADIO_BENCH_UTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "../targets/offload-targets.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline double benchNow(void) {
  struct timespec T;
  clock_gettime(CLOCK_MONOTONIC, &T);
  return (double)T.tv_sec + (double)T.tv_nsec * 1e-9;
}

/// Print "PROGRAM: WHAT: <errno's text, or failed>" and exit with 1.
static inline void benchDie(const char *Program, const char *What) {
  fprintf(stderr, "%s: %s: %s\n", Program, What,
          errno ? strerror(errno) : "failed");
  exit(1);
}

/// CPU seconds of the calling thread: on a shared machine, what a call
/// itself spent, without the time it waited for a core.
static inline double benchThreadCpuNow(void) {
  struct timespec T;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &T);
  return (double)T.tv_sec + (double)T.tv_nsec * 1e-9;
}

/// splitmix64's finaliser: a well-mixed 64-bit value from \p Z, for
/// reproducible pseudo-random data and sizes.
static inline uint64_t benchMix(uint64_t Z) {
  Z = (Z ^ (Z >> 30)) * 0xbf58476d1ce4e5b9ull;
  Z = (Z ^ (Z >> 27)) * 0x94d049bb133111ebull;
  return Z ^ (Z >> 31);
}

static int benchCmpDouble(const void *A, const void *B) {
  double X = *(const double *)A, Y = *(const double *)B;
  return X < Y ? -1 : X > Y;
}

/// Sorts \p V and returns its median.
static inline double benchMedian(double *V, int N) {
  qsort(V, (size_t)N, sizeof(double), benchCmpDouble);
  return N % 2 ? V[N / 2] : (V[N / 2 - 1] + V[N / 2]) / 2;
}

struct BenchPluginScan {
  const char *Prefix; ///< "libomptarget.rtl.x86_64" etc.
  char Path[PATH_MAX];
  int OffloadIO;
};

static int benchVisitObject(struct dl_phdr_info *Info, size_t Size,
                            void *Data) {
  (void)Size;
  struct BenchPluginScan *S = (struct BenchPluginScan *)Data;
  const char *Name = Info->dlpi_name;
  if (!Name || !*Name || S->Path[0])
    return 0;
  const char *Base = strrchr(Name, '/');
  Base = Base ? Base + 1 : Name;
  size_t L = strlen(S->Prefix);
  if (strncmp(Base, S->Prefix, L) || Base[L] != '.')
    return 0;
  void *H = dlopen(Name, RTLD_LAZY | RTLD_NOLOAD);
  // Ours defines the extensions' discovery entry point (ExtensionABI.h);
  // the benchmarks need no more of it than that.
  S->OffloadIO = H && dlsym(H, "__tgt_rtl_ompx_extensions") != NULL;
  if (H)
    dlclose(H);
  if (!realpath(Name, S->Path))
    snprintf(S->Path, sizeof(S->Path), "%s", Name);
  return 0;
}

/// Prints "plugin: <file> (offload-io|stock)" for the loaded plugin whose
/// file name starts with \p Prefix ("libomptarget.rtl.x86_64").
static inline void benchPrintPlugin(const char *Prefix) {
  struct BenchPluginScan S;
  memset(&S, 0, sizeof(S));
  S.Prefix = Prefix;
  dl_iterate_phdr(benchVisitObject, &S);
  if (!S.Path[0])
    printf("plugin: none named %s loaded\n", Prefix);
  else
    printf("plugin: %s (%s)\n", S.Path, S.OffloadIO ? "offload-io" : "stock");
}

/// The plugin file prefix ("libomptarget.rtl.x86_64") of the offload
/// triple in the compile-time BENCH_TARGET macro set by the run scripts
/// (default: the host's), from the one list of targets.
static inline const char *benchPluginPrefix(void) {
  static char Prefix[64];
#ifdef BENCH_TARGET
  const OffloadTarget *T = offloadTargetOf(BENCH_TARGET);
#else
  const OffloadTarget *T = offloadHostTarget();
#endif
  snprintf(Prefix, sizeof(Prefix), "libomptarget.rtl.%s",
           T ? T->Plugin : "unknown");
  return Prefix;
}
#define BENCH_PLUGIN_PREFIX benchPluginPrefix()

#endif // OFFLOADIO_BENCH_UTIL_H

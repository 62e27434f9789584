// SPDX-License-Identifier: Apache-2.0
//
// memcpy-bench: host <-> device transfer figures through libomptarget.
//
//   - omp_target_memcpy H2D and D2H of a large buffer (default 2 GiB) from
//     plain malloc memory, then from the same memory after
//     llvm_omp_target_lock_mem (and what the lock and unlock cost; where
//     that returns NULL, as libomptarget 18.1.8's always does, through
//     libompx_io's ompx_target_lock_mem when the library can be loaded);
//   - 64-byte omp_target_memcpy latency, H2D and D2H;
//   - empty `#pragma omp target` region latency.
//
// Run through run-memcpy-bench.sh, which runs it with our plugin and with
// the stock LLVM 16 one. Lines starting with "RESULT " are for the script.
#include "bench-util.h"

#include <dlfcn.h>
#include <errno.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *llvm_omp_target_lock_mem(void *Ptr, size_t Size, int Device);
void llvm_omp_target_unlock_mem(void *Ptr, int Device);

typedef void *(*LockFnTy)(void *, size_t, int);
typedef int (*OmpxUnlockFnTy)(void *, int);

/// libompx_io's lock and unlock, or NULLs when the library cannot be
/// loaded (the stock plugins' runs); looked up rather than linked so that
/// one binary serves both runs.
static void findOmpxLock(LockFnTy *Lock, OmpxUnlockFnTy *Unlock) {
  *Lock = NULL;
  *Unlock = NULL;
  void *Library = dlopen("libompx_io.so.1", RTLD_NOW);
  if (!Library)
    return;
  *Lock = (LockFnTy)dlsym(Library, "ompx_target_lock_mem");
  *Unlock = (OmpxUnlockFnTy)dlsym(Library, "ompx_target_unlock_mem");
  if (!*Lock || !*Unlock)
    *Lock = NULL;
}

#define ROUNDS 5

static int Initial;

static int parseSize(const char *S, size_t *Out) {
  char *End;
  errno = 0;
  unsigned long long N = strtoull(S, &End, 10);
  if (errno || End == S)
    return -1;
  size_t Scale = 1;
  switch (*End) {
  case 'k':
  case 'K':
    Scale = 1ull << 10;
    ++End;
    break;
  case 'm':
  case 'M':
    Scale = 1ull << 20;
    ++End;
    break;
  case 'g':
  case 'G':
    Scale = 1ull << 30;
    ++End;
    break;
  default:
    break;
  }
  if (*End == 'i' && End[1] == 'B')
    End += 2;
  if (*End || N == 0)
    return -1;
  *Out = (size_t)N * Scale;
  return 0;
}

/// GB/s of Reps copies of Size bytes; best in *Best, median returned.
static double bandwidth(void *Dst, void *Src, size_t Size, int DstDev,
                        int SrcDev, int Reps, double *Best) {
  double Rates[16];
  for (int R = 0; R < Reps; ++R) {
    double T0 = benchNow();
    if (omp_target_memcpy(Dst, Src, Size, 0, 0, DstDev, SrcDev)) {
      fprintf(stderr, "memcpy-bench: omp_target_memcpy of %zu bytes failed\n",
              Size);
      exit(1);
    }
    Rates[R] = (double)Size / (benchNow() - T0) / 1e9;
  }
  double Median = benchMedian(Rates, Reps);
  *Best = Rates[Reps - 1];
  return Median;
}

/// Median microseconds of one call of Op over ROUNDS rounds of at least
/// 0.1 s (or MaxPerRound calls) each.
typedef void (*OpFn)(void *);
static double latency(OpFn Op, void *Arg, long MaxPerRound) {
  double Us[ROUNDS];
  for (int W = 0; W < 100; ++W)
    Op(Arg);
  for (int R = 0; R < ROUNDS; ++R) {
    long N = 0;
    double T0 = benchNow(), T;
    do {
      for (int I = 0; I < 64; ++I)
        Op(Arg);
      N += 64;
      T = benchNow() - T0;
    } while (T < 0.1 && N < MaxPerRound);
    Us[R] = T * 1e6 / (double)N;
  }
  return benchMedian(Us, ROUNDS);
}

struct SmallCopy {
  char *Dev;
  char *Host;
};

static void copyH2D(void *A) {
  struct SmallCopy *C = A;
  if (omp_target_memcpy(C->Dev, C->Host, 64, 0, 0, 0, Initial))
    exit(1);
}

static void copyD2H(void *A) {
  struct SmallCopy *C = A;
  if (omp_target_memcpy(C->Host, C->Dev, 64, 0, 0, Initial, 0))
    exit(1);
}

static void emptyTarget(void *A) {
  (void)A;
#pragma omp target device(0)
  {}
}

int main(int Argc, char **Argv) {
  size_t Size = 2ull << 30;
  int Reps = 3;
  for (int I = 1; I < Argc; ++I) {
    if (!strcmp(Argv[I], "--size") && I + 1 < Argc) {
      if (parseSize(Argv[++I], &Size)) {
        fprintf(stderr,
                "memcpy-bench: --size: '%s' is not a size (e.g. 256M, "
                "2G)\n",
                Argv[I]);
        return 2;
      }
    } else if (!strcmp(Argv[I], "--repeat") && I + 1 < Argc) {
      Reps = atoi(Argv[++I]);
      if (Reps < 1 || Reps > 16) {
        fprintf(stderr, "memcpy-bench: --repeat: 1 to 16\n");
        return 2;
      }
    } else if (!strcmp(Argv[I], "-h") || !strcmp(Argv[I], "--help")) {
      printf("usage: memcpy-bench [--size BYTES (2G)] [--repeat N (3)]\n");
      return 0;
    } else {
      fprintf(stderr, "memcpy-bench: bad argument '%s' (see --help)\n",
              Argv[I]);
      return 2;
    }
  }
  if (omp_get_num_devices() < 1) {
    fprintf(stderr, "memcpy-bench: no offload device\n");
    return 1;
  }
  Initial = omp_get_initial_device();
  emptyTarget(NULL); // Initialises device 0 and loads the image.
  benchPrintPlugin(BENCH_PLUGIN_PREFIX);

  char *Host = malloc(Size);
  char *Dev = omp_target_alloc(Size, 0);
  if (!Host || !Dev) {
    fprintf(stderr, "memcpy-bench: cannot allocate 2 x %zu bytes\n", Size);
    return 1;
  }
  memset(Host, 0x5a, Size);
  // First touch of fresh device memory (page faults on the host plugin) is
  // not part of the figures.
  omp_target_memcpy(Dev, Host, Size, 0, 0, 0, Initial);
  omp_target_memcpy(Host, Dev, Size, 0, 0, Initial, 0);

  double H2DBest, D2HBest, LH2DBest = 0, LD2HBest = 0;
  double H2D = bandwidth(Dev, Host, Size, 0, Initial, Reps, &H2DBest);
  double D2H = bandwidth(Host, Dev, Size, Initial, 0, Reps, &D2HBest);
  printf("%zu MiB from malloc memory: H2D %.2f GB/s, D2H %.2f GB/s (median "
         "of %d; best %.2f / %.2f)\n",
         Size >> 20, H2D, D2H, Reps, H2DBest, D2HBest);

  double T0 = benchNow();
  void *Locked = llvm_omp_target_lock_mem(Host, Size, 0);
  double LockMs = (benchNow() - T0) * 1e3;
  LockFnTy OmpxLock;
  OmpxUnlockFnTy OmpxUnlock = NULL;
  if (!Locked) {
    findOmpxLock(&OmpxLock, &OmpxUnlock);
    if (OmpxLock) {
      T0 = benchNow();
      Locked = OmpxLock(Host, Size, 0);
      LockMs = (benchNow() - T0) * 1e3;
      printf("llvm_omp_target_lock_mem returned NULL: %s\n",
             Locked ? "locked through ompx_target_lock_mem" : "so did "
                                                              "ompx_target_lock_mem");
      if (!Locked)
        OmpxUnlock = NULL;
    }
  }
  double LH2D = 0, LD2H = 0, UnlockMs = 0;
  if (!Locked) {
    printf("llvm_omp_target_lock_mem of %zu MiB failed: no locked figures\n",
           Size >> 20);
  } else {
    LH2D = bandwidth(Dev, Host, Size, 0, Initial, Reps, &LH2DBest);
    LD2H = bandwidth(Host, Dev, Size, Initial, 0, Reps, &LD2HBest);
    T0 = benchNow();
    if (OmpxUnlock)
      OmpxUnlock(Host, 0);
    else
      llvm_omp_target_unlock_mem(Host, 0);
    UnlockMs = (benchNow() - T0) * 1e3;
    printf("%zu MiB locked (lock %.1f ms, unlock %.1f ms, %s pointer): H2D "
           "%.2f GB/s, D2H %.2f GB/s (best %.2f / %.2f)\n",
           Size >> 20, LockMs, UnlockMs,
           Locked == (void *)Host ? "same" : "different", LH2D, LD2H, LH2DBest,
           LD2HBest);
  }
  omp_target_free(Dev, 0);
  free(Host);

  struct SmallCopy C = {omp_target_alloc(64, 0), malloc(64)};
  memset(C.Host, 1, 64);
  double SmallH2D = latency(copyH2D, &C, 1000000);
  double SmallD2H = latency(copyD2H, &C, 1000000);
  double Empty = latency(emptyTarget, NULL, 1000000);
  printf("64-byte omp_target_memcpy: H2D %.3f us, D2H %.3f us\n", SmallH2D,
         SmallD2H);
  printf("empty target region: %.3f us\n", Empty);
  printf("RESULT size_mib=%zu h2d_gbps=%.3f d2h_gbps=%.3f "
         "locked_h2d_gbps=%.3f locked_d2h_gbps=%.3f lock_ms=%.3f "
         "unlock_ms=%.3f memcpy64_h2d_us=%.4f memcpy64_d2h_us=%.4f "
         "target_empty_us=%.4f\n",
         Size >> 20, H2D, D2H, LH2D, LD2H, LockMs, UnlockMs, SmallH2D, SmallD2H,
         Empty);
  omp_target_free(C.Dev, 0);
  free(C.Host);
  return 0;
}

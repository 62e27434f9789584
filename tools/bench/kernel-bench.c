// SPDX-License-Identifier: Apache-2.0
//
// kernel-bench: how long kernels take through libomptarget, and with which
// launch geometry they ran.
//
//   - nested-generic: `target teams distribute` over 4096 rows; each row's
//     sequential part picks a scale, then a nested `parallel for` runs over
//     its 4096 columns;
//   - nested-generic-spmd: the same kernel without the statement that keeps
//     it generic (KEEP_GENERIC), so that clang's OpenMP optimizer turns it
//     into a generic-SPMD kernel at -O2 (the runner's level; at -O0 both
//     stay generic);
//   - distribute-1024, distribute-1000000: `target teams distribute` alone,
//     kept generic;
//   - dot-<n>: a `target teams distribute parallel for reduction(+:)` dot
//     product of two device vectors of n doubles (2^25 and 2^28 by default);
//   - copy, scale, add, triad: the STREAM kernels over device arrays of
//     --size doubles (2^27 by default).
//
// Each kernel runs once to warm up, then --repeat times; the median is
// reported. Team 0 thread 0 writes omp_get_num_teams() and
// omp_get_num_threads() to Geo (for the nested kernels, the threads of the
// nested parallel region; for distribute-* the team's own thread, 1).
// Output: one line per kernel,
//   kernel <name>: <ms> ms, <GB/s> GB/s, teams <T> threads <N>
// where GB/s is the bytes the kernel reads and writes over its median time.
// Run through run-kernel-bench.sh, which runs it with our plugin and with
// the stock LLVM 16 one.
#include "bench-util.h"

#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REPEAT 64
#define MAX_DOT_SIZES 8
#define NESTED_ROWS 4096
#define NESTED_COLS 4096
#define STREAM_SCALAR 3.0

/// An empty statement that clang's OpenMP optimizer cannot look into. In
/// the sequential part of a `teams distribute` kernel it stops the rewrite
/// into generic-SPMD mode (checked with -O2 -Rpass=openmp-opt: without it
/// clang-16 reports "Transformed generic-mode kernel to SPMD-mode"), so the
/// kernel launches in generic mode, with its main thread and worker state
/// machine.
#define KEEP_GENERIC() __asm__ volatile("" ::: "memory")

/// Teams and threads, written by team 0 thread 0 of the kernel that ran
/// last. Mapped once before the first kernel, so that launches do not copy
/// it; read back with `target update`.
static int Geo[2];

/// Team 0 thread 0 records the geometry it runs in.
#define RECORD_GEOMETRY()                                                      \
  do {                                                                         \
    if (omp_get_team_num() == 0 && omp_get_thread_num() == 0) {                \
      Geo[0] = omp_get_num_teams();                                            \
      Geo[1] = omp_get_num_threads();                                          \
    }                                                                          \
  } while (0)

struct ArgsTy {
  double *A, *B, *C;
  long N;
  double Sum;
};

typedef void (*KernelFn)(struct ArgsTy *);

static void nestedGeneric(struct ArgsTy *Args) {
  const double *In = Args->A;
  double *Out = Args->B;
#pragma omp target teams distribute is_device_ptr(In, Out)
  for (long R = 0; R < NESTED_ROWS; ++R) {
    double Scale = 1.0 / (double)(R + 1);
    KEEP_GENERIC();
#pragma omp parallel for
    for (long C = 0; C < NESTED_COLS; ++C) {
      Out[R * NESTED_COLS + C] = In[R * NESTED_COLS + C] * Scale + (double)C;
      if (R == 0 && C == 0)
        RECORD_GEOMETRY();
    }
  }
}

static void nestedGenericSPMD(struct ArgsTy *Args) {
  const double *In = Args->A;
  double *Out = Args->B;
#pragma omp target teams distribute is_device_ptr(In, Out)
  for (long R = 0; R < NESTED_ROWS; ++R) {
    double Scale = 1.0 / (double)(R + 1);
#pragma omp parallel for
    for (long C = 0; C < NESTED_COLS; ++C) {
      Out[R * NESTED_COLS + C] = In[R * NESTED_COLS + C] * Scale + (double)C;
      if (R == 0 && C == 0)
        RECORD_GEOMETRY();
    }
  }
}

static void distribute(struct ArgsTy *Args) {
  const double *In = Args->A;
  double *Out = Args->B;
  long N = Args->N;
#pragma omp target teams distribute is_device_ptr(In, Out)
  for (long I = 0; I < N; ++I) {
    KEEP_GENERIC();
    Out[I] = In[I] * 2.0 + 1.0;
    if (I == 0)
      RECORD_GEOMETRY();
  }
}

static void dot(struct ArgsTy *Args) {
  const double *X = Args->A, *Y = Args->B;
  long N = Args->N;
  double Sum = 0.0;
#pragma omp target teams distribute parallel for reduction(+ : Sum) \
    is_device_ptr(X, Y)
  for (long I = 0; I < N; ++I) {
    Sum += X[I] * Y[I];
    if (I == 0)
      RECORD_GEOMETRY();
  }
  Args->Sum = Sum;
}

static void streamCopy(struct ArgsTy *Args) {
  const double *A = Args->A;
  double *C = Args->C;
  long N = Args->N;
#pragma omp target teams distribute parallel for is_device_ptr(A, C)
  for (long I = 0; I < N; ++I) {
    C[I] = A[I];
    if (I == 0)
      RECORD_GEOMETRY();
  }
}

static void streamScale(struct ArgsTy *Args) {
  double *B = Args->B;
  const double *C = Args->C;
  long N = Args->N;
  double S = STREAM_SCALAR;
#pragma omp target teams distribute parallel for is_device_ptr(B, C)
  for (long I = 0; I < N; ++I) {
    B[I] = S * C[I];
    if (I == 0)
      RECORD_GEOMETRY();
  }
}

static void streamAdd(struct ArgsTy *Args) {
  const double *A = Args->A, *B = Args->B;
  double *C = Args->C;
  long N = Args->N;
#pragma omp target teams distribute parallel for is_device_ptr(A, B, C)
  for (long I = 0; I < N; ++I) {
    C[I] = A[I] + B[I];
    if (I == 0)
      RECORD_GEOMETRY();
  }
}

static void streamTriad(struct ArgsTy *Args) {
  double *A = Args->A;
  const double *B = Args->B, *C = Args->C;
  long N = Args->N;
  double S = STREAM_SCALAR;
#pragma omp target teams distribute parallel for is_device_ptr(A, B, C)
  for (long I = 0; I < N; ++I) {
    A[I] = B[I] + S * C[I];
    if (I == 0)
      RECORD_GEOMETRY();
  }
}

/// Fills N doubles of device memory with V, on the device, so that first
/// touches (page faults on the host plugin) happen before any timing.
static void fill(double *P, long N, double V) {
#pragma omp target teams distribute parallel for is_device_ptr(P)
  for (long I = 0; I < N; ++I)
    P[I] = V;
}

static double *deviceAlloc(long N, int Dev) {
  double *P = omp_target_alloc((size_t)N * sizeof(double), Dev);
  if (!P) {
    fprintf(stderr, "kernel-bench: cannot allocate %ld doubles on device %d\n",
            N, Dev);
    exit(1);
  }
  return P;
}

static double readDouble(const double *DevPtr, long Index, int Dev) {
  double V = 0.0;
  if (omp_target_memcpy(&V, DevPtr, sizeof(V), 0, Index * sizeof(double),
                        omp_get_initial_device(), Dev)) {
    fprintf(stderr, "kernel-bench: omp_target_memcpy from device failed\n");
    exit(1);
  }
  return V;
}

static void expectNear(const char *What, double Got, double Want) {
  double Diff = Got > Want ? Got - Want : Want - Got;
  if (Diff > 1e-9 * (Want < 0 ? -Want : Want) + 1e-12) {
    fprintf(stderr, "kernel-bench: %s: got %.17g, expected %.17g\n", What,
            Got, Want);
    exit(1);
  }
}

/// Runs Fn once to warm up and Reps times timed, and prints its line.
static void runKernel(const char *Name, KernelFn Fn, struct ArgsTy *Args,
                      double Bytes, int Reps) {
  double Ms[MAX_REPEAT];
  Geo[0] = Geo[1] = -1;
#pragma omp target update to(Geo)
  Fn(Args);
  for (int R = 0; R < Reps; ++R) {
    double T0 = benchNow();
    Fn(Args);
    Ms[R] = (benchNow() - T0) * 1e3;
  }
#pragma omp target update from(Geo)
  double Median = benchMedian(Ms, Reps);
  printf("kernel %s: %.3f ms, %.2f GB/s, teams %d threads %d\n", Name, Median,
         Bytes / (Median * 1e-3) / 1e9, Geo[0], Geo[1]);
  fflush(stdout);
}

/// "2^k" for powers of two from 2^11 up, the decimal number otherwise.
static void countName(char *Buf, size_t Size, long N) {
  int Log = 0;
  while (Log < 62 && (1L << Log) < N)
    ++Log;
  if (N >= 2048 && (1L << Log) == N)
    snprintf(Buf, Size, "2^%d", Log);
  else
    snprintf(Buf, Size, "%ld", N);
}

/// Parses an element count: decimal with an optional K, M or G suffix
/// (powers of 1024), or 2^k.
static int parseCount(const char *S, long *Out) {
  char *End;
  errno = 0;
  if (!strncmp(S, "2^", 2)) {
    long Log = strtol(S + 2, &End, 10);
    if (errno || End == S + 2 || *End || Log < 0 || Log > 40)
      return -1;
    *Out = 1L << Log;
    return 0;
  }
  long long N = strtoll(S, &End, 10);
  if (errno || End == S || N <= 0)
    return -1;
  long Scale = 1;
  if (*End == 'k' || *End == 'K')
    Scale = 1L << 10;
  else if (*End == 'm' || *End == 'M')
    Scale = 1L << 20;
  else if (*End == 'g' || *End == 'G')
    Scale = 1L << 30;
  if (Scale != 1)
    ++End;
  if (*End || N > (1LL << 40) / Scale)
    return -1;
  *Out = (long)N * Scale;
  return 0;
}

static void usage(FILE *F) {
  fprintf(F, "usage: kernel-bench [--size N (2^27)] [--repeat R (5)] "
             "[--dot-sizes N,N,... (2^25,2^28)]\n"
             "  counts are doubles: 1048576, 1M, 2^20\n");
}

int main(int Argc, char **Argv) {
  long StreamN = 1L << 27;
  long DotSizes[MAX_DOT_SIZES] = {1L << 25, 1L << 28};
  int NumDot = 2;
  int Reps = 5;
  for (int I = 1; I < Argc; ++I) {
    if (!strcmp(Argv[I], "--size") && I + 1 < Argc) {
      if (parseCount(Argv[++I], &StreamN)) {
        fprintf(stderr, "kernel-bench: --size: '%s' is not a count\n",
                Argv[I]);
        return 2;
      }
    } else if (!strcmp(Argv[I], "--repeat") && I + 1 < Argc) {
      Reps = atoi(Argv[++I]);
      if (Reps < 1 || Reps > MAX_REPEAT) {
        fprintf(stderr, "kernel-bench: --repeat: 1 to %d\n", MAX_REPEAT);
        return 2;
      }
    } else if (!strcmp(Argv[I], "--dot-sizes") && I + 1 < Argc) {
      char *List = Argv[++I];
      NumDot = 0;
      for (char *Tok = strtok(List, ","); Tok; Tok = strtok(NULL, ",")) {
        if (NumDot == MAX_DOT_SIZES || parseCount(Tok, &DotSizes[NumDot])) {
          fprintf(stderr,
                  "kernel-bench: --dot-sizes: up to %d counts, got '%s'\n",
                  MAX_DOT_SIZES, Tok);
          return 2;
        }
        ++NumDot;
      }
    } else if (!strcmp(Argv[I], "-h") || !strcmp(Argv[I], "--help")) {
      usage(stdout);
      return 0;
    } else {
      fprintf(stderr, "kernel-bench: bad argument '%s'\n", Argv[I]);
      usage(stderr);
      return 2;
    }
  }
  if (omp_get_num_devices() < 1) {
    fprintf(stderr, "kernel-bench: no offload device\n");
    return 1;
  }
  int Dev = omp_get_default_device();
  // Loads the image and maps Geo for every kernel after it.
#pragma omp target enter data map(to : Geo)
  benchPrintPlugin(BENCH_PLUGIN_PREFIX);
  printf("kernel-bench: device %d of %d, median of %d runs after 1 warm-up\n",
         Dev, omp_get_num_devices(), Reps);

  struct ArgsTy Args;
  memset(&Args, 0, sizeof(Args));
  long NestedN = (long)NESTED_ROWS * NESTED_COLS;
  long Largest = NestedN > 1000000 ? NestedN : 1000000;
  Args.A = deviceAlloc(Largest, Dev);
  Args.B = deviceAlloc(Largest, Dev);
  fill(Args.A, Largest, 1.0);
  fill(Args.B, Largest, 0.0);
  runKernel("nested-generic", nestedGeneric, &Args, 16.0 * NestedN, Reps);
  runKernel("nested-generic-spmd", nestedGenericSPMD, &Args, 16.0 * NestedN,
            Reps);
  long Last = NestedN - NESTED_COLS + 7;
  expectNear("nested result", readDouble(Args.B, Last, Dev),
             1.0 / NESTED_ROWS + 7.0);
  const long DistSizes[2] = {1024, 1000000};
  for (int K = 0; K < 2; ++K) {
    char Name[64];
    Args.N = DistSizes[K];
    snprintf(Name, sizeof(Name), "distribute-%ld", DistSizes[K]);
    runKernel(Name, distribute, &Args, 16.0 * Args.N, Reps);
    expectNear(Name, readDouble(Args.B, Args.N - 1, Dev), 3.0);
  }
  omp_target_free(Args.A, Dev);
  omp_target_free(Args.B, Dev);

  for (int K = 0; K < NumDot; ++K) {
    char Name[64], Count[32];
    Args.N = DotSizes[K];
    Args.A = deviceAlloc(Args.N, Dev);
    Args.B = deviceAlloc(Args.N, Dev);
    fill(Args.A, Args.N, 1.0);
    fill(Args.B, Args.N, 2.0);
    countName(Count, sizeof(Count), Args.N);
    snprintf(Name, sizeof(Name), "dot-%s", Count);
    runKernel(Name, dot, &Args, 16.0 * Args.N, Reps);
    // Every partial sum is an integer below 2^53: exact in any order.
    expectNear(Name, Args.Sum, 2.0 * Args.N);
    omp_target_free(Args.A, Dev);
    omp_target_free(Args.B, Dev);
  }

  char Count[32];
  countName(Count, sizeof(Count), StreamN);
  printf("kernel-bench: STREAM arrays of %s doubles (%.1f MiB each)\n", Count,
         StreamN * 8.0 / (1 << 20));
  Args.N = StreamN;
  Args.A = deviceAlloc(StreamN, Dev);
  Args.B = deviceAlloc(StreamN, Dev);
  Args.C = deviceAlloc(StreamN, Dev);
  fill(Args.A, StreamN, 1.0);
  fill(Args.B, StreamN, 2.0);
  fill(Args.C, StreamN, 0.0);
  runKernel("copy", streamCopy, &Args, 16.0 * StreamN, Reps);
  runKernel("scale", streamScale, &Args, 16.0 * StreamN, Reps);
  runKernel("add", streamAdd, &Args, 24.0 * StreamN, Reps);
  runKernel("triad", streamTriad, &Args, 24.0 * StreamN, Reps);
  // Each kernel gives the same result every time it runs: c = a = 1, then
  // b = s, c = 1 + s, a = s + s(1 + s).
  const double S = STREAM_SCALAR;
  expectNear("STREAM a", readDouble(Args.A, StreamN - 1, Dev), S + S * (1 + S));
  expectNear("STREAM b", readDouble(Args.B, StreamN / 2, Dev), S);
  expectNear("STREAM c", readDouble(Args.C, 0, Dev), 1 + S);
  omp_target_free(Args.A, Dev);
  omp_target_free(Args.B, Dev);
  omp_target_free(Args.C, Dev);
#pragma omp target exit data map(delete : Geo)
  return 0;
}

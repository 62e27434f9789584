// The same kernels launched many times in a row with arguments, team counts
// and thread limits that change from one launch to the next, or stay the
// same, interleaved with other kernels, from one thread and from several
// (nowait/repeated-launches.c does the same with nowait tasks). The CUDA plugin replays a kernel launched again
// on a stream from a graph and updates the graph when a launch differs;
// every launch must still run with exactly its own arguments and geometry.
// The same program runs with graphs off, with the answers unchanged.
//
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic 2>&1 | %fcheck-generic
// RUN: env OFFLOADIO_CUDA_GRAPHS=off %libomptarget-run-generic 2>&1 \
// RUN:   | %fcheck-generic

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include "offload_test.h"

#define N 4096
#define ROUNDS 200

/// Kernel A: y[i] = a * x[i] + b, with a team count and thread limit of the
/// caller's choosing.
static void axpb(int *Y, const int *X, int A, int B, int Teams, int Threads,
                 int Dev) {
#pragma omp target teams distribute parallel for num_teams(Teams)             \
    thread_limit(Threads) is_device_ptr(Y, X) device(Dev)
  for (int I = 0; I < N; ++I)
    Y[I] = A * X[I] + B;
}

/// Kernel B: one scalar written by a plain target region (generic mode).
static int scalar(int V, int Dev) {
  int R = 0;
#pragma omp target map(from : R) device(Dev)
  R = V * 3 + 1;
  return R;
}

/// Check y against a * x + b; count mismatches.
static int check(const int *Y, int A, int B) {
  int Bad = 0;
  for (int I = 0; I < N; ++I)
    Bad += Y[I] != A * I + B;
  return Bad;
}

int main(void) {
  int Dev = omp_get_default_device();
  int *X = omp_target_alloc(N * sizeof(int), Dev);
  int *Y[2] = {omp_target_alloc(N * sizeof(int), Dev),
               omp_target_alloc(N * sizeof(int), Dev)};
  int *Host = malloc(N * sizeof(int));
  if (!X || !Y[0] || !Y[1] || !Host)
    return 1;
  for (int I = 0; I < N; ++I)
    Host[I] = I;
  omp_target_memcpy(X, Host, N * sizeof(int), 0, 0, Dev,
                    omp_get_initial_device());

  // One thread: runs of identical launches, then changes of one thing at a
  // time (a scalar, a pointer, the team count, the thread limit), with
  // another kernel in between now and then.
  int Bad = 0, BadScalar = 0;
  for (int R = 0; R < ROUNDS; ++R) {
    int A = R / 10, B = R % 7;
    int *Out = Y[(R / 3) % 2];
    int Teams = 1 + (R / 5) % 4, Threads = 32 << ((R / 7) % 3);
    axpb(Out, X, A, B, Teams, Threads, Dev);
    omp_target_memcpy(Host, Out, N * sizeof(int), 0, 0,
                      omp_get_initial_device(), Dev);
    Bad += check(Host, A, B);
    if (R % 4 == 0)
      BadScalar += scalar(R, Dev) != R * 3 + 1;
  }
  printf("one thread: %d wrong elements, %d wrong scalars\n", Bad,
         BadScalar);

  // Several threads, each with its own output, launching the same kernels
  // with their own arguments at the same time.
  int ThreadBad = 0;
#pragma omp parallel num_threads(4) reduction(+ : ThreadBad)
  {
    int T = omp_get_thread_num();
    int *Out = omp_target_alloc(N * sizeof(int), Dev);
    int *Mine = malloc(N * sizeof(int));
    for (int R = 0; R < 50 && Out && Mine; ++R) {
      int A = T + 1, B = R;
      if (T % 2) {
#pragma omp target teams distribute parallel for is_device_ptr(Out, X)        \
    device(Dev)
        for (int I = 0; I < N; ++I)
          Out[I] = A * X[I] + B;
      } else {
        axpb(Out, X, A, B, 2, 64, Dev);
      }
      omp_target_memcpy(Mine, Out, N * sizeof(int), 0, 0,
                        omp_get_initial_device(), Dev);
      ThreadBad += check(Mine, A, B);
    }
    ThreadBad += !Out || !Mine;
    free(Mine);
    omp_target_free(Out, Dev);
  }
  printf("four threads: %d wrong elements\n", ThreadBad);

  omp_target_free(X, Dev);
  omp_target_free(Y[0], Dev);
  omp_target_free(Y[1], Dev);
  free(Host);
  return Bad || BadScalar || ThreadBad;
}

// CHECK: one thread: 0 wrong elements, 0 wrong scalars
// CHECK: four threads: 0 wrong elements

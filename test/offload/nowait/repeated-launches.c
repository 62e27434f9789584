// One kernel launched as many nowait tasks in a row, each with its own
// scalar and output, waited for in batches: the CUDA plugin replays a kernel
// launched again on a stream from a graph and updates it when the arguments
// differ, and a stream's launches may come from different helper threads.
// Every task must run with exactly its own arguments. The same program runs
// with graphs off.
//
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic 2>&1 | %fcheck-generic
// RUN: env OFFLOADIO_CUDA_GRAPHS=off %libomptarget-run-generic 2>&1 \
// RUN:   | %fcheck-generic

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include "offload_test.h"

#define N 1024
#define TASKS 16
#define BATCHES 20

int main(void) {
  int Dev = omp_get_default_device();
  int *Out[TASKS];
  for (int T = 0; T < TASKS; ++T)
    if (!(Out[T] = omp_target_alloc(N * sizeof(int), Dev)))
      return 1;
  int *Host = malloc(N * sizeof(int));
  int Bad = 0;
  for (int Batch = 0; Batch < BATCHES; ++Batch) {
    for (int T = 0; T < TASKS; ++T) {
      int *O = Out[T];
      int V = Batch * 100 + T;
#pragma omp target teams distribute parallel for is_device_ptr(O) device(Dev) \
    nowait firstprivate(V)
      for (int I = 0; I < N; ++I)
        O[I] = V + I;
    }
#pragma omp taskwait
    for (int T = 0; T < TASKS; ++T) {
      omp_target_memcpy(Host, Out[T], N * sizeof(int), 0, 0,
                        omp_get_initial_device(), Dev);
      for (int I = 0; I < N; ++I)
        Bad += Host[I] != Batch * 100 + T + I;
    }
  }
  printf("%d tasks: %d wrong elements\n", TASKS * BATCHES, Bad);
  for (int T = 0; T < TASKS; ++T)
    omp_target_free(Out[T], Dev);
  free(Host);
  return Bad != 0;
}

// CHECK: 320 tasks: 0 wrong elements

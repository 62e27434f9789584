// Launch geometry and kernel arguments against LLVM 16's own amdgpu plugin:
// the same program, run on the HSA emulation with dispatches completed
// unexecuted (HSA_EMU_DISPATCH=noop), once on our plugin and once on the
// stock one; HSA_EMU_TRACE prints every dispatch packet (grid, work-group,
// segment sizes) and the layout of its kernel arguments, which must be
// identical line for line (values aside: pointers differ between runs).
// The kernels cover SPMD and generic mode, num_teams and thread_limit
// clauses, trip counts below and above the default team count, and a long
// reduction. Nothing checks the kernels' results: they never run.
//
// REQUIRES: amdgcn-amd-amdhsa, hsa-emulation
// RUN: %libomptarget-compile-generic
// RUN: env HSA_EMU_DISPATCH=noop HSA_EMU_TRACE=1 %libomptarget-run-generic 2>&1 \
// RUN:   | sed -n -e 's/ = .*$//' -e '/^hsa-emu: /p' > %t.ours
// RUN: env HSA_EMU_DISPATCH=noop HSA_EMU_TRACE=1 %run-stock-generic 2>&1 \
// RUN:   | sed -n -e 's/ = .*$//' -e '/^hsa-emu: /p' > %t.stock
// RUN: diff %t.stock %t.ours
// RUN: %fcheck-generic --input-file %t.ours

#include <omp.h>
#include <stdio.h>

#define N 100000
static double A[N], B[N];

int main(void) {
  long Long = 1L << 26;
  double Sum = 0;
#pragma omp target data map(tofrom : A, B)
  {
    // SPMD: ceil(N / threads) teams, capped at the default.
#pragma omp target teams distribute parallel for
    for (int I = 0; I < N; ++I)
      A[I] = 2.0 * B[I];
    // SPMD with both clauses.
#pragma omp target teams distribute parallel for num_teams(7) thread_limit(96)
    for (int I = 0; I < N; ++I)
      A[I] += B[I];
    // SPMD with a short trip count.
#pragma omp target teams distribute parallel for
    for (int I = 0; I < 300; ++I)
      A[I] = I;
    // Generic: one team per distribute iteration, capped.
#pragma omp target teams distribute
    for (int I = 0; I < 1000; ++I) {
      double S = 0;
      for (int J = 0; J < 10; ++J)
        S += B[(I + J) % N];
      A[I] = S;
    }
    // Generic with a thread limit.
#pragma omp target teams distribute thread_limit(64)
    for (int I = 0; I < 50; ++I)
      A[I] = -A[I];
    // A lone target region.
#pragma omp target
    A[0] = 1;
  }
  // A long reduction.
#pragma omp target teams distribute parallel for reduction(+ : Sum)
  for (long I = 0; I < Long; ++I)
    Sum += (double)(I & 7);
  printf("done\n");
  return 0;
}

// Seven kernels, each dispatched once.
// CHECK-COUNT-7: hsa-emu: dispatch __omp_offloading_{{.*}} on GPU 0: dims 1 grid
// CHECK-NOT: hsa-emu: dispatch

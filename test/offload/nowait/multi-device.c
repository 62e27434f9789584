// nowait regions on every device at once, each with a dependent chain of
// its own, then taskwait.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <omp.h>
#include <stdio.h>
#include "offload_test.h"

#define MAXDEV 16
#define N 1000

int main(void) {
  int ndev = omp_get_num_devices();
  if (ndev > MAXDEV)
    ndev = MAXDEV;
  static long data[MAXDEV][N];
  long sums[MAXDEV];

#pragma omp parallel
#pragma omp single
  for (int d = 0; d < ndev; ++d) {
    long *p = data[d];
    long *s = &sums[d];
#pragma omp target enter data nowait device(d) map(alloc : p[0 : N]) depend(out : p[0])
#pragma omp target nowait device(d) depend(inout : p[0]) firstprivate(d)
    for (int i = 0; i < N; ++i)
      p[i] = (long)(d + 1) * i;
#pragma omp target nowait device(d) depend(inout : p[0]) map(from : s[0 : 1])
    {
      long acc = 0;
      for (int i = 0; i < N; ++i)
        acc += p[i];
      *s = acc;
    }
#pragma omp target exit data nowait device(d) map(from : p[0 : N]) depend(inout : p[0])
  }
  // The implicit barrier of the parallel region completes all tasks.
  int bad = 0;
  for (int d = 0; d < ndev; ++d) {
    bad += sums[d] != (long)(d + 1) * N * (N - 1) / 2;
    bad += data[d][N - 1] != (long)(d + 1) * (N - 1);
  }
  OT_EXPECT(bad == 0, "every device finished its chain");
  printf("device 0 sum = %ld\n", sums[0]);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: every device finished its chain
// CHECK: device 0 sum = 499500
// CHECK-NOT: FAIL
// CHECK: failures: 0

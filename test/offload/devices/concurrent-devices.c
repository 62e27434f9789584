// One host thread per device, all offloading at the same time with their
// own data and mappings; results must not mix.
//
// RUN: %libomptarget-compile-run-and-check-generic
//
// Not under ThreadSanitizer: libomptarget frees on the main thread, after the
// parallel region, objects whose mutexes libomp's worker threads locked in
// it, and only libomp's join (uninstrumented atomics, invisible to TSan)
// orders the two.
// UNSUPPORTED: thread-sanitizer

#include <omp.h>
#include <stdio.h>
#include "offload_test.h"

#define MAXDEV 16
#define N 2000
#define ROUNDS 10

int main(void) {
  int ndev = omp_get_num_devices();
  if (ndev > MAXDEV)
    ndev = MAXDEV;
  static int data[MAXDEV][N];
  long sums[MAXDEV];

#pragma omp parallel num_threads(ndev)
  {
    int d = omp_get_thread_num();
    if (d < ndev) {
      int *p = data[d];
      for (int i = 0; i < N; ++i)
        p[i] = d;
#pragma omp target data map(tofrom : p[0 : N]) device(d)
      {
        for (int r = 0; r < ROUNDS; ++r) {
#pragma omp target teams distribute parallel for device(d)
          for (int i = 0; i < N; ++i)
            p[i] += i;
        }
      }
      long s = 0;
#pragma omp target teams distribute parallel for reduction(+ : s) map(to : p[0 : N]) \
    device(d)
      for (int i = 0; i < N; ++i)
        s += p[i];
      sums[d] = s;
    }
  }
  int bad = 0;
  for (int d = 0; d < ndev; ++d) {
    long expect = (long)d * N + (long)ROUNDS * N * (N - 1) / 2;
    bad += sums[d] != expect;
    bad += data[d][N - 1] != d + ROUNDS * (N - 1);
  }
  OT_EXPECT(bad == 0, "all devices computed their own results concurrently");
  printf("device 0 sum = %ld\n", sums[0]);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: all devices computed their own results concurrently
// CHECK: device 0 sum = 19990000
// CHECK-NOT: FAIL
// CHECK: failures: 0

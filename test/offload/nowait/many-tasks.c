// Many concurrent nowait target tasks on private buffers, completed by
// taskwait; each task's result must be intact.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <omp.h>
#include <stdio.h>
#include "offload_test.h"

#define TASKS 64
#define LEN 512

int main(void) {
  static int buf[TASKS][LEN];
  long sums[TASKS];
  int ndev = omp_get_num_devices();

#pragma omp parallel num_threads(2)
#pragma omp single
  {
    for (int t = 0; t < TASKS; ++t) {
      int *p = buf[t];
      long *s = &sums[t];
      int dev = t % ndev;
#pragma omp target nowait device(dev) map(from : p[0 : LEN], s[0 : 1]) firstprivate(t)
      {
        long acc = 0;
        for (int i = 0; i < LEN; ++i) {
          p[i] = t * 1000 + i;
          acc += p[i];
        }
        *s = acc;
      }
    }
#pragma omp taskwait
  }
  int bad = 0;
  for (int t = 0; t < TASKS; ++t) {
    long expect = (long)t * 1000 * LEN + (long)LEN * (LEN - 1) / 2;
    bad += sums[t] != expect;
    for (int i = 0; i < LEN; ++i)
      bad += buf[t][i] != t * 1000 + i;
  }
  OT_EXPECT(bad == 0, "all %d nowait tasks produced their results", TASKS);
  printf("sums[63] = %ld\n", sums[TASKS - 1]);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: all 64 nowait tasks produced their results
// CHECK: sums[63] = 32386816
// CHECK-NOT: FAIL
// CHECK: failures: 0

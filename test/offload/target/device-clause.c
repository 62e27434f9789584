// The device clause sends each region to the requested device; every
// device computes its own result.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <omp.h>
#include <stdio.h>
#include "offload_test.h"

int main(void) {
  int ndev = omp_get_num_devices();
  printf("devices >= 1: %d\n", ndev >= 1);
  int bad = 0;
  for (int d = 0; d < ndev; ++d) {
    int v[64];
    for (int i = 0; i < 64; ++i)
      v[i] = i;
    int initial = -1;
#pragma omp target device(d) map(tofrom : v) map(from : initial)
    {
      initial = omp_is_initial_device();
      for (int i = 0; i < 64; ++i)
        v[i] = v[i] * (d + 2) + d;
    }
    for (int i = 0; i < 64; ++i)
      bad += v[i] != i * (d + 2) + d;
    bad += initial != 0;
  }
  OT_EXPECT(bad == 0, "every device computed its own result");

  // device() together with target data on a non-default device.
  int last = ndev - 1;
  int buf[10] = {0};
#pragma omp target data map(tofrom : buf) device(last)
  {
    OT_EXPECT(omp_target_is_present(buf, last), "buf present on last device");
#pragma omp target device(last)
    for (int i = 0; i < 10; ++i)
      buf[i] = 10 * i;
  }
  printf("buf[9] = %d\n", buf[9]);
  OT_SUMMARY();
  return 0;
}

// CHECK: devices >= 1: 1
// CHECK: PASS: every device computed its own result
// CHECK: PASS: buf present on last device
// CHECK: buf[9] = 90
// CHECK-NOT: FAIL
// CHECK: failures: 0

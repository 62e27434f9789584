// Device numbering: at least one device, the initial device is numbered
// after the last one, and the default device is 0.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <omp.h>
#include <stdio.h>
#include "offload_test.h"

int main(void) {
  int ndev = omp_get_num_devices();
  OT_EXPECT(ndev >= 1, "at least one device");
  OT_EXPECT(omp_get_initial_device() == ndev, "initial device == num devices");
  OT_EXPECT(omp_get_default_device() == 0, "default device is 0");
  OT_EXPECT(omp_get_device_num() == omp_get_initial_device(),
            "host thread runs on the initial device");
  OT_EXPECT(omp_is_initial_device(), "host code is on the initial device");

  // Each device runs code and is not the initial device.
  int bad = 0;
  for (int d = 0; d < ndev; ++d) {
    int init = -1, v = 0;
#pragma omp target device(d) map(from : init, v)
    {
      init = omp_is_initial_device();
      v = 123;
    }
    bad += init != 0 || v != 123;
  }
  OT_EXPECT(bad == 0, "every device offloads");
  OT_SUMMARY();
  return 0;
}

// CHECK-NOT: FAIL
// CHECK: PASS: at least one device
// CHECK: PASS: initial device == num devices
// CHECK: PASS: default device is 0
// CHECK: PASS: host thread runs on the initial device
// CHECK: PASS: host code is on the initial device
// CHECK: PASS: every device offloads
// CHECK-NOT: FAIL
// CHECK: failures: 0

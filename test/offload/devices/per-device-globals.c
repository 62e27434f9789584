// declare target globals exist once per device: values written on one
// device are not visible on another, and target update works per device.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <omp.h>
#include <stdio.h>
#include "offload_test.h"

#pragma omp declare target
int tag = 7;
double vec[8];
#pragma omp end declare target

int main(void) {
  int ndev = omp_get_num_devices();
  // Every device starts from the image's initial value.
  int bad = 0;
  for (int d = 0; d < ndev; ++d) {
    int got = 0;
#pragma omp target device(d) map(from : got)
    got = tag;
    bad += got != 7;
  }
  OT_EXPECT(bad == 0, "initial value on every device");

  // Write different values per device, from the host via target update.
  for (int d = 0; d < ndev; ++d) {
    tag = 1000 + d;
    for (int i = 0; i < 8; ++i)
      vec[i] = d + 0.5 * i;
#pragma omp target update to(tag, vec) device(d)
  }
  tag = -1;
  bad = 0;
  for (int d = 0; d < ndev; ++d) {
    int got = 0;
    double s = 0;
    // tofrom: the sum starts from the host's 0; the device copy of a
    // from-only variable is uninitialised.
#pragma omp target device(d) map(from : got) map(tofrom : s)
    {
      got = tag;
      for (int i = 0; i < 8; ++i)
        s += vec[i];
      vec[0] = 100.0 * got; // device-side change
    }
    bad += got != 1000 + d || s != 8.0 * d + 14.0;
  }
  OT_EXPECT(bad == 0, "per-device values after target update to");
  OT_EXPECT(tag == -1, "host copy independent of the devices");

  bad = 0;
  for (int d = ndev - 1; d >= 0; --d) {
#pragma omp target update from(vec[0 : 1]) device(d)
    bad += vec[0] != 100.0 * (1000 + d);
  }
  OT_EXPECT(bad == 0, "target update from reads each device's copy");
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: initial value on every device
// CHECK: PASS: per-device values after target update to
// CHECK: PASS: host copy independent of the devices
// CHECK: PASS: target update from reads each device's copy
// CHECK-NOT: FAIL
// CHECK: failures: 0

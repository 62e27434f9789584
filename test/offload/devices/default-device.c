// omp_set_default_device redirects target constructs without a device
// clause; mappings land on the selected device only.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <omp.h>
#include <stdio.h>
#include "offload_test.h"

int main(void) {
  int ndev = omp_get_num_devices();
  int last = ndev - 1;
  omp_set_default_device(last);
  OT_EXPECT(omp_get_default_device() == last, "default device set");
  int x[4] = {1, 2, 3, 4};
#pragma omp target enter data map(to : x)
  OT_EXPECT(omp_target_is_present(x, last), "mapped on the new default device");
  if (last != 0)
    OT_EXPECT(!omp_target_is_present(x, 0), "not mapped on device 0");
  else
    OT_EXPECT(1, "not mapped on device 0");
#pragma omp target
  for (int i = 0; i < 4; ++i)
    x[i] *= 10;
#pragma omp target exit data map(from : x)
  printf("x = %d %d %d %d\n", x[0], x[1], x[2], x[3]);
  omp_set_default_device(0);
  OT_EXPECT(omp_get_default_device() == 0, "default device reset");
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: default device set
// CHECK: PASS: mapped on the new default device
// CHECK: PASS: not mapped on device 0
// CHECK: x = 10 20 30 40
// CHECK: PASS: default device reset
// CHECK-NOT: FAIL
// CHECK: failures: 0

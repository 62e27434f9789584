// Mapping-table queries on the initial device and on unknown devices:
// omp_target_is_present is always true on the initial device, association
// is impossible there, unknown devices report nothing.
//
// libomptarget 18 ends the program ("omptarget fatal error N: Device
// number 'N' out of range") where 16 and 17 return an error for an unknown
// device number, with the stock plugin as with ours: this test of those
// errors cannot run there.
// UNSUPPORTED: llvm-18
// RUN: %libomptarget-compile-run-and-check-generic

#include <omp.h>
#include <stdio.h>
#include "offload_test.h"

int main(void) {
  int host = omp_get_initial_device();
  int ndev = omp_get_num_devices();
  int dev = omp_get_default_device();
  int x = 0, arr[8];

  OT_EXPECT(host == ndev, "initial device number == number of devices");
  OT_EXPECT(omp_target_is_present(&x, host) != 0, "is_present on the initial device");
  OT_EXPECT(omp_target_is_present(arr, host) != 0, "is_present of an array on the host");
  OT_EXPECT(omp_target_is_present(&x, ndev + 3) == 0, "is_present on an unknown device");
  OT_EXPECT(omp_target_is_present(NULL, dev) == 0, "is_present(NULL)");
  OT_EXPECT(omp_get_mapped_ptr(&x, host) == (void *)&x, "mapped ptr on the initial device");
  OT_EXPECT(omp_get_mapped_ptr(&x, ndev + 3) == NULL, "mapped ptr on an unknown device");
  OT_EXPECT(omp_get_mapped_ptr(NULL, dev) == NULL, "mapped ptr of NULL");

  void *d = omp_target_alloc(sizeof(int), dev);
  OT_EXPECT(omp_target_associate_ptr(&x, d, sizeof(int), 0, host) != 0,
            "associate on the initial device fails");
  OT_EXPECT(omp_target_associate_ptr(&x, d, sizeof(int), 0, ndev + 3) != 0,
            "associate on an unknown device fails");
  OT_EXPECT(omp_target_disassociate_ptr(&x, host) != 0,
            "disassociate on the initial device fails");
  OT_EXPECT(omp_target_disassociate_ptr(&x, dev) != 0,
            "disassociate without association fails");
  OT_EXPECT(omp_target_associate_ptr(&x, d, sizeof(int), 0, dev) == 0, "valid associate");
  OT_EXPECT(omp_target_disassociate_ptr(&x, dev) == 0, "valid disassociate");
  omp_target_free(d, dev);
  OT_SUMMARY();
  return 0;
}

// CHECK-NOT: FAIL
// CHECK: PASS: initial device number == number of devices
// CHECK: PASS: is_present on the initial device
// CHECK: PASS: is_present of an array on the host
// CHECK: PASS: is_present on an unknown device
// CHECK: PASS: is_present(NULL)
// CHECK: PASS: mapped ptr on the initial device
// CHECK: PASS: mapped ptr on an unknown device
// CHECK: PASS: mapped ptr of NULL
// CHECK: PASS: associate on the initial device fails
// CHECK: PASS: associate on an unknown device fails
// CHECK: PASS: disassociate on the initial device fails
// CHECK: PASS: disassociate without association fails
// CHECK: PASS: valid associate
// CHECK: PASS: valid disassociate
// CHECK-NOT: FAIL
// CHECK: failures: 0

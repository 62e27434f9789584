// omp_target_is_present follows the mapping table: whole objects, interior
// addresses, one-past-the-end, and devices other than the one mapped.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <omp.h>
#include <stdio.h>
#include "offload_test.h"

int main(void) {
  int ndev = omp_get_num_devices();
  int dev = 0;
  int other = ndev > 1 ? 1 : -1;
  int a[64], b[64];
  OT_EXPECT(!omp_target_is_present(a, dev), "nothing mapped yet");
#pragma omp target enter data map(to : a[16 : 32]) device(dev)
  OT_EXPECT(omp_target_is_present(&a[16], dev), "start of section");
  OT_EXPECT(omp_target_is_present(&a[47], dev), "last element of section");
  OT_EXPECT(omp_target_is_present(&a[30], dev), "interior element");
  OT_EXPECT(!omp_target_is_present(&a[15], dev), "just before the section");
  OT_EXPECT(!omp_target_is_present(&a[48], dev), "just after the section");
  OT_EXPECT(!omp_target_is_present(b, dev), "other array");
  if (other >= 0)
    OT_EXPECT(!omp_target_is_present(&a[16], other), "not present on another device");
  else
    OT_EXPECT(1, "not present on another device");
#pragma omp target exit data map(release : a[16 : 32]) device(dev)
  OT_EXPECT(!omp_target_is_present(&a[16], dev), "gone after release");

#pragma omp target data map(alloc : b) device(dev)
  { OT_EXPECT(omp_target_is_present(b, dev), "inside target data"); }
  OT_EXPECT(!omp_target_is_present(b, dev), "after target data");
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: nothing mapped yet
// CHECK: PASS: start of section
// CHECK: PASS: last element of section
// CHECK: PASS: interior element
// CHECK: PASS: just before the section
// CHECK: PASS: just after the section
// CHECK: PASS: other array
// CHECK: PASS: not present on another device
// CHECK: PASS: gone after release
// CHECK: PASS: inside target data
// CHECK: PASS: after target data
// CHECK-NOT: FAIL
// CHECK: failures: 0

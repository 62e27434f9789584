// map(delete:) on target exit data removes a mapping regardless of its
// reference count, without copying back.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <omp.h>
#include <stdio.h>
#include "offload_test.h"

int main(void) {
  int dev = omp_get_default_device();
  int x[16];
  for (int i = 0; i < 16; ++i)
    x[i] = i;
#pragma omp target enter data map(to : x)
#pragma omp target enter data map(to : x)
#pragma omp target enter data map(to : x)
  OT_EXPECT(omp_target_is_present(x, dev), "present after three enter data");
#pragma omp target
  for (int i = 0; i < 16; ++i)
    x[i] = -1;
#pragma omp target exit data map(delete : x)
  OT_EXPECT(!omp_target_is_present(x, dev), "delete removed the mapping");
  printf("x[3] = %d (not copied back)\n", x[3]);

  // After delete, a new mapping starts from the host values again.
  int seen = 0;
#pragma omp target map(to : x) map(from : seen)
  seen = x[3] + x[15];
  printf("fresh mapping sees %d\n", seen);

  // delete on something that is not mapped is harmless.
  int y = 5;
#pragma omp target exit data map(delete : y)
  OT_EXPECT(!omp_target_is_present(&y, dev), "delete of unmapped variable is a no-op");
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: present after three enter data
// CHECK: PASS: delete removed the mapping
// CHECK: x[3] = 3 (not copied back)
// CHECK: fresh mapping sees 18
// CHECK: PASS: delete of unmapped variable is a no-op
// CHECK-NOT: FAIL
// CHECK: failures: 0

// Reference counting of mappings: nested target data and unstructured
// enter/exit data keep data present until the last release, and copy back
// only then.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <omp.h>
#include <stdio.h>
#include "offload_test.h"

int main(void) {
  int dev = omp_get_default_device();
  int a = 5;
#pragma omp target enter data map(to : a)
#pragma omp target enter data map(to : a)
#pragma omp target map(tofrom : a)
  a = 50;
#pragma omp target exit data map(from : a)
  OT_EXPECT(omp_target_is_present(&a, dev), "still present after first exit");
  printf("after first exit: a = %d\n", a);
#pragma omp target exit data map(from : a)
  OT_EXPECT(!omp_target_is_present(&a, dev), "gone after second exit");
  printf("after second exit: a = %d\n", a);

  int b = 1;
#pragma omp target data map(tofrom : b)
  {
#pragma omp target data map(tofrom : b)
    {
#pragma omp target map(tofrom : b)
      b += 10;
    }
    printf("after inner region: b = %d\n", b);
  }
  printf("after outer region: b = %d\n", b);

  // A target data region keeps an unstructured mapping alive.
  int c = 3;
#pragma omp target data map(tofrom : c)
  {
#pragma omp target enter data map(to : c)
#pragma omp target map(tofrom : c)
    c *= 7;
  }
  OT_EXPECT(omp_target_is_present(&c, dev), "enter data reference outlives the region");
  printf("c after region = %d\n", c);
#pragma omp target exit data map(from : c)
  printf("c after exit = %d\n", c);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: still present after first exit
// CHECK: after first exit: a = 5
// CHECK: PASS: gone after second exit
// CHECK: after second exit: a = 50
// CHECK: after inner region: b = 1
// CHECK: after outer region: b = 11
// CHECK: PASS: enter data reference outlives the region
// CHECK: c after region = 3
// CHECK: c after exit = 21
// CHECK-NOT: FAIL
// CHECK: failures: 0

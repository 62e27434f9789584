// A target region on a device number that does not exist is a fatal
// error reported by libomptarget.
//
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-fail-generic 2>&1 | %fcheck-generic

#include <omp.h>
#include <stdio.h>

int main(void) {
  int bad = omp_get_num_devices() + 10;
  int x = 0;
  fprintf(stderr, "offloading to device %d\n", bad - omp_get_num_devices());
#pragma omp target device(bad) map(tofrom : x)
  x = 1;
  fprintf(stderr, "unreachable x = %d\n", x);
  return 0;
}

// CHECK: offloading to device 10
// CHECK: Libomptarget fatal error 1: failure of target construct while offloading is mandatory
// CHECK-NOT: unreachable

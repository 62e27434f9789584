// target enter data with map(present, to:) on unmapped data fails.
//
// RUN: %libomptarget-compile-generic -fopenmp-version=51
// RUN: %libomptarget-run-fail-generic 2>&1 | %fcheck-generic %libomptarget-prefix-def

#include <stdio.h>

int main(void) {
  double arr[10];
  for (int i = 0; i < 10; ++i)
    arr[i] = i;
  fprintf(stderr, "before enter data\n");
#pragma omp target enter data map(present, to : arr)
  fprintf(stderr, "after enter data\n");
  return 0;
}

// CHECK: before enter data
// CHECK: [[LIBOMPTARGET]] message: device mapping required by 'present' map type modifier does not exist for host address 0x{{[0-9a-fA-F]+}} (80 bytes)
// CHECK: [[LIBOMPTARGET]] fatal error 1: failure of target construct while offloading is mandatory
// CHECK-NOT: after enter data

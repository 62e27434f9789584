// map(present:) on data that is not mapped is a fatal error reported by
// libomptarget; the region never runs.
//
// RUN: %libomptarget-compile-generic -fopenmp-version=51
// RUN: %libomptarget-run-fail-generic 2>&1 | %fcheck-generic %libomptarget-prefix-def

#include <stdio.h>

int main(void) {
  int x = 5;
  fprintf(stderr, "before target\n");
#pragma omp target map(present, tofrom : x)
  x++;
  fprintf(stderr, "after target: x = %d\n", x);
  return 0;
}

// CHECK: before target
// CHECK: [[LIBOMPTARGET]] message: device mapping required by 'present' map type modifier does not exist for host address 0x{{[0-9a-fA-F]+}} (4 bytes)
// CHECK: [[LIBOMPTARGET]] fatal error 1: failure of target construct while offloading is mandatory
// CHECK-NOT: after target

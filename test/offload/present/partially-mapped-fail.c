// map(present:) of a section that extends past what is mapped fails, even
// though its start is present.
//
// RUN: %libomptarget-compile-generic -fopenmp-version=51
// RUN: %libomptarget-run-fail-generic 2>&1 | %fcheck-generic %libomptarget-prefix-def

#include <stdio.h>

int main(void) {
  int a[100];
  for (int i = 0; i < 100; ++i)
    a[i] = i;
  int sum = 0;
#pragma omp target data map(to : a[0 : 50])
  {
#pragma omp target map(present, to : a[0 : 50]) map(tofrom : sum)
    for (int i = 0; i < 50; ++i)
      sum += a[i];
    fprintf(stderr, "first half sum = %d\n", sum);
#pragma omp target map(present, to : a[0 : 100]) map(tofrom : sum)
    for (int i = 0; i < 100; ++i)
      sum += a[i];
    fprintf(stderr, "unreachable\n");
  }
  return 0;
}

// CHECK: first half sum = 1225
// CHECK: [[LIBOMPTARGET]] message: device mapping required by 'present' map type modifier does not exist for host address 0x{{[0-9a-fA-F]+}} (400 bytes)
// CHECK: [[LIBOMPTARGET]] fatal error 1: failure of target construct while offloading is mandatory
// CHECK-NOT: unreachable

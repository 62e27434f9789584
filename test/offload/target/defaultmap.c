// defaultmap(tofrom: scalar) makes unmapped scalars come back from the
// device; the default (firstprivate) does not.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <stdio.h>

int main(void) {
  int a = 1, b = 2;
#pragma omp target defaultmap(tofrom : scalar)
  {
    a += 100;
    b *= 50;
  }
  printf("defaultmap tofrom: a = %d b = %d\n", a, b);
#pragma omp target
  {
    a += 100;
    b *= 50;
  }
  printf("default: a = %d b = %d\n", a, b);
  return 0;
}

// CHECK: defaultmap tofrom: a = 101 b = 100
// CHECK: default: a = 101 b = 100

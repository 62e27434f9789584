// declare target scalar globals: the device copy is initialised from the
// image, is separate from the host copy, and persists across regions.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <stdio.h>

#pragma omp declare target
int counter = 10;
double factor = 2.5;
#pragma omp end declare target

int main(void) {
  int seen = 0;
  double fseen = 0;
#pragma omp target map(from : seen, fseen)
  {
    seen = counter;
    fseen = factor;
  }
  printf("initial device values: %d %.1f\n", seen, fseen);

  for (int i = 0; i < 5; ++i) {
#pragma omp target
    counter += i;
  }
#pragma omp target map(from : seen)
  seen = counter;
  printf("device counter after 5 regions = %d\n", seen);
  printf("host counter = %d\n", counter);

  counter = -1;
#pragma omp target map(from : seen)
  seen = counter;
  printf("host write not visible on device: %d\n", seen);
  return 0;
}

// CHECK: initial device values: 10 2.5
// CHECK: device counter after 5 regions = 20
// CHECK: host counter = 10
// CHECK: host write not visible on device: 20

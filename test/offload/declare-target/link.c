// declare target link: the global is mapped on demand by map clauses
// instead of living in the device image.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <stdio.h>

int big[1000];
#pragma omp declare target link(big)

#pragma omp declare target
static int sum_big(int n) {
  int s = 0;
  for (int i = 0; i < n; ++i)
    s += big[i];
  return s;
}
#pragma omp end declare target

int main(void) {
  for (int i = 0; i < 1000; ++i)
    big[i] = i % 10;
  int s = 0;
#pragma omp target map(to : big) map(from : s)
  s = sum_big(1000);
  printf("sum = %d\n", s);

#pragma omp target data map(tofrom : big)
  {
#pragma omp target
    for (int i = 0; i < 1000; ++i)
      big[i] *= 2;
#pragma omp target map(from : s)
    s = sum_big(1000);
  }
  printf("sum after doubling = %d big[999] = %d\n", s, big[999]);
  return 0;
}

// CHECK: sum = 4500
// CHECK: sum after doubling = 9000 big[999] = 18

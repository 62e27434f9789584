// The always modifier forces transfers for data that is already present;
// without it a present mapping is reused without copying.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <stdio.h>

int main(void) {
  int x = 1;
  int seen_plain = 0, seen_always = 0;
#pragma omp target data map(to : x)
  {
    x = 2; // host-only change
#pragma omp target map(to : x) map(from : seen_plain)
    seen_plain = x;
#pragma omp target map(always, to : x) map(from : seen_always)
    seen_always = x;
  }
  printf("plain map sees %d, always map sees %d\n", seen_plain, seen_always);

  int y = 10;
#pragma omp target data map(tofrom : y)
  {
#pragma omp target map(tofrom : y)
    y = 20;
    printf("inside region without always: y = %d\n", y);
#pragma omp target map(always, from : y)
    y = 30;
    printf("inside region with always from: y = %d\n", y);
    y = 0; // overwritten by the copy back at the end of the region
  }
  printf("after region: y = %d\n", y);
  return 0;
}

// CHECK: plain map sees 1, always map sees 2
// CHECK: inside region without always: y = 10
// CHECK: inside region with always from: y = 30
// CHECK: after region: y = 30

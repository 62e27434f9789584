// declare target arrays, with initialisers and zero-initialised, used by
// several target regions and a device function.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <stdio.h>

#define N 256

#pragma omp declare target
int table[N];
int coeffs[4] = {3, 1, 4, 1};
static long sum_table(void) {
  long s = 0;
  for (int i = 0; i < N; ++i)
    s += table[i];
  return s;
}
#pragma omp end declare target

int main(void) {
#pragma omp target
  for (int i = 0; i < N; ++i)
    table[i] = coeffs[i % 4] * i;

  long s = 0;
#pragma omp target map(from : s)
  s = sum_table();
  printf("device sum = %ld\n", s);

  int host_zero = 1;
  for (int i = 0; i < N; ++i)
    host_zero = host_zero && table[i] == 0;
  printf("host table still zero: %d\n", host_zero);

#pragma omp target update from(table)
  printf("after update: table[5] = %d table[255] = %d\n", table[5], table[255]);

  coeffs[0] = 100;
#pragma omp target update to(coeffs[0 : 1])
  int c0 = 0;
#pragma omp target map(from : c0)
  c0 = coeffs[0] + coeffs[2];
  printf("device coeffs[0] + coeffs[2] = %d\n", c0);
  return 0;
}

// CHECK: device sum = 73344
// CHECK: host table still zero: 1
// CHECK: after update: table[5] = 5 table[255] = 255
// CHECK: device coeffs[0] + coeffs[2] = 104

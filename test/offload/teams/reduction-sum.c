// target teams distribute parallel for with + reductions of several types.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <stdio.h>
#include <stdlib.h>

#define N 100000

int main(void) {
  int *a = malloc(N * sizeof(int));
  for (int i = 0; i < N; ++i)
    a[i] = i % 1000;

  long long sum = 0;
#pragma omp target teams distribute parallel for reduction(+ : sum) map(to : a[0 : N])
  for (int i = 0; i < N; ++i)
    sum += a[i];
  printf("int sum = %lld\n", sum);

  double dsum = 0.0;
#pragma omp target teams distribute parallel for reduction(+ : dsum)
  for (int i = 1; i <= N; ++i)
    dsum += 0.5 * i; // exact in double
  printf("double sum = %.1f\n", dsum);

  // Reduction into a variable that already holds a value.
  int count = 1000;
#pragma omp target teams distribute parallel for reduction(+ : count) map(to : a[0 : N])
  for (int i = 0; i < N; ++i)
    count += (a[i] % 7 == 0);
  printf("count = %d\n", count);

  // Two reduction variables at once, one of them subtracting.
  long long up = 0, down = 0;
#pragma omp target teams distribute parallel for reduction(+ : up, down)
  for (int i = 0; i < 1000; ++i) {
    up += i;
    down -= 2 * i;
  }
  printf("up = %lld down = %lld\n", up, down);
  free(a);
  return 0;
}

// CHECK: int sum = 49950000
// CHECK: double sum = 2500025000.0
// CHECK: count = 15300
// CHECK: up = 499500 down = -999000

// parallel regions inside target: target parallel for with reductions,
// atomics and critical sections.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <stdio.h>

int main(void) {
  int sum = 0;
#pragma omp target parallel for reduction(+ : sum) num_threads(8)
  for (int i = 0; i < 1000; ++i)
    sum += i;
  printf("target parallel for sum = %d\n", sum);

  int counter = 0;
#pragma omp target teams num_teams(2) map(tofrom : counter)
#pragma omp parallel num_threads(4)
  {
#pragma omp atomic
    counter += 1;
  }
  printf("atomic counter in [1,8]: %d\n", counter >= 1 && counter <= 8);

  int hist[4] = {0, 0, 0, 0};
#pragma omp target teams distribute parallel for map(tofrom : hist)
  for (int i = 0; i < 400; ++i) {
#pragma omp atomic update
    hist[i % 4] += i;
  }
  printf("hist = %d %d %d %d\n", hist[0], hist[1], hist[2], hist[3]);

  long long prod = 1;
#pragma omp target parallel for reduction(* : prod) num_threads(4)
  for (int i = 1; i <= 15; ++i)
    prod *= i;
  printf("15! = %lld\n", prod);
  return 0;
}

// CHECK: target parallel for sum = 499500
// CHECK: atomic counter in [1,8]: 1
// CHECK: hist = 19800 19900 20000 20100
// CHECK: 15! = 1307674368000

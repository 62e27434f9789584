// declare target functions: called from target regions, calling each
// other, with the device_type(any) default and a function pointer-free
// dispatch.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <stdio.h>

#pragma omp declare target
static int square(int x) { return x * x; }
int poly(int x) { return 3 * square(x) + 2 * x + 1; }
unsigned collatz_steps(unsigned n) {
  unsigned steps = 0;
  while (n != 1) {
    n = (n & 1) ? 3 * n + 1 : n / 2;
    ++steps;
  }
  return steps;
}
#pragma omp end declare target

double halve(double v);
#pragma omp declare target to(halve)
double halve(double v) { return v / 2.0; }

int main(void) {
  int p[8];
#pragma omp target map(from : p)
  for (int i = 0; i < 8; ++i)
    p[i] = poly(i);
  printf("poly: %d %d %d %d\n", p[0], p[1], p[2], p[7]);

  unsigned steps[32];
#pragma omp target teams distribute parallel for map(from : steps)
  for (int i = 0; i < 32; ++i)
    steps[i] = collatz_steps(i + 1);
  printf("collatz(27) = %u collatz(32) = %u\n", steps[26], steps[31]);

  double h = 0;
#pragma omp target map(from : h)
  h = halve(halve(10.0));
  printf("halve twice = %.2f\n", h);

  // Host calls of the same functions give the same answers.
  printf("host poly(7) = %d collatz(27) = %u\n", poly(7), collatz_steps(27));
  return 0;
}

// CHECK: poly: 1 6 17 162
// CHECK: collatz(27) = 111 collatz(32) = 5
// CHECK: halve twice = 2.50
// CHECK: host poly(7) = 162 collatz(27) = 111

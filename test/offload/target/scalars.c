// Scalars in target regions: tofrom, to, from, and the implicit firstprivate
// of scalars that are not mapped.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <omp.h>
#include <stdio.h>

int main(void) {
  int a = 10, b = 0, c = 3;
#pragma omp target map(tofrom : a) map(from : b) map(to : c)
  {
    a = a * 2 + c;
    b = 7 * c;
    c = -1; // map(to:): not copied back
  }
  printf("a = %d b = %d c = %d\n", a, b, c);

  double d = 1.5;
  long long big = 1LL << 40;
  char ch = 'a';
  short sh = -300;
#pragma omp target map(tofrom : d, big, ch, sh)
  {
    d = d * 4.0 + 0.25;
    big = big + 5;
    ch = ch + 2;
    sh = sh * 3;
  }
  printf("d = %.2f big = %lld ch = %c sh = %d\n", d, big, ch, sh);

  // Unmapped scalars are firstprivate: the device sees the value, the host
  // copy is unchanged.
  int e = 5, r = 0;
  float f = 0.5f;
#pragma omp target map(from : r)
  {
    r = e * e + (int)(f * 8);
    e = 100;
    f = 9.0f;
  }
  printf("r = %d e = %d f = %.1f\n", r, e, f);

  int on_device = -1;
#pragma omp target map(from : on_device)
  on_device = !omp_is_initial_device();
  printf("ran on device: %d\n", on_device);
  return 0;
}

// CHECK: a = 23 b = 21 c = 3
// CHECK: d = 6.25 big = 1099511627781 ch = c sh = -900
// CHECK: r = 29 e = 5 f = 0.5
// CHECK: ran on device: 1

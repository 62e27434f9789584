// max and min reductions, and logical/bitwise reductions.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <stdio.h>

#define N 20000

int main(void) {
  int v[N];
  for (int i = 0; i < N; ++i)
    v[i] = (int)((i * 7919L) % 10007) - 5000; // values in [-5000, 5006]

  int mx = -1000000, mn = 1000000;
#pragma omp target teams distribute parallel for reduction(max : mx) reduction(min : mn) \
    map(to : v)
  for (int i = 0; i < N; ++i) {
    mx = v[i] > mx ? v[i] : mx;
    mn = v[i] < mn ? v[i] : mn;
  }
  int hmx = -1000000, hmn = 1000000;
  for (int i = 0; i < N; ++i) {
    hmx = v[i] > hmx ? v[i] : hmx;
    hmn = v[i] < hmn ? v[i] : hmn;
  }
  printf("max = %d min = %d\n", mx, mn);
  printf("matches host: %d\n", mx == hmx && mn == hmn);

  double dmax = 0.0;
#pragma omp target teams distribute parallel for reduction(max : dmax)
  for (int i = 0; i < N; ++i) {
    double x = (double)((i * 31) % 977) / 4.0;
    dmax = x > dmax ? x : dmax;
  }
  printf("double max = %.2f\n", dmax);

  int all_pos = 1, any_big = 0;
  unsigned bits_or = 0, bits_and = ~0u, bits_xor = 0;
#pragma omp target teams distribute parallel for reduction(&& : all_pos) \
    reduction(|| : any_big) reduction(| : bits_or) reduction(& : bits_and) \
    reduction(^ : bits_xor) map(to : v)
  for (int i = 0; i < N; ++i) {
    all_pos = all_pos && (v[i] + 5000 >= 0);
    any_big = any_big || (v[i] > 5000);
    bits_or |= 1u << (i % 16);
    bits_and &= 0xff00ffu | (1u << (i % 4));
    bits_xor ^= (unsigned)i;
  }
  printf("all_pos = %d any_big = %d\n", all_pos, any_big);
  printf("or = 0x%x and = 0x%x xor = %u\n", bits_or, bits_and, bits_xor);
  return 0;
}

// CHECK: max = 5006 min = -5000
// CHECK: matches host: 1
// CHECK: double max = 244.00
// CHECK: all_pos = 1 any_big = 1
// CHECK: or = 0xffff and = 0xff00ff xor = 0

// Structs: whole structs, individual members, and arrays behind pointer
// members.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <stdio.h>
#include <stdlib.h>
#include "offload_test.h"

struct vec {
  int n;
  double scale;
  double *data;
};

struct pair {
  int first;
  int second;
  int arr[4];
};

int main(void) {
  struct pair p = {1, 2, {1, 2, 3, 4}};
#pragma omp target map(tofrom : p)
  {
    p.first += 10;
    p.second *= 5;
    for (int i = 0; i < 4; ++i)
      p.arr[i] *= p.arr[i];
  }
  printf("p = %d %d [%d %d %d %d]\n", p.first, p.second, p.arr[0], p.arr[1], p.arr[2],
         p.arr[3]);

  struct pair q = {7, 8, {0, 0, 0, 0}};
#pragma omp target map(tofrom : q.second)
  q.second = q.second * 100;
  printf("q.second = %d q.first = %d\n", q.second, q.first);

  struct vec v;
  v.n = 256;
  v.scale = 3.0;
  v.data = malloc(v.n * sizeof(double));
  for (int i = 0; i < v.n; ++i)
    v.data[i] = i;
#pragma omp target map(to : v) map(tofrom : v.data[0 : v.n])
  for (int i = 0; i < v.n; ++i)
    v.data[i] = v.data[i] * v.scale;
  int bad = 0;
  for (int i = 0; i < v.n; ++i)
    bad += v.data[i] != 3.0 * i;
  OT_EXPECT(bad == 0, "data behind a pointer member");
  printf("v.data[255] = %.1f\n", v.data[255]);
  free(v.data);
  OT_SUMMARY();
  return 0;
}

// CHECK: p = 11 10 [1 4 9 16]
// CHECK: q.second = 800 q.first = 7
// CHECK: PASS: data behind a pointer member
// CHECK: v.data[255] = 765.0
// CHECK-NOT: FAIL
// CHECK: failures: 0

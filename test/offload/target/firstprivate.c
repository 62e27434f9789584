// firstprivate of arrays, structs and pointers: the device sees the host
// values, device-side changes stay private.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <stdio.h>
#include "offload_test.h"

struct point {
  int x, y;
  double w;
};

int main(void) {
  int arr[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  struct point p = {3, 4, 0.5};
  int k = 7;
  int out[4] = {0, 0, 0, 0};

#pragma omp target firstprivate(arr, p, k) map(from : out)
  {
    int s = 0;
    for (int i = 0; i < 8; ++i) {
      s += arr[i];
      arr[i] = -1;
    }
    out[0] = s;
    out[1] = p.x * p.x + p.y * p.y;
    out[2] = (int)(p.w * 10) + k;
    p.x = 99;
    k = 1000;
    out[3] = k + p.x;
  }
  printf("sum = %d\n", out[0]);
  printf("norm2 = %d\n", out[1]);
  printf("w10k = %d\n", out[2]);
  printf("private update = %d\n", out[3]);
  OT_EXPECT(arr[0] == 1 && arr[7] == 8, "host array unchanged");
  OT_EXPECT(p.x == 3 && k == 7, "host struct and scalar unchanged");

  // private: uninitialised on the device, never copied back.
  int t = 42;
#pragma omp target private(t) map(from : out[0 : 1])
  {
    t = 5;
    out[0] = t * 2;
  }
  printf("private result = %d t = %d\n", out[0], t);
  OT_SUMMARY();
  return 0;
}

// CHECK: sum = 36
// CHECK: norm2 = 25
// CHECK: w10k = 12
// CHECK: private update = 1099
// CHECK: PASS: host array unchanged
// CHECK: PASS: host struct and scalar unchanged
// CHECK: private result = 10 t = 42
// CHECK-NOT: FAIL
// CHECK: failures: 0

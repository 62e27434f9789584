// map(to:), map(from:) and map(tofrom:) transfer in exactly the documented
// directions.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <stdio.h>
#include "offload_test.h"

#define N 256

int main(void) {
  int in[N], out[N], io[N];
  for (int i = 0; i < N; ++i) {
    in[i] = i;
    out[i] = -7;
    io[i] = 2 * i;
  }
  int seen_in = 0;
#pragma omp target map(to : in) map(from : out) map(tofrom : io) map(from : seen_in)
  {
    int s = 0;
    for (int i = 0; i < N; ++i)
      s += in[i];
    seen_in = s;
    for (int i = 0; i < N; ++i) {
      out[i] = in[i] + 1;
      io[i] = io[i] + in[i];
      in[i] = 0; // not copied back
    }
  }
  int bad_in = 0, bad_out = 0, bad_io = 0;
  for (int i = 0; i < N; ++i) {
    bad_in += in[i] != i;
    bad_out += out[i] != i + 1;
    bad_io += io[i] != 3 * i;
  }
  printf("device saw sum(in) = %d\n", seen_in);
  OT_EXPECT(bad_in == 0, "map(to:) not copied back");
  OT_EXPECT(bad_out == 0, "map(from:) copied back");
  OT_EXPECT(bad_io == 0, "map(tofrom:) both ways");

  // map(from:) does not copy in: the device overwrites everything, and
  // the host values it would have seen are irrelevant.
  int marker = 12345, got = 0;
#pragma omp target data map(from : marker)
  {
#pragma omp target map(from : marker)
    marker = 1;
  }
  got = marker;
  printf("from result = %d\n", got);
  OT_SUMMARY();
  return 0;
}

// CHECK: device saw sum(in) = 32640
// CHECK: PASS: map(to:) not copied back
// CHECK: PASS: map(from:) copied back
// CHECK: PASS: map(tofrom:) both ways
// CHECK: from result = 1
// CHECK-NOT: FAIL
// CHECK: failures: 0

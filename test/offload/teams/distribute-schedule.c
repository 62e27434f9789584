// teams distribute (without parallel for) and dist_schedule: every
// iteration executes exactly once; per-team partial results combine.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <stdio.h>
#include "offload_test.h"

#define N 3000

int main(void) {
  int hits[N];
  for (int i = 0; i < N; ++i)
    hits[i] = 0;
#pragma omp target teams distribute map(tofrom : hits)
  for (int i = 0; i < N; ++i)
    hits[i] += 1;
  int bad = 0;
  for (int i = 0; i < N; ++i)
    bad += hits[i] != 1;
  OT_EXPECT(bad == 0, "teams distribute: each iteration once");

#pragma omp target teams distribute dist_schedule(static, 7) map(tofrom : hits)
  for (int i = 0; i < N; ++i)
    hits[i] += i;
  bad = 0;
  for (int i = 0; i < N; ++i)
    bad += hits[i] != 1 + i;
  OT_EXPECT(bad == 0, "dist_schedule(static, 7): each iteration once");

#pragma omp target teams distribute parallel for dist_schedule(static, 64) \
    schedule(static, 3) map(tofrom : hits)
  for (int i = 0; i < N; ++i)
    hits[i] *= 2;
  long long s = 0;
  for (int i = 0; i < N; ++i)
    s += hits[i];
  printf("sum = %lld\n", s);

  int partial[8] = {0, 0, 0, 0, 0, 0, 0, 0};
#pragma omp target teams distribute num_teams(8) map(tofrom : partial)
  for (int b = 0; b < 8; ++b) {
    int acc = 0;
    for (int i = b * 100; i < (b + 1) * 100; ++i)
      acc += i;
    partial[b] = acc;
  }
  int total = 0;
  for (int b = 0; b < 8; ++b)
    total += partial[b];
  printf("partial[0] = %d partial[7] = %d total = %d\n", partial[0], partial[7], total);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: teams distribute: each iteration once
// CHECK: PASS: dist_schedule(static, 7): each iteration once
// CHECK: sum = 9003000
// CHECK: partial[0] = 4950 partial[7] = 74950 total = 319600
// CHECK-NOT: FAIL
// CHECK: failures: 0

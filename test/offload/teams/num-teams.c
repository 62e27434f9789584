// num_teams and thread_limit: the runtime may give fewer teams/threads than
// asked for, but never more, and every iteration is still executed once.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <omp.h>
#include <stdio.h>
#include "offload_test.h"

#define N 1024

int main(void) {
  int owner[N], nteams[N], nthreads[N];
  for (int i = 0; i < N; ++i)
    owner[i] = nteams[i] = nthreads[i] = -1;
#pragma omp target teams distribute parallel for num_teams(4) thread_limit(64) \
    map(from : owner, nteams, nthreads)
  for (int i = 0; i < N; ++i) {
    owner[i] = omp_get_team_num();
    nteams[i] = omp_get_num_teams();
    nthreads[i] = omp_get_num_threads();
  }
  int bad_teams = 0, bad_owner = 0, bad_threads = 0;
  for (int i = 0; i < N; ++i) {
    bad_teams += nteams[i] != nteams[0] || nteams[i] < 1 || nteams[i] > 4;
    bad_owner += owner[i] < 0 || owner[i] >= nteams[0];
    bad_threads += nthreads[i] < 1 || nthreads[i] > 64;
  }
  OT_EXPECT(bad_teams == 0, "between 1 and 4 teams");
  OT_EXPECT(bad_owner == 0, "every iteration ran in a valid team");
  OT_EXPECT(bad_threads == 0, "at most 64 threads per team");

  // teams region with a nested parallel region, one team requested.
  int t = -1, th = -1, sum = 0;
#pragma omp target teams num_teams(1) thread_limit(64) map(tofrom : t, th, sum)
  {
    t = omp_get_num_teams();
#pragma omp parallel num_threads(8)
    {
      if (omp_get_thread_num() == 0)
        th = omp_get_num_threads();
    }
    for (int i = 0; i < 100; ++i)
      sum += i;
  }
  printf("teams = %d sum = %d\n", t, sum);
  OT_EXPECT(th >= 1 && th <= 8, "nested parallel has 1..8 threads");
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: between 1 and 4 teams
// CHECK: PASS: every iteration ran in a valid team
// CHECK: PASS: at most 64 threads per team
// CHECK: teams = 1 sum = 4950
// CHECK: PASS: nested parallel has 1..8 threads
// CHECK-NOT: FAIL
// CHECK: failures: 0

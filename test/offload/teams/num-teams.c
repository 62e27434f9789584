// num_teams and thread_limit: the runtime may give fewer teams/threads than
// asked for, but never more, and every iteration is still executed once.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <omp.h>
#include <stdio.h>
#include "offload_test.h"

#define N 1024

int main(void) {
  int owner[N];
  int nteams = -1, maxthreads = -1;
  for (int i = 0; i < N; ++i)
    owner[i] = -1;
#pragma omp target teams num_teams(4) thread_limit(64) map(tofrom : owner, nteams, maxthreads)
  {
    if (omp_get_team_num() == 0)
      nteams = omp_get_num_teams();
#pragma omp distribute parallel for
    for (int i = 0; i < N; ++i) {
      owner[i] = omp_get_team_num();
      if (i == 0)
        maxthreads = omp_get_num_threads();
    }
  }
  printf("teams in [1,4]: %d\n", nteams >= 1 && nteams <= 4);
  printf("threads in [1,64]: %d\n", maxthreads >= 1 && maxthreads <= 64);
  int bad = 0;
  for (int i = 0; i < N; ++i)
    bad += owner[i] < 0 || owner[i] >= nteams;
  OT_EXPECT(bad == 0, "every iteration ran in a valid team");

  // One team, one thread.
  int t = -1, th = -1, sum = 0;
#pragma omp target teams num_teams(1) thread_limit(1) map(tofrom : t, th, sum)
  {
    t = omp_get_num_teams();
#pragma omp parallel
    {
#pragma omp single
      th = omp_get_num_threads();
    }
    for (int i = 0; i < 100; ++i)
      sum += i;
  }
  printf("teams = %d threads = %d sum = %d\n", t, th, sum);
  OT_SUMMARY();
  return 0;
}

// CHECK: teams in [1,4]: 1
// CHECK: threads in [1,64]: 1
// CHECK: PASS: every iteration ran in a valid team
// CHECK: teams = 1 threads = 1 sum = 4950
// CHECK-NOT: FAIL
// CHECK: failures: 0

// Launch geometry on the host plugin, read inside each region by team 0
// thread 0 with omp_get_num_teams() and omp_get_num_threads(), for the
// constructs of launch-geometry-nvptx.c. The stock x86_64 plugin calls a
// region's host code once, and libomp, not the plugin, forms the teams and
// threads: one team unless num_teams asks for more, threads from the
// OpenMP settings, whatever the trip count. Ours must give the same, and
// the stock plugin runs here as well to show that it does.
//
// The settings are pinned because libomp's defaults follow the machine:
// OMP_NUM_THREADS=3 and OMP_TEAMS_THREAD_LIMIT=3 give every team and
// parallel region 3 threads, thread_limit(64) included (it only caps), and
// KMP_TEAMS_THREAD_LIMIT=64 lets num_teams(7) have its 7 teams of 3 where
// libomp would otherwise cap the teams' threads at the number of cores.
//
// REQUIRES: host-plugin
//
// RUN: %libomptarget-compile-generic
// RUN: env OMP_NUM_THREADS=3 OMP_TEAMS_THREAD_LIMIT=3 KMP_TEAMS_THREAD_LIMIT=64 \
// RUN:   %libomptarget-run-generic | %fcheck-generic --match-full-lines
// The stock run goes without LeakSanitizer's exit check, as in
// printf/order.c: the stock plugin's leaks are not ours to find.
// RUN: env OMP_NUM_THREADS=3 OMP_TEAMS_THREAD_LIMIT=3 KMP_TEAMS_THREAD_LIMIT=64 \
// RUN:   ASAN_OPTIONS=detect_leaks=0 LD_LIBRARY_PATH=%stock-ld-path \
// RUN:   OFFLOADIO_EXPECT_PLUGIN_DIR=%stock-ld-path %libomptarget-run-generic \
// RUN:   | %fcheck-generic --match-full-lines

#include <omp.h>
#include <stdio.h>

/// Team 0 thread 0 writes the teams and threads it runs with into G.
#define RECORD(G)                                                              \
  do {                                                                         \
    if (omp_get_team_num() == 0 && omp_get_thread_num() == 0) {                \
      (G)[0] = omp_get_num_teams();                                            \
      (G)[1] = omp_get_num_threads();                                          \
    }                                                                          \
  } while (0)

#define RESET(G) ((G)[0] = (G)[1] = -1)

int main(void) {
  int g[2];

  RESET(g);
#pragma omp target teams distribute map(tofrom : g)
  for (int i = 0; i < 1024; ++i) {
#pragma omp parallel
    if (i == 0)
      RECORD(g);
  }
  printf("distribute 1024, nested parallel: teams %d, parallel threads %d\n",
         g[0], g[1]);

  RESET(g);
#pragma omp target teams distribute thread_limit(64) map(tofrom : g)
  for (int i = 0; i < 1024; ++i) {
#pragma omp parallel
    if (i == 0)
      RECORD(g);
  }
  printf("distribute 1024, thread_limit(64), nested parallel: teams %d, "
         "parallel threads %d\n",
         g[0], g[1]);

  RESET(g);
#pragma omp target teams distribute map(tofrom : g)
  for (int i = 0; i < 1000000; ++i)
    if (i == 0)
      RECORD(g);
  printf("distribute 1000000: teams %d\n", g[0]);

  RESET(g);
#pragma omp target teams distribute parallel for map(tofrom : g)
  for (int i = 0; i < 1024; ++i)
    RECORD(g);
  printf("distribute parallel for 1024: teams %d, threads %d\n", g[0], g[1]);

  RESET(g);
#pragma omp target teams distribute parallel for map(tofrom : g)
  for (int i = 0; i < (1 << 25); ++i)
    RECORD(g);
  printf("distribute parallel for 2^25: teams %d, threads %d\n", g[0], g[1]);

  RESET(g);
#pragma omp target teams distribute parallel for thread_limit(64) map(tofrom : g)
  for (int i = 0; i < 1024; ++i)
    RECORD(g);
  printf("distribute parallel for 1024, thread_limit(64): teams %d, "
         "threads %d\n",
         g[0], g[1]);

  RESET(g);
#pragma omp target teams distribute parallel for num_teams(7) map(tofrom : g)
  for (int i = 0; i < 1024; ++i)
    RECORD(g);
  printf("distribute parallel for 1024, num_teams(7): teams %d, threads %d\n",
         g[0], g[1]);

  RESET(g);
#pragma omp target teams map(tofrom : g)
  RECORD(g);
  printf("teams: teams %d\n", g[0]);

  RESET(g);
#pragma omp target parallel map(tofrom : g)
  RECORD(g);
  printf("parallel: teams %d, threads %d\n", g[0], g[1]);
  return 0;
}

// CHECK: distribute 1024, nested parallel: teams 1, parallel threads 3
// CHECK: distribute 1024, thread_limit(64), nested parallel: teams 1, parallel threads 3
// CHECK: distribute 1000000: teams 1
// CHECK: distribute parallel for 1024: teams 1, threads 3
// CHECK: distribute parallel for 2^25: teams 1, threads 3
// CHECK: distribute parallel for 1024, thread_limit(64): teams 1, threads 3
// CHECK: distribute parallel for 1024, num_teams(7): teams 7, threads 3
// CHECK: teams: teams 1
// CHECK: parallel: teams 1, threads 3

// Launch geometry on the CUDA plugin, read inside each region by team 0
// thread 0 with omp_get_num_teams() and omp_get_num_threads(). The rules
// are those of LLVM 16's stock CUDA plugin (warp size 32, 128 threads and
// 3200 teams by default on an H100):
//  - threads: thread_limit(N) gives N, plus one warp in generic mode, where
//    the main thread runs alone in a warp of its own, so that a parallel
//    region still gets N; without the clause 128, so that a parallel
//    region in generic mode gets 96; never more than the kernel allows;
//  - teams: num_teams(T) gives T; otherwise a loop of L iterations gives
//    ceil(L / threads) in SPMD mode and L in generic and generic-SPMD mode
//    (a team per iteration of the distribute loop), at most 3200; no loop,
//    3200.
//
// The program is built twice. At -O0 the `teams distribute` and `teams`
// kernels are generic; at -O2 clang's OpenMP optimizer rewrites the two
// with a nested parallel region into generic-SPMD kernels, and leaves the
// others generic (their sequential part asks for the thread number). Each
// build first checks the mode of every kernel in its device code, the value
// of <kernel>_exec_mode (1 generic, 2 SPMD, 3 generic-SPMD), so that a
// compiler that decides otherwise fails there and not with a puzzling
// geometry. Both builds also run with the stock plugin, which must give the
// same lines.
//
// REQUIRES: nvptx64-nvidia-cuda
// LLVM 16's rules and device code: since 17 a kernel's mode is in its
// _kernel_environment and the rules differ (RuntimeABIConventionsTest holds
// them against a model of stock 17 and 18).
// UNSUPPORTED: llvm-17, llvm-18
//
// RUN: rm -rf %t.O0 %t.O2 && mkdir -p %t.O0 %t.O2
// RUN: %clang-generic -O0 -save-temps=obj %s -o %t.O0/geometry
// RUN: %fcheck-generic --check-prefix=MODE-O0 \
// RUN:   < %t.O0/launch-geometry-nvptx-openmp-nvptx64-nvidia-cuda.s
// RUN: %run-env %t.O0/geometry | %fcheck-generic --match-full-lines \
// RUN:   --check-prefixes=CHECK,GENERIC
// RUN: env ASAN_OPTIONS=detect_leaks=0 LD_LIBRARY_PATH=%stock-ld-path \
// RUN:   OFFLOADIO_EXPECT_PLUGIN_DIR=%stock-plugin-dir %run-env %t.O0/geometry \
// RUN:   | %fcheck-generic --match-full-lines --check-prefixes=CHECK,GENERIC
// RUN: %clang-generic -O2 -save-temps=obj %s -o %t.O2/geometry
// RUN: %fcheck-generic --check-prefix=MODE-O2 \
// RUN:   < %t.O2/launch-geometry-nvptx-openmp-nvptx64-nvidia-cuda.s
// RUN: %run-env %t.O2/geometry | %fcheck-generic --match-full-lines \
// RUN:   --check-prefixes=CHECK,GSPMD
// RUN: env ASAN_OPTIONS=detect_leaks=0 LD_LIBRARY_PATH=%stock-ld-path \
// RUN:   OFFLOADIO_EXPECT_PLUGIN_DIR=%stock-plugin-dir %run-env %t.O2/geometry \
// RUN:   | %fcheck-generic --match-full-lines --check-prefixes=CHECK,GSPMD

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

  // A team per distribute iteration; the nested parallel region has the
  // launched threads less the main thread's warp in generic mode, all of
  // them in generic-SPMD mode.
  RESET(g);
  // MODE-O0-DAG: _l[[@LINE+2]]_exec_mode = 1;
  // MODE-O2-DAG: _l[[@LINE+1]]_exec_mode = 3;
#pragma omp target teams distribute map(tofrom : g)
  for (int i = 0; i < 1024; ++i) {
#pragma omp parallel
    if (i == 0)
      RECORD(g);
  }
  printf("distribute 1024, nested parallel: teams %d, parallel threads %d\n",
         g[0], g[1]);
  // GENERIC: distribute 1024, nested parallel: teams 1024, parallel threads 96
  // GSPMD: distribute 1024, nested parallel: teams 1024, parallel threads 128

  // thread_limit(64): 64 + 32 launched in generic mode, 64 in generic-SPMD
  // mode; the parallel region gets 64 either way.
  RESET(g);
  // MODE-O0-DAG: _l[[@LINE+2]]_exec_mode = 1;
  // MODE-O2-DAG: _l[[@LINE+1]]_exec_mode = 3;
#pragma omp target teams distribute thread_limit(64) map(tofrom : g)
  for (int i = 0; i < 1024; ++i) {
#pragma omp parallel
    if (i == 0)
      RECORD(g);
  }
  printf("distribute 1024, thread_limit(64), nested parallel: teams %d, "
         "parallel threads %d\n",
         g[0], g[1]);
  // CHECK: distribute 1024, thread_limit(64), nested parallel: teams 1024, parallel threads 64

  // More distribute iterations than the default number of teams.
  RESET(g);
  // MODE-O0-DAG: _l[[@LINE+2]]_exec_mode = 1;
  // MODE-O2-DAG: _l[[@LINE+1]]_exec_mode = 1;
#pragma omp target teams distribute map(tofrom : g)
  for (int i = 0; i < 1000000; ++i)
    if (i == 0)
      RECORD(g);
  printf("distribute 1000000: teams %d\n", g[0]);
  // CHECK: distribute 1000000: teams 3200

  // SPMD: enough teams of 128 threads for a thread per iteration.
  RESET(g);
  // MODE-O0-DAG: _l[[@LINE+2]]_exec_mode = 2;
  // MODE-O2-DAG: _l[[@LINE+1]]_exec_mode = 2;
#pragma omp target teams distribute parallel for map(tofrom : g)
  for (int i = 0; i < 1024; ++i)
    RECORD(g);
  printf("distribute parallel for 1024: teams %d, threads %d\n", g[0], g[1]);
  // CHECK: distribute parallel for 1024: teams 8, threads 128

  RESET(g);
  // MODE-O0-DAG: _l[[@LINE+2]]_exec_mode = 2;
  // MODE-O2-DAG: _l[[@LINE+1]]_exec_mode = 2;
#pragma omp target teams distribute parallel for map(tofrom : g)
  for (int i = 0; i < (1 << 25); ++i)
    RECORD(g);
  printf("distribute parallel for 2^25: teams %d, threads %d\n", g[0], g[1]);
  // CHECK: distribute parallel for 2^25: teams 3200, threads 128

  // SPMD with thread_limit(64): no extra warp, and teams for 64 threads
  // each (100000 / 64 = 1562.5).
  RESET(g);
  // MODE-O0-DAG: _l[[@LINE+2]]_exec_mode = 2;
  // MODE-O2-DAG: _l[[@LINE+1]]_exec_mode = 2;
#pragma omp target teams distribute parallel for thread_limit(64) map(tofrom : g)
  for (int i = 0; i < 1024; ++i)
    RECORD(g);
  printf("distribute parallel for 1024, thread_limit(64): teams %d, "
         "threads %d\n",
         g[0], g[1]);
  // CHECK: distribute parallel for 1024, thread_limit(64): teams 16, threads 64

  RESET(g);
  // MODE-O0-DAG: _l[[@LINE+2]]_exec_mode = 2;
  // MODE-O2-DAG: _l[[@LINE+1]]_exec_mode = 2;
#pragma omp target teams distribute parallel for thread_limit(64) map(tofrom : g)
  for (int i = 0; i < 100000; ++i)
    RECORD(g);
  printf("distribute parallel for 100000, thread_limit(64): teams %d, "
         "threads %d\n",
         g[0], g[1]);
  // CHECK: distribute parallel for 100000, thread_limit(64): teams 1563, threads 64

  // num_teams wins over the trip count.
  RESET(g);
  // MODE-O0-DAG: _l[[@LINE+2]]_exec_mode = 2;
  // MODE-O2-DAG: _l[[@LINE+1]]_exec_mode = 2;
#pragma omp target teams distribute parallel for num_teams(7) map(tofrom : g)
  for (int i = 0; i < 1024; ++i)
    RECORD(g);
  printf("distribute parallel for 1024, num_teams(7): teams %d, threads %d\n",
         g[0], g[1]);
  // CHECK: distribute parallel for 1024, num_teams(7): teams 7, threads 128

  // No loop, no clause: the default number of teams.
  RESET(g);
  // MODE-O0-DAG: _l[[@LINE+2]]_exec_mode = 1;
  // MODE-O2-DAG: _l[[@LINE+1]]_exec_mode = 1;
#pragma omp target teams map(tofrom : g)
  RECORD(g);
  printf("teams: teams %d\n", g[0]);
  // CHECK: teams: teams 3200

  // target parallel: one team, of the default 128 threads.
  RESET(g);
  // MODE-O0-DAG: _l[[@LINE+2]]_exec_mode = 2;
  // MODE-O2-DAG: _l[[@LINE+1]]_exec_mode = 2;
#pragma omp target parallel map(tofrom : g)
  RECORD(g);
  printf("parallel: teams %d, threads %d\n", g[0], g[1]);
  // CHECK: parallel: teams 1, threads 128
  return 0;
}

// Launch geometry on the host plugin, read inside each region by team 0
// thread 0 with omp_get_num_teams() and omp_get_num_threads(), for the
// program of launch-geometry-nvptx.c, built here for the host. The stock x86_64 plugin calls a
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
// RUN:   OFFLOADIO_EXPECT_PLUGIN_DIR=%stock-plugin-dir %libomptarget-run-generic \
// RUN:   | %fcheck-generic --match-full-lines

// The program, with its nvptx64 expectations (ignored here: FileCheck reads
// this file's).
#include "launch-geometry-nvptx.c"

// CHECK: distribute 1024, nested parallel: teams 1, parallel threads 3
// CHECK-NEXT: distribute 1024, thread_limit(64), nested parallel: teams 1, parallel threads 3
// CHECK-NEXT: distribute 1000000: teams 1
// CHECK-NEXT: distribute parallel for 1024: teams 1, threads 3
// CHECK-NEXT: distribute parallel for 2^25: teams 1, threads 3
// CHECK-NEXT: distribute parallel for 1024, thread_limit(64): teams 1, threads 3
// CHECK-NEXT: distribute parallel for 100000, thread_limit(64): teams 1, threads 3
// CHECK-NEXT: distribute parallel for 1024, num_teams(7): teams 7, threads 3
// CHECK-NEXT: teams: teams 1
// CHECK-NEXT: parallel: teams 1, threads 3

// printf order (as in order.c) when the last region's line is the last
// output of the program: no host output follows it and main returns, so
// the line is written only when stdout is flushed at exit. It must be
// there, after everything else.
//
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic | %fcheck-generic --match-full-lines
// RUN: env OFFLOADIO_CUDA_GRAPHS=off %libomptarget-run-generic \
// RUN:   | %fcheck-generic --match-full-lines
// RUN: env OFFLOADIO_CUDA_COMPLETION_FLAG=off %libomptarget-run-generic \
// RUN:   | %fcheck-generic --match-full-lines
// RUN: env OFFLOADIO_PAGEABLE_PATH=staged %libomptarget-run-generic \
// RUN:   | %fcheck-generic --match-full-lines
// The stock plugin, run as in order.c, prints the same.
// RUN: env ASAN_OPTIONS=detect_leaks=0 LD_LIBRARY_PATH=%stock-ld-path \
// RUN:   OFFLOADIO_EXPECT_PLUGIN_DIR=%stock-plugin-dir %libomptarget-run-generic \
// RUN:   | %fcheck-generic --match-full-lines

#include <stdio.h>

int main(void) {
  for (int i = 0; i < 5; ++i) {
#pragma omp target
    printf("device %d\n", i);
    if (i < 4)
      printf("host %d\n", i);
  }
  return 0;
}

// CHECK-NOT: {{.}}
// CHECK: device 0
// CHECK-NEXT: host 0
// CHECK-NEXT: device 1
// CHECK-NEXT: host 1
// CHECK-NEXT: device 2
// CHECK-NEXT: host 2
// CHECK-NEXT: device 3
// CHECK-NEXT: host 3
// CHECK-NEXT: device 4
// CHECK-NOT: {{.}}

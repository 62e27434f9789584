// printf order (as in order.c) with nowait regions: the host waits for each
// region with taskwait before it prints, so the region's line comes first,
// although the region ran, and was waited for, on one of libomp's hidden
// helper threads.
//
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic | %fcheck-generic --match-full-lines
// RUN: env OFFLOADIO_CUDA_GRAPHS=off %libomptarget-run-generic \
// RUN:   | %fcheck-generic --match-full-lines
// RUN: env OFFLOADIO_CUDA_COMPLETION_FLAG=off %libomptarget-run-generic \
// RUN:   | %fcheck-generic --match-full-lines
// RUN: env OFFLOADIO_PAGEABLE_PATH=staged %libomptarget-run-generic \
// RUN:   | %fcheck-generic --match-full-lines
// The stock plugin, run as in order.c, prints the same lines; its CUDA
// plugin does not always write a region's device line before the host's
// next line, so its run checks the lines, not their order.
// RUN: env ASAN_OPTIONS=detect_leaks=0 LD_LIBRARY_PATH=%stock-ld-path \
// RUN:   OFFLOADIO_EXPECT_PLUGIN_DIR=%stock-plugin-dir %libomptarget-run-generic \
// RUN:   | %fcheck-generic --match-full-lines --check-prefix=STOCK
//
// Not under ThreadSanitizer, as the tests in test/offload/nowait: libomp's
// hand-over of a target task between helper threads is invisible to it.
// UNSUPPORTED: thread-sanitizer

#include <stdio.h>

int main(void) {
  for (int i = 0; i < 5; ++i) {
#pragma omp target nowait
    printf("device %d\n", i);
#pragma omp taskwait
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
// CHECK-NEXT: host 4
// CHECK-NOT: {{.}}

// STOCK-DAG: device 0
// STOCK-DAG: host 0
// STOCK-DAG: device 1
// STOCK-DAG: host 1
// STOCK-DAG: device 2
// STOCK-DAG: host 2
// STOCK-DAG: device 3
// STOCK-DAG: host 3
// STOCK-DAG: device 4
// STOCK-DAG: host 4

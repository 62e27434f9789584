// printf in target regions and on the host comes out in program order: the
// line a region prints before the host line printed after the region, with
// stdout on a pipe (lit pipes it: stdout is fully buffered), exactly as
// with the stock plugin. On a GPU the device's lines reach stdout through
// the driver's printf buffer, which has to be emptied into stdout when the
// host waits for the region, whichever way the plugin launches and waits.
//
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic | %fcheck-generic --match-full-lines
// RUN: env OFFLOADIO_CUDA_GRAPHS=off %libomptarget-run-generic \
// RUN:   | %fcheck-generic --match-full-lines
// RUN: env OFFLOADIO_CUDA_COMPLETION_FLAG=off %libomptarget-run-generic \
// RUN:   | %fcheck-generic --match-full-lines
// RUN: env OFFLOADIO_PAGEABLE_PATH=staged %libomptarget-run-generic \
// RUN:   | %fcheck-generic --match-full-lines
// The stock plugin, which the plugin check then expects, prints the same.
// Its run goes without LeakSanitizer's exit check in ASan builds: a block
// the stock plugin allocates through libLLVM and never frees is reported
// there (with libompx_io linked, as in every lit program), and the stock
// plugin's leaks are not ours to find.
// RUN: env ASAN_OPTIONS=detect_leaks=0 LD_LIBRARY_PATH=%stock-ld-path \
// RUN:   OFFLOADIO_EXPECT_PLUGIN_DIR=%stock-plugin-dir %libomptarget-run-generic \
// RUN:   | %fcheck-generic --match-full-lines

#include <stdio.h>

int main(void) {
  for (int i = 0; i < 5; ++i) {
#pragma omp target
    printf("device %d\n", i);
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

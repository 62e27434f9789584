// printf order (as in order.c) when each region also maps a small array
// back: the 64-byte download may go through a bounce buffer copied out when
// the host waits, and the region's line must still come out before the
// host line, which shows the downloaded values.
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
    int v[16];
#pragma omp target map(from : v)
    {
      for (int k = 0; k < 16; ++k)
        v[k] = i * 16 + k;
      printf("device %d\n", i);
    }
    printf("host %d: v[0] = %d, v[15] = %d\n", i, v[0], v[15]);
  }
  return 0;
}

// CHECK-NOT: {{.}}
// CHECK: device 0
// CHECK-NEXT: host 0: v[0] = 0, v[15] = 15
// CHECK-NEXT: device 1
// CHECK-NEXT: host 1: v[0] = 16, v[15] = 31
// CHECK-NEXT: device 2
// CHECK-NEXT: host 2: v[0] = 32, v[15] = 47
// CHECK-NEXT: device 3
// CHECK-NEXT: host 3: v[0] = 48, v[15] = 63
// CHECK-NEXT: device 4
// CHECK-NEXT: host 4: v[0] = 64, v[15] = 79
// CHECK-NOT: {{.}}

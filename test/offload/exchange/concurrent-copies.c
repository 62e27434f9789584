// Device-to-device copies issued concurrently from several host threads
// between all device pairs, each with its own buffers.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <omp.h>
#include <stdio.h>
#include "offload_test.h"

#define N 4096

int main(void) {
  int ndev = omp_get_num_devices();
  int host = omp_get_initial_device();
  int pairs = ndev * ndev;
  int bad = 0;
#pragma omp parallel for num_threads(4) reduction(+ : bad) schedule(dynamic)
  for (int p = 0; p < pairs; ++p) {
    int s = p / ndev, d = p % ndev;
    unsigned *src = (unsigned *)omp_target_alloc(N * sizeof(unsigned), s);
    unsigned *dst = (unsigned *)omp_target_alloc(N * sizeof(unsigned), d);
    unsigned h[N];
    for (int i = 0; i < N; ++i)
      h[i] = (unsigned)(p * 100000 + i);
    bad += omp_target_memcpy(src, h, sizeof(h), 0, 0, s, host) != 0;
    for (int k = 0; k < 4; ++k)
      bad += omp_target_memcpy(dst, src, sizeof(h), 0, 0, d, s) != 0;
    unsigned back[N];
    bad += omp_target_memcpy(back, dst, sizeof(back), 0, 0, host, d) != 0;
    for (int i = 0; i < N; ++i)
      bad += back[i] != (unsigned)(p * 100000 + i);
    omp_target_free(src, s);
    omp_target_free(dst, d);
  }
  OT_EXPECT(bad == 0, "concurrent copies between all device pairs");
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: concurrent copies between all device pairs
// CHECK-NOT: FAIL
// CHECK: failures: 0

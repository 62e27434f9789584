// omp_target_alloc / omp_target_free: device memory used through
// is_device_ptr and omp_target_memcpy, on every device.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <omp.h>
#include <stdio.h>
#include "offload_test.h"

#define N 1000

int main(void) {
  int host = omp_get_initial_device();
  int ndev = omp_get_num_devices();
  int bad = 0;
  for (int d = 0; d < ndev; ++d) {
    int *p = (int *)omp_target_alloc(N * sizeof(int), d);
    if (!p) {
      ++bad;
      continue;
    }
#pragma omp target is_device_ptr(p) device(d) firstprivate(d)
    for (int i = 0; i < N; ++i)
      p[i] = i + d;
    int h[N];
    if (omp_target_memcpy(h, p, N * sizeof(int), 0, 0, host, d) != 0)
      ++bad;
    for (int i = 0; i < N; ++i)
      bad += h[i] != i + d;
    omp_target_free(p, d);
  }
  OT_EXPECT(bad == 0, "alloc, fill on device, copy back, free on every device");

  // Several live allocations are distinct and independent.
  int dev = omp_get_default_device();
  double *a = (double *)omp_target_alloc(64 * sizeof(double), dev);
  double *b = (double *)omp_target_alloc(64 * sizeof(double), dev);
  double *c = (double *)omp_target_alloc(64 * sizeof(double), dev);
  OT_EXPECT(a && b && c && a != b && b != c && a != c, "three distinct allocations");
#pragma omp target is_device_ptr(a, b, c) device(dev)
  for (int i = 0; i < 64; ++i) {
    a[i] = i;
    b[i] = 2.0 * i;
    c[i] = a[i] + b[i];
  }
  double hc[64];
  omp_target_memcpy(hc, c, sizeof(hc), 0, 0, host, dev);
  printf("c[63] = %.1f\n", hc[63]);
  omp_target_free(a, dev);
  omp_target_free(b, dev);
  omp_target_free(c, dev);

  // Allocation on the initial device is plain host memory.
  int *hp = (int *)omp_target_alloc(16 * sizeof(int), host);
  OT_EXPECT(hp != NULL, "alloc on the initial device");
  for (int i = 0; i < 16; ++i)
    hp[i] = i;
  printf("host-device alloc hp[15] = %d\n", hp[15]);
  omp_target_free(hp, host);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: alloc, fill on device, copy back, free on every device
// CHECK: PASS: three distinct allocations
// CHECK: c[63] = 189.0
// CHECK: PASS: alloc on the initial device
// CHECK: host-device alloc hp[15] = 15
// CHECK-NOT: FAIL
// CHECK: failures: 0

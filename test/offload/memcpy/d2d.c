// omp_target_memcpy device-to-device: within one device and between every
// ordered pair of devices.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <omp.h>
#include <stdio.h>
#include "offload_test.h"

#define N 1024

int main(void) {
  int host = omp_get_initial_device();
  int ndev = omp_get_num_devices();
  int tmp[N];

  // Same device.
  int dev = 0;
  int *a = (int *)omp_target_alloc(N * sizeof(int), dev);
  int *b = (int *)omp_target_alloc(N * sizeof(int), dev);
#pragma omp target is_device_ptr(a) device(dev)
  for (int i = 0; i < N; ++i)
    a[i] = 5 * i;
  OT_EXPECT(omp_target_memcpy(b, a, N * sizeof(int), 0, 0, dev, dev) == 0, "D2D same device");
  omp_target_memcpy(tmp, b, sizeof(tmp), 0, 0, host, dev);
  int bad = 0;
  for (int i = 0; i < N; ++i)
    bad += tmp[i] != 5 * i;
  OT_EXPECT(bad == 0, "same-device copy correct");

  // Overlap-free copy inside one allocation (second half <- first half).
  OT_EXPECT(omp_target_memcpy(a, a, (N / 2) * sizeof(int), (N / 2) * sizeof(int), 0, dev,
                              dev) == 0,
            "D2D within one block");
  omp_target_memcpy(tmp, a, sizeof(tmp), 0, 0, host, dev);
  printf("a[0] = %d a[512] = %d a[1023] = %d\n", tmp[0], tmp[512], tmp[1023]);
  omp_target_free(a, dev);
  omp_target_free(b, dev);

  // Every ordered pair of devices.
  int pairs_bad = 0;
  for (int s = 0; s < ndev; ++s) {
    for (int d = 0; d < ndev; ++d) {
      int *src = (int *)omp_target_alloc(N * sizeof(int), s);
      int *dst = (int *)omp_target_alloc(N * sizeof(int), d);
      int tag = 100 * s + d;
#pragma omp target is_device_ptr(src) device(s) firstprivate(tag)
      for (int i = 0; i < N; ++i)
        src[i] = tag + i;
      if (omp_target_memcpy(dst, src, N * sizeof(int), 0, 0, d, s) != 0)
        ++pairs_bad;
      int ok = 0;
#pragma omp target is_device_ptr(dst) device(d) map(from : ok) firstprivate(tag)
      {
        ok = 1;
        for (int i = 0; i < N; ++i)
          ok = ok && dst[i] == tag + i;
      }
      pairs_bad += !ok;
      omp_target_free(src, s);
      omp_target_free(dst, d);
    }
  }
  OT_EXPECT(pairs_bad == 0, "copies between all device pairs");
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: D2D same device
// CHECK: PASS: same-device copy correct
// CHECK: PASS: D2D within one block
// CHECK: a[0] = 0 a[512] = 0 a[1023] = 2555
// CHECK: PASS: copies between all device pairs
// CHECK-NOT: FAIL
// CHECK: failures: 0

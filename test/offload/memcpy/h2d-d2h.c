// omp_target_memcpy host-to-device and device-to-host, checked by a kernel
// that reads what was copied in.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <omp.h>
#include <stdio.h>
#include "offload_test.h"

#define N 4096

int main(void) {
  int dev = omp_get_default_device();
  int host = omp_get_initial_device();
  static double src[N], dst[N];
  for (int i = 0; i < N; ++i) {
    src[i] = 0.25 * i;
    dst[i] = -1.0;
  }
  double *d = (double *)omp_target_alloc(N * sizeof(double), dev);
  OT_EXPECT(omp_target_memcpy(d, src, N * sizeof(double), 0, 0, dev, host) == 0, "H2D");

  double sum = 0;
#pragma omp target teams distribute parallel for reduction(+ : sum) is_device_ptr(d) \
    device(dev)
  for (int i = 0; i < N; ++i) {
    sum += d[i];
    d[i] = d[i] * 4.0;
  }
  printf("device sum of copied data = %.2f\n", sum);

  OT_EXPECT(omp_target_memcpy(dst, d, N * sizeof(double), 0, 0, host, dev) == 0, "D2H");
  int bad = 0;
  for (int i = 0; i < N; ++i)
    bad += dst[i] != (double)i;
  OT_EXPECT(bad == 0, "D2H data correct");

  // Single bytes and odd lengths.
  unsigned char bytes[7] = {1, 2, 3, 4, 5, 6, 7}, back[7] = {0};
  unsigned char *db = (unsigned char *)omp_target_alloc(7, dev);
  OT_EXPECT(omp_target_memcpy(db, bytes, 7, 0, 0, dev, host) == 0, "H2D 7 bytes");
  OT_EXPECT(omp_target_memcpy(back, db, 7, 0, 0, host, dev) == 0, "D2H 7 bytes");
  printf("bytes back: %d %d %d %d %d %d %d\n", back[0], back[1], back[2], back[3], back[4],
         back[5], back[6]);
  omp_target_free(db, dev);
  omp_target_free(d, dev);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: H2D
// CHECK: device sum of copied data = 2096640.00
// CHECK: PASS: D2H
// CHECK: PASS: D2H data correct
// CHECK: PASS: H2D 7 bytes
// CHECK: PASS: D2H 7 bytes
// CHECK: bytes back: 1 2 3 4 5 6 7
// CHECK-NOT: FAIL
// CHECK: failures: 0

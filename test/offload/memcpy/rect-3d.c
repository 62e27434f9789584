// omp_target_memcpy_rect on 3D volumes with offsets in every dimension,
// host -> device -> host, and a device-to-device copy between devices.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <omp.h>
#include <stdio.h>
#include "offload_test.h"

#define X 6
#define Y 7
#define Z 8

int main(void) {
  int dev = omp_get_default_device();
  int host = omp_get_initial_device();
  int ndev = omp_get_num_devices();
  static double h[X][Y][Z];
  for (int i = 0; i < X; ++i)
    for (int j = 0; j < Y; ++j)
      for (int k = 0; k < Z; ++k)
        h[i][j][k] = i * 10000 + j * 100 + k;

  double *d = (double *)omp_target_alloc(sizeof(h), dev);
  static double zero[X][Y][Z];
  omp_target_memcpy(d, zero, sizeof(zero), 0, 0, dev, host);

  size_t dims[3] = {X, Y, Z};
  size_t vol[3] = {2, 3, 4};
  size_t src_off[3] = {1, 2, 3};
  size_t dst_off[3] = {4, 0, 1};
  OT_EXPECT(omp_target_memcpy_rect(d, h, sizeof(double), 3, vol, dst_off, src_off, dims, dims,
                                   dev, host) == 0,
            "3D H2D subvolume");

  // Check on the device: count and sum the non-zero elements.
  int count = 0;
  double sum = 0;
#pragma omp target is_device_ptr(d) map(from : count, sum) device(dev)
  {
    int c = 0;
    double s = 0;
    for (int i = 0; i < X * Y * Z; ++i)
      if (d[i] != 0.0) {
        ++c;
        s += d[i];
      }
    count = c;
    sum = s;
  }
  printf("device nonzero = %d sum = %.0f\n", count, sum);

  // Copy the subvolume back into a compact 2x3x4 host array.
  double box[2][3][4];
  size_t box_dims[3] = {2, 3, 4};
  size_t box_off[3] = {0, 0, 0};
  OT_EXPECT(omp_target_memcpy_rect(box, d, sizeof(double), 3, vol, box_off, dst_off,
                                   box_dims, dims, host, dev) == 0,
            "3D D2H subvolume");
  int bad = 0;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k)
        bad += box[i][j][k] != (i + 1) * 10000 + (j + 2) * 100 + (k + 3);
  OT_EXPECT(bad == 0, "subvolume round trip");
  printf("box[0][0][0] = %.0f box[1][2][3] = %.0f\n", box[0][0][0], box[1][2][3]);

  // Device to another device (the last one), same layout.
  int other = ndev - 1;
  double *e = (double *)omp_target_alloc(sizeof(h), other);
  omp_target_memcpy(e, zero, sizeof(zero), 0, 0, other, host);
  OT_EXPECT(omp_target_memcpy_rect(e, d, sizeof(double), 3, vol, dst_off, dst_off, dims, dims,
                                   other, dev) == 0,
            "3D D2D subvolume");
  static double back[X][Y][Z];
  omp_target_memcpy(back, e, sizeof(back), 0, 0, host, other);
  printf("back[4][0][1] = %.0f back[5][2][4] = %.0f back[0][0][0] = %.0f\n", back[4][0][1],
         back[5][2][4], back[0][0][0]);
  omp_target_free(d, dev);
  omp_target_free(e, other);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: 3D H2D subvolume
// CHECK: device nonzero = 24 sum = 367308
// CHECK: PASS: 3D D2H subvolume
// CHECK: PASS: subvolume round trip
// CHECK: box[0][0][0] = 10203 box[1][2][3] = 20406
// CHECK: PASS: 3D D2D subvolume
// CHECK: back[4][0][1] = 10203 back[5][2][4] = 20406 back[0][0][0] = 0
// CHECK-NOT: FAIL
// CHECK: failures: 0

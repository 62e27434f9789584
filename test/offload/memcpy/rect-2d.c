// omp_target_memcpy_rect on 2D arrays: sub-blocks with offsets between host
// and device, device and device, and back.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <omp.h>
#include <stdio.h>
#include "offload_test.h"

#define R 10
#define C 12

int main(void) {
  int dev = omp_get_default_device();
  int host = omp_get_initial_device();
  int h[R][C];
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < C; ++j)
      h[i][j] = i * 100 + j;
  int *d = (int *)omp_target_alloc(sizeof(h), dev);
  int zero[R][C] = {{0}};
  omp_target_memcpy(d, zero, sizeof(zero), 0, 0, dev, host);

  // Copy the 3x4 block starting at host (2,5) to device (6,1).
  size_t vol[2] = {3, 4};
  size_t dims[2] = {R, C};
  size_t src_off[2] = {2, 5};
  size_t dst_off[2] = {6, 1};
  OT_EXPECT(omp_target_memcpy_rect(d, h, sizeof(int), 2, vol, dst_off, src_off, dims, dims,
                                   dev, host) == 0,
            "2D H2D sub-block");

  int back[R][C];
  omp_target_memcpy(back, d, sizeof(back), 0, 0, host, dev);
  int bad = 0, nonzero = 0;
  for (int i = 0; i < R; ++i)
    for (int j = 0; j < C; ++j) {
      int in_block = i >= 6 && i < 9 && j >= 1 && j < 5;
      int expect = in_block ? (i - 4) * 100 + (j + 4) : 0;
      bad += back[i][j] != expect;
      nonzero += back[i][j] != 0;
    }
  OT_EXPECT(bad == 0, "only the target block was written");
  printf("nonzero = %d back[6][1] = %d back[8][4] = %d\n", nonzero, back[6][1], back[8][4]);

  // Device-to-device: copy the block to a second device array with
  // different dimensions (5x6), at (1,2).
  int *d2 = (int *)omp_target_alloc(5 * 6 * sizeof(int), dev);
  int zero2[5][6] = {{0}};
  omp_target_memcpy(d2, zero2, sizeof(zero2), 0, 0, dev, host);
  size_t dims2[2] = {5, 6};
  size_t off2[2] = {1, 2};
  OT_EXPECT(omp_target_memcpy_rect(d2, d, sizeof(int), 2, vol, off2, dst_off, dims2, dims,
                                   dev, dev) == 0,
            "2D D2D between different shapes");
  int small[5][6];
  omp_target_memcpy(small, d2, sizeof(small), 0, 0, host, dev);
  printf("small rows: %d %d %d %d %d %d | %d %d %d %d %d %d\n", small[1][0], small[1][1],
         small[1][2], small[1][3], small[1][4], small[1][5], small[3][0], small[3][1],
         small[3][2], small[3][3], small[3][4], small[3][5]);

  // Device-to-host sub-block into a fresh host array at (0,0).
  int out[3][4];
  size_t dims_out[2] = {3, 4};
  size_t zero_off[2] = {0, 0};
  OT_EXPECT(omp_target_memcpy_rect(out, d2, sizeof(int), 2, vol, zero_off, off2, dims_out,
                                   dims2, host, dev) == 0,
            "2D D2H sub-block");
  printf("out[0][0] = %d out[2][3] = %d\n", out[0][0], out[2][3]);
  omp_target_free(d, dev);
  omp_target_free(d2, dev);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: 2D H2D sub-block
// CHECK: PASS: only the target block was written
// CHECK: nonzero = 12 back[6][1] = 205 back[8][4] = 408
// CHECK: PASS: 2D D2D between different shapes
// CHECK: small rows: 0 0 205 206 207 208 | 0 0 405 406 407 408
// CHECK: PASS: 2D D2H sub-block
// CHECK: out[0][0] = 205 out[2][3] = 408
// CHECK-NOT: FAIL
// CHECK: failures: 0

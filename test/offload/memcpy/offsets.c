// omp_target_memcpy with dst_offset and src_offset in every direction.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <omp.h>
#include <stdio.h>
#include "offload_test.h"

int main(void) {
  int dev = omp_get_default_device();
  int host = omp_get_initial_device();
  char h[64];
  for (int i = 0; i < 64; ++i)
    h[i] = (char)i;
  char *d = (char *)omp_target_alloc(64, dev);
  // Zero the device block first.
  char zero[64] = {0};
  omp_target_memcpy(d, zero, 64, 0, 0, dev, host);

  // Host h[10..19] -> device d[40..49].
  OT_EXPECT(omp_target_memcpy(d, h, 10, 40, 10, dev, host) == 0, "H2D with offsets");
  char back[64];
  omp_target_memcpy(back, d, 64, 0, 0, host, dev);
  printf("d[39] d[40] d[49] d[50] = %d %d %d %d\n", back[39], back[40], back[49], back[50]);

  // Device d[40..44] -> device d[0..4].
  OT_EXPECT(omp_target_memcpy(d, d, 5, 0, 40, dev, dev) == 0, "D2D with offsets");
  // Device d[0..2] -> host out[5..7].
  char out[10] = {0};
  OT_EXPECT(omp_target_memcpy(out, d, 3, 5, 0, host, dev) == 0, "D2H with offsets");
  printf("out = %d %d %d %d %d\n", out[4], out[5], out[6], out[7], out[8]);

  // Host to host through the initial device.
  char hh[8] = {0};
  OT_EXPECT(omp_target_memcpy(hh, h, 4, 2, 60, host, host) == 0, "host-to-host with offsets");
  printf("hh = %d %d %d %d %d %d\n", hh[1], hh[2], hh[3], hh[4], hh[5], hh[6]);
  omp_target_free(d, dev);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: H2D with offsets
// CHECK: d[39] d[40] d[49] d[50] = 0 10 19 0
// CHECK: PASS: D2D with offsets
// CHECK: PASS: D2H with offsets
// CHECK: out = 0 10 11 12 0
// CHECK: PASS: host-to-host with offsets
// CHECK: hh = 0 60 61 62 63 0
// CHECK-NOT: FAIL
// CHECK: failures: 0

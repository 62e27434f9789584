// omp_target_memcpy and omp_target_memcpy_rect through the amdgpu plugin:
// host -> device, device -> host, device -> device on one GPU and across
// GPUs (data_exchange), for small buffers (staged through pinned bounce
// buffers), large ones (locked for the copy) and unaligned offsets.  The
// HSA emulation aborts on any copy whose buffers the DMA engine could not
// reach (HSA_EMU_STRICT, its default), so every pointer the plugin hands to
// hsa_amd_memory_async_copy must be device-accessible.
//
// REQUIRES: amdgcn-amd-amdhsa
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic | %fcheck-generic
// The same program on LLVM 16's own amdgpu plugin prints the same
// (test/hsa-emu/README.md, "The stock plugin on the emulation").
// RUN: %run-stock-generic | %fcheck-generic

#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "offload_test.h"

int Anchor[4];
#pragma omp declare target(Anchor)

static void fill(unsigned char *p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; ++i)
    p[i] = (unsigned char)(i * 131u + seed);
}

static int check(const unsigned char *p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] != (unsigned char)(i * 131u + seed))
      return 0;
  return 1;
}

int main(void) {
  int ndev = omp_get_num_devices();
  int host = omp_get_initial_device();
  OT_EXPECT(ndev > 0, "devices");
  if (ndev == 0) {
    OT_SUMMARY();
    return 1;
  }

  static const size_t sizes[] = {1, 100, 4099, 1 << 20, (3 << 20) + 17};
  for (unsigned k = 0; k < sizeof(sizes) / sizeof(sizes[0]); ++k) {
    size_t n = sizes[k];
    unsigned char *src = malloc(n + 64), *dst = malloc(n + 64);
    unsigned char *d1 = omp_target_alloc(n + 64, 0);
    unsigned char *d2 = omp_target_alloc(n + 64, 0);
    fill(src, n + 64, k);
    memset(dst, 0, n + 64);
    // Odd offsets on both sides.
    int rc = omp_target_memcpy(d1, src, n, 3, 5, 0, host);
    rc |= omp_target_memcpy(d2, d1, n, 7, 3, 0, 0);
    rc |= omp_target_memcpy(dst, d2, n, 1, 7, host, 0);
    OT_EXPECT(rc == 0 && check(dst + 1, n, k + 5 * 131u),
              "%zu bytes host -> device -> device -> host", n);
    omp_target_free(d1, 0);
    omp_target_free(d2, 0);
    free(src);
    free(dst);
  }

  // Across GPUs: device 0 -> device 1 -> host.
  {
    size_t n = (1 << 20) + 3;
    unsigned char *src = malloc(n), *dst = calloc(n, 1);
    fill(src, n, 9);
    int other = ndev > 1 ? 1 : 0;
    unsigned char *a = omp_target_alloc(n, 0), *b = omp_target_alloc(n, other);
    int rc = omp_target_memcpy(a, src, n, 0, 0, 0, host);
    rc |= omp_target_memcpy(b, a, n, 0, 0, other, 0);
    rc |= omp_target_memcpy(dst, b, n, 0, 0, host, other);
    OT_EXPECT(rc == 0 && check(dst, n, 9), "device 0 -> device %s -> host",
              ndev > 1 ? "1" : "0 (one GPU)");
    omp_target_free(a, 0);
    omp_target_free(b, other);
    free(src);
    free(dst);
  }

  // A 2-D sub-block with memcpy_rect.
  {
    enum { R = 8, C = 10 };
    int h[R][C], out[R][C];
    for (int i = 0; i < R; ++i)
      for (int j = 0; j < C; ++j) {
        h[i][j] = i * 100 + j;
        out[i][j] = -1;
      }
    int *d = omp_target_alloc(sizeof(h), 0);
    size_t vol[2] = {3, 4}, off[2] = {2, 5}, zero[2] = {0, 0};
    size_t dims[2] = {R, C};
    int rc = omp_target_memcpy_rect(d, h, sizeof(int), 2, vol, off, off, dims,
                                    dims, 0, host);
    rc |= omp_target_memcpy_rect(out, d, sizeof(int), 2, vol, zero, off, dims,
                                 dims, host, 0);
    int ok = rc == 0;
    for (int i = 0; i < R; ++i)
      for (int j = 0; j < C; ++j)
        ok &= (i < 3 && j < 4) ? out[i][j] == (i + 2) * 100 + j + 5
                               : out[i][j] == -1;
    OT_EXPECT(ok, "memcpy_rect 3x4 block");
    omp_target_free(d, 0);
  }
  OT_SUMMARY();
  return ot_failures != 0;
}

// CHECK: PASS: devices
// CHECK: PASS: 1 bytes host -> device -> device -> host
// CHECK: PASS: 100 bytes host -> device -> device -> host
// CHECK: PASS: 4099 bytes host -> device -> device -> host
// CHECK: PASS: 1048576 bytes host -> device -> device -> host
// CHECK: PASS: 3145745 bytes host -> device -> device -> host
// CHECK: PASS: device 0 -> device
// CHECK: PASS: memcpy_rect 3x4 block
// CHECK-NOT: FAIL
// CHECK: failures: 0

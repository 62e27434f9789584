// Allocation kinds on the amdgpu plugin: omp_target_alloc (DEFAULT, served
// by the framework's small-block cache and by the GPU's coarse-grained pool)
// and llvm_omp_target_alloc_{device,host,shared}.  HOST and SHARED memory come
// from the CPU's fine-grained pool and are usable by the host directly;
// DEVICE memory is reached through copies.  Each is freed with its own kind
// here; test/offload/alloc/free-other-kind.c frees with the others.
//
// LLVM 16's own amdgpu plugin has no pool for SHARED (its allocator says
// "No memory pool for the specified allocation kind"); the rest it serves
// as ours does (test/hsa-emu/README.md, "The stock plugin on the
// emulation"). LLVM 18's serves SHARED too, as ours does.
//
// REQUIRES: amdgcn-amd-amdhsa
// RUN: %libomptarget-compile-run-and-check-generic
// RUN: %if llvm-18 %{ %run-stock-generic | %fcheck-generic %} \
// RUN:   %else %{ %not %run-stock-generic | %fcheck-generic --check-prefix=STOCK %}

#include <omp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "offload_test.h"

extern void *llvm_omp_target_alloc_device(size_t size, int device_num);
extern void *llvm_omp_target_alloc_host(size_t size, int device_num);
extern void *llvm_omp_target_alloc_shared(size_t size, int device_num);
extern void llvm_omp_target_free_device(void *ptr, int device_num);
extern void llvm_omp_target_free_host(void *ptr, int device_num);
extern void llvm_omp_target_free_shared(void *ptr, int device_num);

// An offload entry, so that the image is registered and the plugin is used.
int Anchor[4];
#pragma omp declare target(Anchor)

int main(void) {
  int ndev = omp_get_num_devices();
  OT_EXPECT(ndev > 0, "the amdgpu plugin has devices");
  int host = omp_get_initial_device();

  for (int dev = 0; dev < ndev && dev < 2; ++dev) {
    // Small (cached) and large DEFAULT allocations.
    char *small = omp_target_alloc(24, dev);
    char *large = omp_target_alloc(3 << 20, dev);
    int *d = llvm_omp_target_alloc_device(4096, dev);
    int *h = llvm_omp_target_alloc_host(4096, dev);
    int *s = llvm_omp_target_alloc_shared(4096, dev);
    OT_EXPECT(small && large && d && h, "device %d: DEFAULT, DEVICE and HOST allocate",
              dev);
    OT_EXPECT(s != NULL, "device %d: SHARED allocates", dev);
    if (!small || !large || !d || !h)
      break;
    // Without SHARED memory the round trip ends in malloc'ed memory.
    int *dst = s ? s : malloc(4096);
    OT_EXPECT(small != large && (char *)d != large, "device %d: distinct blocks",
              dev);

    // HOST and SHARED memory is host memory.
    for (int i = 0; i < 1024; ++i) {
      h[i] = i;
      dst[i] = -i;
    }
    // ... and a device-accessible copy source and destination.
    int rc = omp_target_memcpy(d, h, 4096, 0, 0, dev, host);
    rc |= omp_target_memcpy(dst, d, 4096, 0, 0, host, dev);
    int same = 1;
    for (int i = 0; i < 1024; ++i)
      same &= dst[i] == i;
    OT_EXPECT(rc == 0 && same, "device %d: host -> device -> %s round trip", dev,
              s ? "shared" : "malloc");

    // The last byte of a large allocation is reachable.
    char byte = 0x5a, back = 0;
    rc = omp_target_memcpy(large, &byte, 1, (3 << 20) - 1, 0, dev, host);
    rc |= omp_target_memcpy(&back, large, 1, 0, (3 << 20) - 1, host, dev);
    OT_EXPECT(rc == 0 && back == 0x5a, "device %d: end of a 3 MiB block", dev);

    omp_target_free(small, dev);
    omp_target_free(large, dev);
    llvm_omp_target_free_device(d, dev);
    llvm_omp_target_free_host(h, dev);
    if (s)
      llvm_omp_target_free_shared(s, dev);
    else
      free(dst);
  }
  // Zero-byte requests give NULL (libomptarget does not call the plugin).
  OT_EXPECT(omp_target_alloc(0, 0) == NULL, "zero-byte allocation is NULL");
  OT_SUMMARY();
  return ot_failures != 0;
}

// CHECK: PASS: the amdgpu plugin has devices
// CHECK: PASS: device 0: DEFAULT, DEVICE and HOST allocate
// CHECK: PASS: device 0: SHARED allocates
// CHECK: PASS: device 0: host -> device -> shared round trip
// CHECK: PASS: device 0: end of a 3 MiB block
// CHECK-NOT: FAIL
// CHECK: failures: 0

// STOCK: PASS: the amdgpu plugin has devices
// STOCK: PASS: device 0: DEFAULT, DEVICE and HOST allocate
// STOCK: FAIL: device 0: SHARED allocates
// STOCK: PASS: device 0: distinct blocks
// STOCK: PASS: device 0: host -> device -> malloc round trip
// STOCK: PASS: device 0: end of a 3 MiB block
// STOCK: PASS: device 1: DEFAULT, DEVICE and HOST allocate
// STOCK: FAIL: device 1: SHARED allocates
// STOCK: PASS: device 1: host -> device -> malloc round trip
// STOCK: PASS: device 1: end of a 3 MiB block
// STOCK: PASS: zero-byte allocation is NULL
// STOCK: failures: 2

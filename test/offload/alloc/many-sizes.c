// Many live allocations of assorted sizes (tiny to several MiB): all
// distinct and non-overlapping, each holding its own pattern.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "offload_test.h"

#define COUNT 40

int main(void) {
  int dev = omp_get_default_device();
  int host = omp_get_initial_device();
  size_t sizes[COUNT];
  unsigned char *ptrs[COUNT];
  for (int k = 0; k < COUNT; ++k) {
    sizes[k] = (k % 5 == 4) ? ((size_t)(k + 1) << 16) : (size_t)(1u << (k % 14)) + k;
    ptrs[k] = (unsigned char *)omp_target_alloc(sizes[k], dev);
  }
  int null_count = 0;
  for (int k = 0; k < COUNT; ++k)
    null_count += ptrs[k] == NULL;
  OT_EXPECT(null_count == 0, "all %d allocations succeeded", COUNT);

  // Fill every block on the device with its own byte pattern.
  for (int k = 0; k < COUNT; ++k) {
    unsigned char *p = ptrs[k];
    size_t len = sizes[k];
    unsigned char tag = (unsigned char)(k * 7 + 1);
#pragma omp target teams distribute parallel for is_device_ptr(p) device(dev)
    for (size_t i = 0; i < len; ++i)
      p[i] = tag;
  }
  // Read back first/last bytes of every block: overlapping blocks would
  // have been overwritten by a later fill.
  int bad = 0;
  for (int k = 0; k < COUNT; ++k) {
    unsigned char first = 0, last = 0;
    omp_target_memcpy(&first, ptrs[k], 1, 0, 0, host, dev);
    omp_target_memcpy(&last, ptrs[k], 1, 0, sizes[k] - 1, host, dev);
    bad += first != (unsigned char)(k * 7 + 1) || last != (unsigned char)(k * 7 + 1);
  }
  OT_EXPECT(bad == 0, "blocks do not overlap");

  // Free every other block, allocate again, everything still consistent.
  for (int k = 0; k < COUNT; k += 2)
    omp_target_free(ptrs[k], dev);
  for (int k = 0; k < COUNT; k += 2)
    ptrs[k] = (unsigned char *)omp_target_alloc(sizes[k], dev);
  bad = 0;
  for (int k = 1; k < COUNT; k += 2) {
    unsigned char last = 0;
    omp_target_memcpy(&last, ptrs[k], 1, 0, sizes[k] - 1, host, dev);
    bad += last != (unsigned char)(k * 7 + 1);
  }
  OT_EXPECT(bad == 0, "surviving blocks intact after reuse");
  for (int k = 0; k < COUNT; ++k)
    omp_target_free(ptrs[k], dev);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: all 40 allocations succeeded
// CHECK: PASS: blocks do not overlap
// CHECK: PASS: surviving blocks intact after reuse
// CHECK-NOT: FAIL
// CHECK: failures: 0

// Locked memory in real transfers: map clauses and omp_target_memcpy from a
// locked region go by DMA without staging, a copy spanning locked and
// unlocked bytes is split, and the data is right either way.
//
// libomptarget 18.1.8's llvm_omp_target_lock_mem never reaches the plugin
// (it returns NULL; unlock does nothing), so this test of locking through
// that API cannot run there.
// UNSUPPORTED: llvm-18
// RUN: %libomptarget-compile-run-and-check-generic
// RUN: env OFFLOADIO_PAGEABLE_PATH=staged %libomptarget-run-generic | %fcheck-generic
// RUN: env OFFLOADIO_PAGEABLE_PATH=lock %libomptarget-run-generic | %fcheck-generic
// REQUIRES: ompx-io

#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include "offload_test.h"
#include "ompx_io.h"

#include "ompx_lock.h"

#define N (1 << 20)

int main(void) {
  int dev = omp_get_default_device(), host = omp_get_initial_device();
  int *a = malloc(N * sizeof(int));
  for (int i = 0; i < N; ++i)
    a[i] = i;
  OT_EXPECT(llvm_omp_target_lock_mem(a, N * sizeof(int), dev) != NULL,
            "lock the array");
  uint64_t before[OMPX_COPY_NUM_PATHS], after[OMPX_COPY_NUM_PATHS],
      copies[OMPX_COPY_NUM_PATHS];
  ompx_target_copy_counters(dev, before, copies);
#pragma omp target teams distribute parallel for map(tofrom : a[0 : N])
  for (int i = 0; i < N; ++i)
    a[i] = 2 * a[i] + 1;
  ompx_target_copy_counters(dev, after, copies);
  int bad = 0;
  for (int i = 0; i < N; ++i)
    bad += a[i] != 2 * i + 1;
  OT_EXPECT(bad == 0, "target region over a locked array");
  OT_EXPECT(after[OMPX_COPY_PINNED_TO_DEVICE] -
                    before[OMPX_COPY_PINNED_TO_DEVICE] ==
                N * sizeof(int),
            "map to went by DMA from the locked region");
  OT_EXPECT(after[OMPX_COPY_PINNED_FROM_DEVICE] -
                    before[OMPX_COPY_PINNED_FROM_DEVICE] ==
                N * sizeof(int),
            "map from went by DMA into the locked region");

  // Half locked, half not: a second buffer right after a locked one.
  char *two = malloc(2 * 4096);
  memset(two, 'x', 2 * 4096);
  OT_EXPECT(llvm_omp_target_lock_mem(two, 4096, dev) != NULL, "lock first half");
  char *d = omp_target_alloc(2 * 4096, dev);
  ompx_target_copy_counters(dev, before, copies);
  OT_EXPECT(omp_target_memcpy(d, two, 2 * 4096, 0, 0, dev, host) == 0,
            "memcpy across locked and unlocked bytes");
  ompx_target_copy_counters(dev, after, copies);
  uint64_t pinned = after[OMPX_COPY_PINNED_TO_DEVICE] -
                    before[OMPX_COPY_PINNED_TO_DEVICE];
  uint64_t other = after[OMPX_COPY_STAGED_TO_DEVICE] -
                   before[OMPX_COPY_STAGED_TO_DEVICE] +
                   after[OMPX_COPY_LOCKED_TO_DEVICE] -
                   before[OMPX_COPY_LOCKED_TO_DEVICE];
  OT_EXPECT(pinned == 4096 && other == 4096, "split: 4096 pinned + 4096 other");
  char *back = calloc(2, 4096);
  omp_target_memcpy(back, d, 2 * 4096, 0, 0, host, dev);
  OT_EXPECT(memcmp(back, two, 2 * 4096) == 0, "data intact after the split");
  llvm_omp_target_unlock_mem(two, dev);
  llvm_omp_target_unlock_mem(a, dev);
  omp_target_free(d, dev);
  free(back);
  free(two);
  free(a);
  OT_SUMMARY();
  return 0;
}

// CHECK-NOT: FAIL
// CHECK: PASS: target region over a locked array
// CHECK: PASS: map to went by DMA from the locked region
// CHECK: PASS: map from went by DMA into the locked region
// CHECK: PASS: split: 4096 pinned + 4096 other
// CHECK: PASS: data intact after the split
// CHECK: failures: 0

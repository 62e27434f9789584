// omp_target_associate_ptr / omp_target_disassociate_ptr and
// omp_get_mapped_ptr with memory from omp_target_alloc.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <omp.h>
#include <stdio.h>
#include "offload_test.h"

#define N 64

int main(void) {
  int dev = omp_get_default_device();
  int host = omp_get_initial_device();
  int h[N];
  for (int i = 0; i < N; ++i)
    h[i] = i;
  int *d = (int *)omp_target_alloc(N * sizeof(int), dev);
  OT_EXPECT(d != NULL, "omp_target_alloc");
  OT_EXPECT(omp_target_memcpy(d, h, N * sizeof(int), 0, 0, dev, host) == 0, "copy in");

  OT_EXPECT(omp_target_associate_ptr(h, d, N * sizeof(int), 0, dev) == 0, "associate");
  OT_EXPECT(omp_target_is_present(h, dev), "associated memory is present");
  OT_EXPECT(omp_get_mapped_ptr(h, dev) == d, "omp_get_mapped_ptr gives the device block");
  OT_EXPECT(omp_get_mapped_ptr(&h[10], dev) == (void *)(d + 10),
            "omp_get_mapped_ptr of an interior element");

  // Target regions use the associated storage; mapping does not copy
  // because the data is already present.
#pragma omp target map(tofrom : h)
  for (int i = 0; i < N; ++i)
    h[i] *= 3;
  OT_EXPECT(h[5] == 5, "host copy unchanged (no transfer for associated data)");
#pragma omp target update from(h)
  printf("after update: h[5] = %d h[63] = %d\n", h[5], h[63]);

  OT_EXPECT(omp_target_disassociate_ptr(h, dev) == 0, "disassociate");
  OT_EXPECT(!omp_target_is_present(h, dev), "not present after disassociate");
  OT_EXPECT(omp_get_mapped_ptr(h, dev) == NULL, "no mapped pointer after disassociate");

  // Associating with a device offset.
  int *d2 = (int *)omp_target_alloc(2 * N * sizeof(int), dev);
  OT_EXPECT(omp_target_associate_ptr(h, d2, N * sizeof(int), N * sizeof(int), dev) == 0,
            "associate with offset");
  OT_EXPECT(omp_get_mapped_ptr(h, dev) == (void *)(d2 + N), "offset honoured");
#pragma omp target update to(h)
  int back[N];
  OT_EXPECT(omp_target_memcpy(back, d2, N * sizeof(int), 0, N * sizeof(int), host, dev) == 0,
            "copy out through the raw pointer");
  printf("back[5] = %d back[63] = %d\n", back[5], back[63]);
  OT_EXPECT(omp_target_disassociate_ptr(h, dev) == 0, "disassociate again");
  omp_target_free(d, dev);
  omp_target_free(d2, dev);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: omp_target_alloc
// CHECK: PASS: copy in
// CHECK: PASS: associate
// CHECK: PASS: associated memory is present
// CHECK: PASS: omp_get_mapped_ptr gives the device block
// CHECK: PASS: omp_get_mapped_ptr of an interior element
// CHECK: PASS: host copy unchanged (no transfer for associated data)
// CHECK: after update: h[5] = 15 h[63] = 189
// CHECK: PASS: disassociate
// CHECK: PASS: not present after disassociate
// CHECK: PASS: no mapped pointer after disassociate
// CHECK: PASS: associate with offset
// CHECK: PASS: offset honoured
// CHECK: PASS: copy out through the raw pointer
// CHECK: back[5] = 15 back[63] = 189
// CHECK: PASS: disassociate again
// CHECK-NOT: FAIL
// CHECK: failures: 0

// Bad arguments to the allocation API return NULL or are ignored, never
// crash: size 0 and negative sizes, unknown device numbers, freeing NULL,
// freeing through a wrong device number.
//
// libomptarget 18 ends the program ("omptarget fatal error N: Device
// number 'N' out of range") where 16 and 17 return an error for an unknown
// device number, with the stock plugin as with ours: this test of those
// errors cannot run there.
// UNSUPPORTED: llvm-18
// RUN: %libomptarget-compile-run-and-check-generic

#include <omp.h>
#include <stddef.h>
#include <stdio.h>
#include "offload_test.h"

extern void *llvm_omp_target_alloc_device(size_t size, int device_num);
extern void *llvm_omp_target_alloc_host(size_t size, int device_num);
extern void *llvm_omp_target_alloc_shared(size_t size, int device_num);
extern void llvm_omp_target_free_device(void *ptr, int device_num);
extern void llvm_omp_target_free_host(void *ptr, int device_num);
extern void llvm_omp_target_free_shared(void *ptr, int device_num);

int main(void) {
  int dev = omp_get_default_device();
  int host = omp_get_initial_device();
  int ndev = omp_get_num_devices();

  OT_EXPECT(omp_target_alloc(0, dev) == NULL, "size 0 -> NULL");
  OT_EXPECT(omp_target_alloc((size_t)-5, dev) == NULL, "negative size -> NULL");
  OT_EXPECT(omp_target_alloc(0, host) == NULL, "size 0 on the initial device -> NULL");
  OT_EXPECT(omp_target_alloc(16, ndev + 5) == NULL, "unknown device -> NULL");
  OT_EXPECT(omp_target_alloc(16, -7) == NULL, "negative device number -> NULL");
  OT_EXPECT(llvm_omp_target_alloc_device(64, ndev + 1) == NULL,
            "llvm_omp_target_alloc_device on an unknown device -> NULL");
  OT_EXPECT(llvm_omp_target_alloc_host(64, ndev + 1) == NULL,
            "llvm_omp_target_alloc_host on an unknown device -> NULL");
  OT_EXPECT(llvm_omp_target_alloc_shared(64, ndev + 1) == NULL,
            "llvm_omp_target_alloc_shared on an unknown device -> NULL");
  OT_EXPECT(llvm_omp_target_alloc_device(0, dev) == NULL,
            "llvm_omp_target_alloc_device size 0 -> NULL");

  omp_target_free(NULL, dev);
  omp_target_free(NULL, host);
  omp_target_free(NULL, ndev + 3);
  llvm_omp_target_free_device(NULL, dev);
  llvm_omp_target_free_host(NULL, dev);
  llvm_omp_target_free_shared(NULL, dev);
  OT_EXPECT(1, "freeing NULL is harmless");

  // Freeing through an unknown device number does nothing; the block
  // stays usable and is freed properly afterwards.
  int *p = (int *)omp_target_alloc(4 * sizeof(int), dev);
  omp_target_free(p, ndev + 3);
  int v[4] = {1, 2, 3, 4}, w[4] = {0};
  int rc1 = omp_target_memcpy(p, v, sizeof(v), 0, 0, dev, host);
  int rc2 = omp_target_memcpy(w, p, sizeof(w), 0, 0, host, dev);
  OT_EXPECT(rc1 == 0 && rc2 == 0 && w[3] == 4, "block survives a free on a wrong device");
  omp_target_free(p, dev);

  // The runtime still works after all of this.
  int x = 1;
#pragma omp target map(tofrom : x)
  x += 1;
  printf("x = %d\n", x);
  OT_SUMMARY();
  return 0;
}

// CHECK-NOT: FAIL
// CHECK: PASS: size 0 -> NULL
// CHECK: PASS: negative size -> NULL
// CHECK: PASS: size 0 on the initial device -> NULL
// CHECK: PASS: unknown device -> NULL
// CHECK: PASS: negative device number -> NULL
// CHECK: PASS: llvm_omp_target_alloc_device on an unknown device -> NULL
// CHECK: PASS: llvm_omp_target_alloc_host on an unknown device -> NULL
// CHECK: PASS: llvm_omp_target_alloc_shared on an unknown device -> NULL
// CHECK: PASS: llvm_omp_target_alloc_device size 0 -> NULL
// CHECK: PASS: freeing NULL is harmless
// CHECK: PASS: block survives a free on a wrong device
// CHECK: x = 2
// CHECK-NOT: FAIL
// CHECK: failures: 0

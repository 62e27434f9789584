// ompx_target_lock_info: memory locked with llvm_omp_target_lock_mem is
// reported as a region with its exact start, size, device address and
// reference count; a lock inside it shares it; after the last unlock it is
// gone. Memory from llvm_omp_target_alloc_host is an external region from
// allocation to free. Bytes just outside a region are not in it.
//
// libomptarget 18.1.8's llvm_omp_target_lock_mem never reaches the plugin
// (it returns NULL; unlock does nothing), so this test of locking through
// that API cannot run there.
// UNSUPPORTED: llvm-18
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-run-and-check-generic

#include <errno.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "offload_test.h"
#include "ompx_io.h"

#include "ompx_lock.h"
extern void *llvm_omp_target_alloc_host(size_t size, int device_num);
extern void llvm_omp_target_free_host(void *ptr, int device_num);

static void show(const char *what, const void *ptr, int dev,
                 const char *base) {
  ompx_lock_region_t r = {0};
  int rc = ompx_target_lock_info(ptr, dev, &r);
  if (rc == 1)
    printf("%s: 1 start %+lld size %zu refs %llu external %d\n", what,
           (long long)((const char *)r.host_ptr - base), r.size,
           (unsigned long long)r.references, r.external);
  else
    printf("%s: %d\n", what, rc);
}

int main(void) {
  int dev = omp_get_default_device();
  char *mem = malloc(1 << 20);
  show("before lock", mem + 100, dev, mem);

  void *locked = llvm_omp_target_lock_mem(mem + 100, 5000, dev);
  OT_EXPECT(locked != NULL, "lock 5000 bytes at +100");
  show("start", mem + 100, dev, mem);
  show("interior", mem + 2000, dev, mem);
  show("last byte", mem + 5099, dev, mem);
  show("one before", mem + 99, dev, mem);
  show("one past", mem + 5100, dev, mem);
  ompx_lock_region_t r = {0};
  ompx_target_lock_info(mem + 100, dev, &r);
  OT_EXPECT(r.device_ptr == locked, "device address is what lock_mem returned");

  // A lock wholly inside shares the region.
  void *inner = llvm_omp_target_lock_mem(mem + 200, 100, dev);
  OT_EXPECT(inner == (char *)locked + 100, "inner lock shares the region");
  show("after inner lock", mem + 150, dev, mem);
  llvm_omp_target_unlock_mem(mem + 200, dev);
  show("after inner unlock", mem + 150, dev, mem);
  llvm_omp_target_unlock_mem(mem + 100, dev);
  show("after unlock", mem + 100, dev, mem);

  // Runtime-pinned host memory.
  char *pinned = llvm_omp_target_alloc_host(4096, dev);
  show("alloc_host", pinned + 10, dev, pinned);
  void *sub = llvm_omp_target_lock_mem(pinned + 16, 64, dev);
  OT_EXPECT(sub != NULL, "lock inside alloc_host memory");
  show("alloc_host locked inside", pinned + 4095, dev, pinned);
  llvm_omp_target_unlock_mem(pinned + 16, dev);
  show("alloc_host unlocked inside", pinned, dev, pinned);
  show("alloc_host one past", pinned + 4096, dev, pinned);
  llvm_omp_target_free_host(pinned, dev);
  show("alloc_host freed", pinned, dev, pinned);

  // Locks are plugin-wide: every device of the plugin sees them.
  locked = llvm_omp_target_lock_mem(mem, 64, dev);
  int seen = 1;
  for (int d = 0; d < omp_get_num_devices(); ++d) {
    ompx_lock_region_t rd;
    seen &= ompx_target_lock_info(mem + 1, d, &rd) == 1 && rd.size == 64;
  }
  OT_EXPECT(seen, "every device sees the lock");
  llvm_omp_target_unlock_mem(mem, dev);

  errno = 0;
  OT_EXPECT(ompx_target_lock_info(NULL, dev, &r) == -1 && errno == EINVAL,
            "NULL pointer: EINVAL");
  errno = 0;
  OT_EXPECT(ompx_target_lock_info(mem, dev, NULL) == -1 && errno == EINVAL,
            "NULL region: EINVAL");
  free(mem);
  OT_SUMMARY();
  return 0;
}

// CHECK: before lock: 0
// CHECK-NEXT: PASS: lock 5000 bytes at +100
// CHECK-NEXT: start: 1 start +100 size 5000 refs 1 external 0
// CHECK-NEXT: interior: 1 start +100 size 5000 refs 1 external 0
// CHECK-NEXT: last byte: 1 start +100 size 5000 refs 1 external 0
// CHECK-NEXT: one before: 0
// CHECK-NEXT: one past: 0
// CHECK-NEXT: PASS: device address is what lock_mem returned
// CHECK-NEXT: PASS: inner lock shares the region
// CHECK-NEXT: after inner lock: 1 start +100 size 5000 refs 2 external 0
// CHECK-NEXT: after inner unlock: 1 start +100 size 5000 refs 1 external 0
// CHECK-NEXT: after unlock: 0
// CHECK-NEXT: alloc_host: 1 start +0 size 4096 refs 1 external 1
// CHECK-NEXT: PASS: lock inside alloc_host memory
// CHECK-NEXT: alloc_host locked inside: 1 start +0 size 4096 refs 2 external 1
// CHECK-NEXT: alloc_host unlocked inside: 1 start +0 size 4096 refs 1 external 1
// CHECK-NEXT: alloc_host one past: 0
// CHECK-NEXT: alloc_host freed: 0
// CHECK-NEXT: PASS: every device sees the lock
// CHECK-NEXT: PASS: NULL pointer: EINVAL
// CHECK-NEXT: PASS: NULL region: EINVAL
// CHECK-NEXT: failures: 0

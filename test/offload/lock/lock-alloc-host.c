// Memory the runtime pinned itself (llvm_omp_target_alloc_host) is
// registered as external: locks inside it count references and return
// addresses inside it, and it cannot be freed while such locks remain.
//
// libomptarget 18.1.8's llvm_omp_target_lock_mem never reaches the plugin
// (it returns NULL; unlock does nothing), so this test of locking through
// that API cannot run there.
// UNSUPPORTED: llvm-18
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic 2>%t.err | %fcheck-generic
// RUN: FileCheck --check-prefix=ERR %s < %t.err
// REQUIRES: ompx-io

#include <omp.h>
#include <stdlib.h>
#include "offload_test.h"
#include "ompx_io.h"

#include "ompx_lock.h"
void *llvm_omp_target_alloc_host(size_t Size, int Device);
void llvm_omp_target_free_host(void *Ptr, int Device);

int main(void) {
  int dev = omp_get_default_device();
  char *h = llvm_omp_target_alloc_host(8192, dev);
  OT_EXPECT(h != NULL, "alloc_host");
  ompx_lock_region_t r;
  OT_EXPECT(ompx_target_lock_info(h + 10, dev, &r) == 1 && r.external == 1 &&
                r.host_ptr == h && r.size == 8192,
            "alloc_host memory is an external region");
  char *in = llvm_omp_target_lock_mem(h + 100, 50, dev);
  OT_EXPECT(in != NULL && in >= (char *)r.device_ptr &&
                in < (char *)r.device_ptr + 8192,
            "lock inside it returns an address inside it");
  OT_EXPECT(ompx_target_lock_info(h, dev, &r) == 1 && r.references == 2,
            "the lock counts a reference");
  OT_EXPECT(llvm_omp_target_lock_mem(h + 8000, 400, dev) == NULL,
            "a lock reaching past it is refused");
  // Freeing while a sub-lock remains fails and keeps the memory.
  llvm_omp_target_free_host(h, dev);
  OT_EXPECT(ompx_target_lock_info(h, dev, &r) == 1,
            "free refused while a lock is held");
  llvm_omp_target_unlock_mem(h + 100, dev);
  llvm_omp_target_free_host(h, dev);
  OT_EXPECT(ompx_target_lock_info(h, dev, &r) == 0, "freed after unlock");

  // A plain buffer: info reflects lock and unlock.
  char *p = malloc(4096);
  OT_EXPECT(ompx_target_lock_info(p, dev, &r) == 0, "not locked before");
  llvm_omp_target_lock_mem(p, 4096, dev);
  OT_EXPECT(ompx_target_lock_info(p + 4095, dev, &r) == 1 && r.references == 1 &&
                r.external == 0 && r.size == 4096,
            "locked: region, size and count");
  llvm_omp_target_unlock_mem(p, dev);
  OT_EXPECT(ompx_target_lock_info(p, dev, &r) == 0, "not locked after");
  free(p);
  OT_SUMMARY();
  return 0;
}

// CHECK-NOT: FAIL
// CHECK: PASS: alloc_host
// CHECK: PASS: alloc_host memory is an external region
// CHECK: PASS: lock inside it returns an address inside it
// CHECK: PASS: the lock counts a reference
// CHECK: PASS: a lock reaching past it is refused
// CHECK: PASS: free refused while a lock is held
// CHECK: PASS: freed after unlock
// CHECK: PASS: not locked before
// CHECK: PASS: locked: region, size and count
// CHECK: PASS: not locked after
// CHECK: failures: 0

// ERR: data_delete: {{.*}}still has 1 user locks

// llvm_omp_target_unlock_mem releases one lock taken at its pointer. A
// pointer inside a locked region at which no lock was taken (h + 4096 after
// locking [h, h + 1 MiB)) is refused and reported on stderr, and changes
// nothing: the owner's own unlock of h still releases the region. A
// sub-buffer locked at h + 4096 shares the region and is released at
// h + 4096; once its locks are released that pointer is refused again.
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
#include <stdio.h>
#include <stdlib.h>
#include "offload_test.h"
#include "ompx_io.h"

#include "ompx_lock.h"

static uint64_t refs(char *p, int dev) {
  ompx_lock_region_t r;
  return ompx_target_lock_info(p, dev, &r) == 1 ? r.references : 0;
}

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0);
  int dev = omp_get_default_device();
  size_t mib = 1 << 20;
  char *h = aligned_alloc(4096, 2 * mib);
  if (!h)
    return 2;
  OT_EXPECT(llvm_omp_target_lock_mem(h, mib, dev) != NULL, "lock [h, h+1MiB)");

  fprintf(stderr, "case interior\n");
  llvm_omp_target_unlock_mem(h + 4096, dev);
  OT_EXPECT(refs(h, dev) == 1, "unlock of h+4096 changed nothing");
  fprintf(stderr, "case last byte\n");
  llvm_omp_target_unlock_mem(h + mib - 1, dev);
  OT_EXPECT(refs(h, dev) == 1, "unlock of the last byte changed nothing");

  fprintf(stderr, "case sub-buffer\n");
  char *sub = llvm_omp_target_lock_mem(h + 4096, 4096, dev);
  OT_EXPECT(sub != NULL && refs(h, dev) == 2, "sub-buffer at h+4096 shares");
  llvm_omp_target_unlock_mem(h + 4096, dev);
  OT_EXPECT(refs(h, dev) == 1, "sub-buffer released at h+4096");
  fprintf(stderr, "case sub-buffer released\n");
  llvm_omp_target_unlock_mem(h + 4096, dev);
  OT_EXPECT(refs(h, dev) == 1, "a second unlock of h+4096 changed nothing");

  fprintf(stderr, "case owner\n");
  llvm_omp_target_unlock_mem(h, dev);
  OT_EXPECT(refs(h, dev) == 0, "the owner's unlock releases the region");
  // Released: a larger region can be locked there now.
  OT_EXPECT(llvm_omp_target_lock_mem(h, 2 * mib, dev) != NULL,
            "the range locks again with another size");
  llvm_omp_target_unlock_mem(h, dev);
  fprintf(stderr, "case end\n");
  free(h);
  OT_SUMMARY();
  return 0;
}

// CHECK-NOT: FAIL
// CHECK: PASS: lock [h, h+1MiB)
// CHECK: PASS: unlock of h+4096 changed nothing
// CHECK: PASS: unlock of the last byte changed nothing
// CHECK: PASS: sub-buffer at h+4096 shares
// CHECK: PASS: sub-buffer released at h+4096
// CHECK: PASS: a second unlock of h+4096 changed nothing
// CHECK: PASS: the owner's unlock releases the region
// CHECK: PASS: the range locks again with another size
// CHECK: failures: 0

// ERR-LABEL: case interior
// ERR-NEXT: error: data_unlock: cannot unlock [[H:0x[0-9a-f]+]]: it lies inside the locked region [{{0x[0-9a-f]+}}, {{0x[0-9a-f]+}}) (1048576 bytes) (1 references), but no lock was taken there; unlock the pointer that was locked ({{0x[0-9a-f]+}} for the region itself)
// ERR-NEXT: case last byte
// ERR-NEXT: error: data_unlock: cannot unlock {{0x[0-9a-f]+}}: it lies inside the locked region
// ERR-NEXT: case sub-buffer
// ERR-NEXT: case sub-buffer released
// ERR-NEXT: error: data_unlock: cannot unlock [[H]]: it lies inside the locked region {{.*}} (1 references), but no lock was taken there
// ERR-NEXT: case owner
// ERR-NEXT: case end
// ERR-NOT: data_unlock

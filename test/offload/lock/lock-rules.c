// llvm_omp_target_lock_mem / unlock_mem: every rule of the interval map, as a
// program sees it. A refused lock returns NULL and, under OFFLOADIO_INFO,
// names the region it collides with.
//
// libomptarget 18.1.8's llvm_omp_target_lock_mem never reaches the plugin
// (it returns NULL; unlock does nothing), so this test of locking through
// that API cannot run there.
// UNSUPPORTED: llvm-18
// RUN: %libomptarget-compile-generic
// RUN: env OFFLOADIO_INFO=1 %libomptarget-run-generic 2>%t.err | %fcheck-generic
// RUN: FileCheck --check-prefix=INFO %s < %t.err

#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include "offload_test.h"

#include "ompx_lock.h"

int main(void) {
  int dev = omp_get_default_device();
  char *buf = aligned_alloc(4096, 1 << 20);
  char *base = llvm_omp_target_lock_mem(buf + 4096, 65536, dev);
  OT_EXPECT(base != NULL, "lock a new region");

  // Wholly inside: same region, device pointer = region's + offset.
  char *sub = llvm_omp_target_lock_mem(buf + 4096 + 100, 1000, dev);
  OT_EXPECT(sub == base + 100, "contained sub-buffer gets region + offset");
  char *same = llvm_omp_target_lock_mem(buf + 4096, 65536, dev);
  OT_EXPECT(same == base, "identical range shares the region");

  // Refused: the map does not change.
  OT_EXPECT(llvm_omp_target_lock_mem(buf + 4096 + 65000, 1000, dev) == NULL,
            "extension past the end refused");
  OT_EXPECT(llvm_omp_target_lock_mem(buf + 4000, 200, dev) == NULL,
            "partial overlap from below refused");
  OT_EXPECT(llvm_omp_target_lock_mem(buf, 1 << 19, dev) == NULL,
            "superset refused");
  OT_EXPECT(llvm_omp_target_lock_mem(buf + 4096, 65537, dev) == NULL,
            "same start, longer refused");

  // Adjacent regions, even in the same page, are independent.
  char *left = llvm_omp_target_lock_mem(buf + 4096 - 64, 64, dev);
  char *right = llvm_omp_target_lock_mem(buf + 4096 + 65536, 16, dev);
  OT_EXPECT(left != NULL && right != NULL, "adjacent sub-page regions lock");
  llvm_omp_target_unlock_mem(buf + 4096 - 64, dev);
  llvm_omp_target_unlock_mem(buf + 4096 + 65536, dev);

  // Bad inputs.
  OT_EXPECT(llvm_omp_target_lock_mem(buf, 0, dev) == NULL, "size 0 refused");
  OT_EXPECT(llvm_omp_target_lock_mem(NULL, 64, dev) == NULL, "null refused");
  OT_EXPECT(llvm_omp_target_lock_mem((void *)(UINTPTR_MAX - 10), 64, dev) ==
                NULL,
            "wrapping range refused");
  OT_EXPECT(llvm_omp_target_lock_mem(buf, 64, omp_get_num_devices() + 5) ==
                NULL,
            "unknown device refused");

  // Three references: sub, same and base. Each unlock names the pointer its
  // lock was taken at; an interior pointer no lock was taken at is an error
  // (reported, no change), and so is the fourth unlock.
  llvm_omp_target_unlock_mem(buf + 4096 + 100, dev);
  llvm_omp_target_unlock_mem(buf + 4096 + 5000, dev);
  llvm_omp_target_unlock_mem(buf + 4096, dev);
  char *again = llvm_omp_target_lock_mem(buf + 4096 + 8, 8, dev);
  OT_EXPECT(again == base + 8, "region alive while one reference is left");
  llvm_omp_target_unlock_mem(buf + 4096 + 8, dev);
  llvm_omp_target_unlock_mem(buf + 4096, dev);
  llvm_omp_target_unlock_mem(buf + 4096, dev);
  llvm_omp_target_unlock_mem(buf + 12345, dev);
  // After the last unlock the range is free again and can be re-locked with
  // another size.
  char *bigger = llvm_omp_target_lock_mem(buf, 1 << 19, dev);
  OT_EXPECT(bigger != NULL, "released range can be locked with a new size");
  llvm_omp_target_unlock_mem(buf, dev);
  free(buf);
  OT_SUMMARY();
  return 0;
}

// CHECK-NOT: FAIL
// CHECK: PASS: lock a new region
// CHECK: PASS: contained sub-buffer gets region + offset
// CHECK: PASS: identical range shares the region
// CHECK: PASS: extension past the end refused
// CHECK: PASS: partial overlap from below refused
// CHECK: PASS: superset refused
// CHECK: PASS: same start, longer refused
// CHECK: PASS: adjacent sub-page regions lock
// CHECK: PASS: size 0 refused
// CHECK: PASS: null refused
// CHECK: PASS: wrapping range refused
// CHECK: PASS: unknown device refused
// CHECK: PASS: region alive while one reference is left
// CHECK: PASS: released range can be locked with a new size
// CHECK: failures: 0

// INFO: data_lock refused: cannot lock [{{.*}}) (1000 bytes): it overlaps the locked region [{{.*}}) (65536 bytes)
// INFO: data_lock refused: {{.*}}overlaps the locked region
// INFO: data_lock refused: {{.*}}overlaps the locked region
// INFO: data_lock refused: {{.*}}overlaps the locked region
// INFO: data_unlock: cannot unlock {{.*}}: it lies inside the locked region {{.*}} (2 references), but no lock was taken there
// INFO: data_unlock: cannot unlock {{.*}}: no locked region contains it
// INFO: data_unlock: cannot unlock {{.*}}: no locked region contains it

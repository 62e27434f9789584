// ompx_target_lock_mem / ompx_target_unlock_mem: locking through offload-io's
// plugin directly, on every libomptarget version (18.1.8's
// llvm_omp_target_lock_mem returns NULL without asking the plugin). The
// rules of the map, the errors with errno and ompx_io_last_error, the
// region as ompx_target_lock_info sees it, a copy from the locked region
// taking the locked path, and, where libomptarget passes its own calls on,
// one map for both ways of locking.
//
// RUN: %libomptarget-compile-generic
// RUN: env OFFLOADIO_INFO=1 %libomptarget-run-generic 2>%t.err | %fcheck-generic
// RUN: FileCheck --check-prefix=INFO %s < %t.err

#include <errno.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "offload_test.h"

#include "ompx_io.h"

static int lastErrorSays(const char *What) {
  return strstr(ompx_io_last_error(), What) != NULL;
}

int main(void) {
  int dev = omp_get_default_device();
  char *buf = aligned_alloc(4096, 1 << 20);
  memset(buf, 3, 1 << 20);
  char *base = ompx_target_lock_mem(buf + 4096, 65536, dev);
  OT_EXPECT(base != NULL, "lock a new region");
  ompx_lock_region_t region;
  OT_EXPECT(ompx_target_lock_info(buf + 5000, dev, &region) == 1 &&
                region.host_ptr == buf + 4096 && region.size == 65536 &&
                region.device_ptr == base && region.references == 1,
            "the map holds the exact region");

  char *sub = ompx_target_lock_mem(buf + 4096 + 100, 1000, dev);
  OT_EXPECT(sub == base + 100, "contained sub-buffer gets region + offset");

  errno = 0;
  OT_EXPECT(ompx_target_lock_mem(buf + 4000, 200, dev) == NULL &&
                errno == EINVAL && lastErrorSays("ompx_target_lock_mem"),
            "partial overlap refused with EINVAL, the call named");
  errno = 0;
  OT_EXPECT(ompx_target_lock_mem(buf, 0, dev) == NULL && errno == EINVAL &&
                lastErrorSays("size is 0"),
            "size 0 refused");
  errno = 0;
  OT_EXPECT(ompx_target_lock_mem(NULL, 64, dev) == NULL && errno == EINVAL,
            "null refused");
  errno = 0;
  OT_EXPECT(ompx_target_lock_mem(buf, 64, omp_get_num_devices() + 5) ==
                    NULL &&
                errno == ENODEV,
            "a device no offload-io plugin serves refused with ENODEV");

  // A copy out of the locked region goes by DMA from it.
  uint64_t before[OMPX_COPY_NUM_PATHS], after[OMPX_COPY_NUM_PATHS];
  uint64_t copies[OMPX_COPY_NUM_PATHS];
  void *d = omp_target_alloc(65536, dev);
  OT_EXPECT(d && ompx_target_copy_counters(dev, before, copies) == 0 &&
                omp_target_memcpy(d, buf + 4096, 65536, 0, 0, dev,
                                  omp_get_initial_device()) == 0 &&
                ompx_target_copy_counters(dev, after, copies) == 0 &&
                after[OMPX_COPY_PINNED_TO_DEVICE] -
                        before[OMPX_COPY_PINNED_TO_DEVICE] ==
                    65536,
            "a copy from the region goes by DMA");
  omp_target_free(d, dev);

  // Unlocks: an interior pointer no lock was taken at is refused and
  // changes nothing.
  errno = 0;
  OT_EXPECT(ompx_target_unlock_mem(buf + 4096 + 5000, dev) == -1 &&
                errno == ENOENT && lastErrorSays("no lock was taken there"),
            "interior unlock refused with ENOENT");
  OT_EXPECT(ompx_target_unlock_mem(buf + 4096 + 100, dev) == 0,
            "the sub-buffer's unlock");
  OT_EXPECT(ompx_target_lock_info(buf + 5000, dev, &region) == 1 &&
                region.references == 1,
            "one reference left");
  OT_EXPECT(ompx_target_unlock_mem(buf + 4096, dev) == 0,
            "the region's last unlock");
  OT_EXPECT(ompx_target_lock_info(buf + 5000, dev, &region) == 0,
            "the region is gone");
  errno = 0;
  OT_EXPECT(ompx_target_unlock_mem(buf + 4096, dev) == -1 && errno == ENOENT,
            "an unlock too many refused with ENOENT");

  // One map: where libomptarget passes llvm_omp_target_lock_mem on, its
  // lock and ours share the region.
  char *theirs = llvm_omp_target_lock_mem(buf, 8192, dev);
  if (theirs) {
    char *ours = ompx_target_lock_mem(buf + 64, 64, dev);
    llvm_omp_target_unlock_mem(buf, dev);
    OT_EXPECT(ours == theirs + 64 &&
                  ompx_target_lock_info(buf, dev, &region) == 1 &&
                  region.references == 1 &&
                  ompx_target_unlock_mem(buf + 64, dev) == 0,
              "one map for both ways of locking");
  } else {
    OT_EXPECT(1, "one map for both ways of locking");
  }
  free(buf);
  OT_SUMMARY();
  return 0;
}

// CHECK-NOT: FAIL
// CHECK: PASS: lock a new region
// CHECK: PASS: the map holds the exact region
// CHECK: PASS: contained sub-buffer gets region + offset
// CHECK: PASS: partial overlap refused with EINVAL, the call named
// CHECK: PASS: size 0 refused
// CHECK: PASS: null refused
// CHECK: PASS: a device no offload-io plugin serves refused with ENODEV
// CHECK: PASS: a copy from the region goes by DMA
// CHECK: PASS: interior unlock refused with ENOENT
// CHECK: PASS: the sub-buffer's unlock
// CHECK: PASS: one reference left
// CHECK: PASS: the region's last unlock
// CHECK: PASS: the region is gone
// CHECK: PASS: an unlock too many refused with ENOENT
// CHECK: PASS: one map for both ways of locking
// CHECK: failures: 0

// INFO: device {{[0-9]+}}: cannot lock {{.*}}: it overlaps the locked region
// INFO: device {{[0-9]+}}: cannot unlock {{.*}}: it lies inside the locked region {{.*}}, but no lock was taken there
// INFO: device {{[0-9]+}}: cannot unlock {{.*}}: no locked region contains it

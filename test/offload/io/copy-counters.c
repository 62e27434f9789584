// ompx_target_copy_counters tells how omp_target_memcpy moved the bytes:
// from and to memory locked with llvm_omp_target_lock_mem on the pinned
// paths; from and to unlocked memory staged or locked for the copy, as
// OFFLOADIO_PAGEABLE_PATH forces (auto: the plugin's policy picks one; a
// copy below OFFLOADIO_PARALLEL_STAGING_THRESHOLD is staged serially); a
// range half locked, half not, is split exactly. Counters are per device.
//
// libomptarget 18.1.8's llvm_omp_target_lock_mem never reaches the plugin
// (it returns NULL; unlock does nothing), so this test of locking through
// that API cannot run there.
// UNSUPPORTED: llvm-18
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic
// RUN: env OFFLOADIO_PAGEABLE_PATH=staged %libomptarget-run-generic \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,STAGED
// RUN: env OFFLOADIO_PAGEABLE_PATH=lock %libomptarget-run-generic \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,LOCK
// RUN: env OFFLOADIO_PAGEABLE_PATH=auto OFFLOADIO_PARALLEL_STAGING_THRESHOLD=256K \
// RUN:   %libomptarget-run-generic | %fcheck-generic --check-prefixes=CHECK,AUTO

#include <errno.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "offload_test.h"
#include "ompx_io.h"

#include "ompx_lock.h"

static uint64_t b0[OMPX_COPY_NUM_PATHS], c0[OMPX_COPY_NUM_PATHS];

static void mark(int dev) { ompx_target_copy_counters(dev, b0, c0); }

// Print the paths whose counters moved since mark(): name=bytes/copies.
static void delta(const char *what, int dev) {
  uint64_t b[OMPX_COPY_NUM_PATHS], c[OMPX_COPY_NUM_PATHS];
  ompx_target_copy_counters(dev, b, c);
  printf("%s:", what);
  for (int p = 0; p < OMPX_COPY_NUM_PATHS; ++p)
    if (b[p] != b0[p] || c[p] != c0[p])
      printf(" %s=%llu/%llu", ompx_copy_path_name(p),
             (unsigned long long)(b[p] - b0[p]),
             (unsigned long long)(c[p] - c0[p]));
  printf("\n");
}

#define BIG (1 << 20)
#define SMALL 4096

int main(void) {
  int dev = omp_get_default_device();
  int host = omp_get_initial_device();
  for (int p = 0; p <= OMPX_COPY_NUM_PATHS; ++p)
    printf("copy path %d: %s\n", p, ompx_copy_path_name(p));

  char *dbuf = omp_target_alloc(BIG, dev);
  char *src = malloc(BIG), *dst = malloc(BIG);
  for (int i = 0; i < BIG; ++i)
    src[i] = (char)(i * 5 + 1);

  // Locked memory both ways.
  llvm_omp_target_lock_mem(src, BIG, dev);
  llvm_omp_target_lock_mem(dst, BIG, dev);
  mark(dev);
  omp_target_memcpy(dbuf, src, BIG, 0, 0, dev, host);
  delta("locked to device", dev);
  mark(dev);
  omp_target_memcpy(dst, dbuf, BIG, 0, 0, host, dev);
  delta("locked from device", dev);
  OT_EXPECT(memcmp(src, dst, BIG) == 0, "locked round trip exact");
  llvm_omp_target_unlock_mem(src, dev);
  llvm_omp_target_unlock_mem(dst, dev);

  // Unlocked memory, big and small.
  memset(dst, 0, BIG);
  mark(dev);
  omp_target_memcpy(dbuf, src, BIG, 0, 0, dev, host);
  delta("unlocked big to device", dev);
  mark(dev);
  omp_target_memcpy(dst, dbuf, BIG, 0, 0, host, dev);
  delta("unlocked big from device", dev);
  mark(dev);
  omp_target_memcpy(dbuf, src, SMALL, 0, 0, dev, host);
  delta("unlocked small to device", dev);
  mark(dev);
  omp_target_memcpy(dst, dbuf, SMALL, 0, 0, host, dev);
  delta("unlocked small from device", dev);
  OT_EXPECT(memcmp(src, dst, BIG) == 0, "unlocked round trip exact");

  // Half locked: the first 400000 bytes.
  llvm_omp_target_lock_mem(src, 400000, dev);
  mark(dev);
  omp_target_memcpy(dbuf, src, BIG, 0, 0, dev, host);
  delta("half locked to device", dev);
  llvm_omp_target_unlock_mem(src, dev);

  // Device to device on one device.
  char *dbuf2 = omp_target_alloc(BIG, dev);
  mark(dev);
  omp_target_memcpy(dbuf2, dbuf, 1000, 0, 0, dev, dev);
  delta("device to device", dev);

  // Another device's counters did not move.
  if (omp_get_num_devices() > 1) {
    int other = dev == 0 ? 1 : 0;
    mark(other);
    omp_target_memcpy(dbuf, src, BIG, 0, 0, dev, host);
    delta("other device", other);
  } else {
    printf("other device:\n");
  }

  uint64_t b[OMPX_COPY_NUM_PATHS];
  errno = 0;
  OT_EXPECT(ompx_target_copy_counters(dev, b, NULL) == -1 && errno == EINVAL,
            "NULL copies: EINVAL");
  omp_target_free(dbuf, dev);
  omp_target_free(dbuf2, dev);
  free(src);
  free(dst);
  OT_SUMMARY();
  return 0;
}

// CHECK: copy path 0: pinned-to-device
// CHECK-NEXT: copy path 1: pinned-from-device
// CHECK-NEXT: copy path 2: staged-to-device
// CHECK-NEXT: copy path 3: staged-from-device
// CHECK-NEXT: copy path 4: locked-to-device
// CHECK-NEXT: copy path 5: locked-from-device
// CHECK-NEXT: copy path 6: device-to-device
// CHECK-NEXT: copy path 7: unknown
// CHECK-NEXT: locked to device: pinned-to-device=1048576/1{{$}}
// CHECK-NEXT: locked from device: pinned-from-device=1048576/1{{$}}
// CHECK-NEXT: PASS: locked round trip exact
// STAGED-NEXT: unlocked big to device: staged-to-device=1048576/1{{$}}
// STAGED-NEXT: unlocked big from device: staged-from-device=1048576/1{{$}}
// STAGED-NEXT: unlocked small to device: staged-to-device=4096/1{{$}}
// STAGED-NEXT: unlocked small from device: staged-from-device=4096/1{{$}}
// LOCK-NEXT: unlocked big to device: locked-to-device=1048576/1{{$}}
// LOCK-NEXT: unlocked big from device: locked-from-device=1048576/1{{$}}
// LOCK-NEXT: unlocked small to device: locked-to-device=4096/1{{$}}
// LOCK-NEXT: unlocked small from device: locked-from-device=4096/1{{$}}
// AUTO-NEXT: unlocked big to device: {{(staged|locked)}}-to-device=1048576/1{{$}}
// AUTO-NEXT: unlocked big from device: {{(staged|locked)}}-from-device=1048576/1{{$}}
// AUTO-NEXT: unlocked small to device: staged-to-device=4096/1{{$}}
// AUTO-NEXT: unlocked small from device: staged-from-device=4096/1{{$}}
// CHECK-NEXT: PASS: unlocked round trip exact
// STAGED-NEXT: half locked to device: pinned-to-device=400000/1 staged-to-device=648576/1{{$}}
// LOCK-NEXT: half locked to device: pinned-to-device=400000/1 locked-to-device=648576/1{{$}}
// AUTO-NEXT: half locked to device: pinned-to-device=400000/1 {{(staged|locked)}}-to-device=648576/1{{$}}
// CHECK-NEXT: device to device: device-to-device=1000/1{{$}}
// CHECK-NEXT: other device:{{$}}
// CHECK-NEXT: PASS: NULL copies: EINVAL
// CHECK-NEXT: failures: 0

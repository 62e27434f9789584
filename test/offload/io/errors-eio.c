// EIO from the file reaches the caller unchanged. /proc/self/mem is a real
// file whose offsets are addresses of this process: reading an address with
// nothing readable behind it fails with EIO. A request whose first part is
// readable and whose rest is not fails as a whole with EIO (no silent short
// count), whichever chunk hits the unreadable part; async reads report it at
// ompx_io_wait.
//
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic | %fcheck-generic
// RUN: env OMPX_IO_PATH=staged %libomptarget-run-generic | %fcheck-generic
// RUN: env OMPX_IO_CHUNK_SIZE=64K OMPX_IO_THREADS=4 \
// RUN:   %libomptarget-run-generic | %fcheck-generic
// RUN: env OMPX_IO_CHUNK_SIZE=64K OMPX_IO_THREADS=4 OMPX_IO_PATH=staged \
// RUN:   %libomptarget-run-generic | %fcheck-generic

#define _GNU_SOURCE // memfd_create
#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "offload_io_test.h"
#include "ompx_io.h"
// clang-16's amdgcn device pass includes system headers before the first
// line, too early for the _GNU_SOURCE above, and still parses the host code.
#ifdef __AMDGCN__
int memfd_create(const char *name, unsigned int flags);
#endif

#define MAPPED (512 << 10)

int main(void) {
  int mem = open("/proc/self/mem", O_RDONLY);
  OT_EXPECT(mem >= 0, "/proc/self/mem opened");
  // 1 MiB of address space: the first 512 KiB readable and filled, the rest
  // not. The mapping is of a 512 KiB memfd, so its second half lies past the
  // end of the file: reading it fails as an unmapped address does, but unlike
  // a hole in the address space, nothing else can be mapped there while the
  // test runs (starting a thread maps memory: ThreadSanitizer's 512 KiB per
  // thread filled such a hole exactly).
  int backing = memfd_create("errors-eio", 0);
  if (backing < 0 || ftruncate(backing, MAPPED) != 0)
    return 2;
  unsigned char *region = mmap(NULL, 2 * MAPPED, PROT_READ | PROT_WRITE,
                               MAP_SHARED, backing, 0);
  if (region == MAP_FAILED)
    return 2;
  close(backing);
  for (size_t i = 0; i < MAPPED; ++i)
    region[i] = (unsigned char)(i * 13 + 5);
  off_t base = (off_t)(uintptr_t)region;

  int dev = omp_get_default_device();
  unsigned char *dbuf = omp_target_alloc(2 * MAPPED, dev);
  unsigned char *hbuf = malloc(2 * MAPPED);

  // Sanity: the mapped part reads through the device like any file.
  ssize_t n = ompx_target_pread(mem, dbuf, MAPPED, base, dev);
  omp_target_memcpy(hbuf, dbuf, MAPPED, 0, 0, omp_get_initial_device(), dev);
  OT_EXPECT(n == MAPPED && memcmp(hbuf, region, MAPPED) == 0,
            "mapped addresses read through the device");

  EXPECT_ERRNO(ompx_target_pread(mem, dbuf, 4096, base + MAPPED, dev), EIO,
               "device: unmapped address");
  EXPECT_ERRNO(ompx_target_pread(mem, dbuf, 2 * MAPPED, base, dev), EIO,
               "device: mapped then unmapped, chunk-aligned hole");
  EXPECT_ERRNO(ompx_target_pread(mem, dbuf, MAPPED + 100, base + 1000, dev),
               EIO, "device: mapped then unmapped, hole inside a chunk");

  ompx_io_request_t req = NULL;
  int rc = ompx_target_pread_async(mem, dbuf, 2 * MAPPED, base, dev, &req);
  OT_EXPECT(rc == 0 && req != NULL, "device: async read submitted");
  if (rc == 0) {
    int t = ompx_io_test(req);
    OT_EXPECT(t == 0 || t == 1, "device: ompx_io_test answers 0 or 1");
    EXPECT_ERRNO(ompx_io_wait(req), EIO, "device: async read waits");
  }

  // The initial device: plain host memory.
  int host = omp_get_initial_device();
  EXPECT_ERRNO(ompx_target_pread(mem, hbuf, 4096, base + MAPPED, host), EIO,
               "host: unmapped address");
  EXPECT_ERRNO(ompx_target_pread(mem, hbuf, 2 * MAPPED, base, host), EIO,
               "host: mapped then unmapped");

  // The device is fine afterwards.
  n = ompx_target_pread(mem, dbuf, 4096, base, dev);
  OT_EXPECT(n == 4096, "device reads again after the errors");

  munmap(region, 2 * MAPPED);
  omp_target_free(dbuf, dev);
  free(hbuf);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: /proc/self/mem opened
// CHECK: PASS: mapped addresses read through the device
// CHECK: PASS: device: unmapped address -> -1 EIO
// CHECK: PASS: device: mapped then unmapped, chunk-aligned hole -> -1 EIO
// CHECK: PASS: device: mapped then unmapped, hole inside a chunk -> -1 EIO
// CHECK: PASS: device: async read submitted
// CHECK: PASS: device: ompx_io_test answers 0 or 1
// CHECK: PASS: device: async read waits -> -1 EIO
// CHECK: PASS: host: unmapped address -> -1 EIO
// CHECK: PASS: host: mapped then unmapped -> -1 EIO
// CHECK: PASS: device reads again after the errors
// CHECK-NOT: FAIL
// CHECK: failures: 0

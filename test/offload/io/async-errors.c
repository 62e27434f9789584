// Errors of async transfers: what submission can see (bad descriptor,
// negative offset, unknown device, foreign buffer) fails at once with -1,
// errno set and the request left NULL; what only the transfer finds (ENOSPC
// from /dev/full, EIO from an unreadable /proc/self/mem address) is returned
// by ompx_io_wait. Good requests in flight beside failing ones complete.
//
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic %t.dat | %fcheck-generic
// RUN: env OMPX_IO_PATH=staged OMPX_IO_CHUNK_SIZE=64K \
// RUN:   %libomptarget-run-generic %t.dat | %fcheck-generic

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

#define SIZE (1 << 20)

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
  unsigned char *h = malloc(SIZE);
  for (int i = 0; i < SIZE; ++i)
    h[i] = (unsigned char)(i * 11 + 3);
  if (fd < 0 || pwrite(fd, h, SIZE, 0) != SIZE)
    return 3;
  int dev = omp_get_default_device();
  // Four read targets and, last, the source of the write to /dev/full: the
  // requests run at once, so none may read what another writes.
  char *dbuf = omp_target_alloc(5 * SIZE, dev);
  char *heap = malloc(64);

  // Submission errors.
  ompx_io_request_t req = NULL;
  EXPECT_ERRNO(ompx_target_pread_async(-1, dbuf, 64, 0, dev, &req), EBADF,
               "submit: bad fd");
  OT_EXPECT(req == NULL, "request NULL after EBADF");
  EXPECT_ERRNO(ompx_target_pread_async(fd, dbuf, 64, -7, dev, &req), EINVAL,
               "submit: negative offset");
  OT_EXPECT(req == NULL, "request NULL after EINVAL");
  EXPECT_ERRNO(ompx_target_pread_async(fd, dbuf, 64, 0,
                                       omp_get_num_devices() + 1, &req),
               ENODEV, "submit: unknown device");
  OT_EXPECT(req == NULL, "request NULL after ENODEV");
  EXPECT_ERRNO(ompx_target_pwrite_async(fd, heap, 64, 0, dev, &req), EFAULT,
               "submit: malloc buffer");
  OT_EXPECT(req == NULL, "request NULL after EFAULT");

  // Transfer errors, with good requests in flight around them.
  int full = open("/dev/full", O_WRONLY);
  int mem = open("/proc/self/mem", O_RDONLY);
  // The second half of a mapping of a SIZE-byte memfd lies past the end of
  // the file: unreadable like an unmapped address, but unlike a hole in the
  // address space nothing can be mapped there meanwhile (a thread start
  // maps memory, 512 KiB under ThreadSanitizer).
  int backing = memfd_create("async-errors", 0);
  if (backing < 0 || ftruncate(backing, SIZE) != 0)
    return 3;
  unsigned char *region = mmap(NULL, 2 * SIZE, PROT_READ | PROT_WRITE,
                               MAP_SHARED, backing, 0);
  if (region == MAP_FAILED)
    return 3;
  close(backing);
  off_t hole = (off_t)(uintptr_t)region + SIZE / 2;

  ompx_io_request_t good1, nospc, good2, eio, good3;
  int rc = 0;
  rc |= ompx_target_pread_async(fd, dbuf, SIZE, 0, dev, &good1);
  rc |= ompx_target_pwrite_async(full, dbuf + 4 * SIZE, SIZE, 0, dev, &nospc);
  rc |= ompx_target_pread_async(fd, dbuf + SIZE, SIZE, 0, dev, &good2);
  rc |= ompx_target_pread_async(mem, dbuf + 2 * SIZE, SIZE, hole, dev, &eio);
  rc |= ompx_target_pread_async(fd, dbuf + 3 * SIZE, SIZE, 0, dev, &good3);
  OT_EXPECT(rc == 0, "five requests submitted");
  close(full);
  close(mem);
  EXPECT_ERRNO(ompx_io_wait(eio), EIO, "wait: EIO from the hole");
  EXPECT_ERRNO(ompx_io_wait(nospc), ENOSPC, "wait: ENOSPC from /dev/full");
  OT_EXPECT(ompx_io_wait(good3) == SIZE && ompx_io_wait(good1) == SIZE &&
                ompx_io_wait(good2) == SIZE,
            "the good requests completed");
  unsigned char *back = malloc(SIZE);
  int same = 1;
  for (int k = 0; k < 4; k += 1) {
    if (k == 2)
      continue;
    omp_target_memcpy(back, dbuf + (size_t)k * SIZE, SIZE, 0, 0,
                      omp_get_initial_device(), dev);
    same &= memcmp(back, h, SIZE) == 0;
  }
  OT_EXPECT(same, "the good requests moved the right data");

  munmap(region, 2 * SIZE);
  omp_target_free(dbuf, dev);
  free(h);
  free(back);
  free(heap);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: submit: bad fd -> -1 EBADF
// CHECK: PASS: request NULL after EBADF
// CHECK: PASS: submit: negative offset -> -1 EINVAL
// CHECK: PASS: request NULL after EINVAL
// CHECK: PASS: submit: unknown device -> -1 ENODEV
// CHECK: PASS: request NULL after ENODEV
// CHECK: PASS: submit: malloc buffer -> -1 EFAULT
// CHECK: PASS: request NULL after EFAULT
// CHECK: PASS: five requests submitted
// CHECK: PASS: wait: EIO from the hole -> -1 EIO
// CHECK: PASS: wait: ENOSPC from /dev/full -> -1 ENOSPC
// CHECK: PASS: the good requests completed
// CHECK: PASS: the good requests moved the right data
// CHECK-NOT: FAIL
// CHECK: failures: 0

// omp_target_free of a buffer with a transfer in flight waits for the
// transfer: the memory is never read into or written from after it is
// freed, so an allocation that takes its place (same size: the allocator
// likely returns the same address) keeps the contents the program gives
// it. The request itself completes normally: ompx_io_wait returns the full
// count (the read landed before the free; the write took the data from the
// buffer before it was freed). Several rounds, with small chunks and few
// workers so that the transfers are still running at the free.
//
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic
// RUN: env OMPX_IO_THREADS=2 OMPX_IO_CHUNK_SIZE=64K \
// RUN:   %libomptarget-run-generic %t.dat | %fcheck-generic
// RUN: env OMPX_IO_THREADS=2 OMPX_IO_CHUNK_SIZE=64K OMPX_IO_PATH=staged \
// RUN:   %libomptarget-run-generic %t.dat | %fcheck-generic
// RUN: env OMPX_IO_THREADS=1 %libomptarget-run-generic %t.dat \
// RUN:   | %fcheck-generic

#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "offload_pattern.h"
#include "offload_test.h"
#include "ompx_io.h"

#define SIZE ((size_t)64 << 20)
#define ROUNDS 3

/// Bytes of device buffer d (SIZE) that differ from fill.
static size_t differing(void *d, unsigned char fill, unsigned char *tmp,
                        int dev) {
  omp_target_memcpy(tmp, d, SIZE, 0, 0, omp_get_initial_device(), dev);
  size_t bad = 0;
  for (size_t i = 0; i < SIZE; ++i)
    bad += tmp[i] != fill;
  return bad;
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  int dev = omp_get_default_device();
  int host = omp_get_initial_device();
  unsigned char *h = malloc(SIZE), *fill = malloc(SIZE), *tmp = malloc(SIZE);
  for (size_t i = 0; i < SIZE; ++i)
    h[i] = ot_pattern(i, 1);
  memset(fill, 0xAB, SIZE);
  int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || pwrite(fd, h, SIZE, 0) != (ssize_t)SIZE)
    return 3;

  int reads_ok = 1, reads_untouched = 1, same = 0;
  for (int r = 0; r < ROUNDS; ++r) {
    void *buf = omp_target_alloc(SIZE, dev);
    ompx_io_request_t req;
    if (ompx_target_pread_async(fd, buf, SIZE, 0, dev, &req))
      return 4;
    omp_target_free(buf, dev);
    void *next = omp_target_alloc(SIZE, dev);
    same += next == buf;
    omp_target_memcpy(next, fill, SIZE, 0, 0, dev, host);
    ssize_t n = ompx_io_wait(req);
    reads_ok &= n == (ssize_t)SIZE;
    size_t bad = differing(next, 0xAB, tmp, dev);
    if (bad)
      printf("round %d: %zu bytes of the new allocation overwritten\n", r,
             bad);
    reads_untouched &= bad == 0;
    omp_target_free(next, dev);
  }
  fprintf(stderr, "reads: %d of %d new allocations at the freed address\n",
          same, ROUNDS);
  OT_EXPECT(reads_ok, "async reads into freed buffers return the full count");
  OT_EXPECT(reads_untouched,
            "async reads never write into the next allocation");

  // Writes: the file gets the freed buffer's data, not the next one's.
  int writes_ok = 1, file_ok = 1;
  for (int r = 0; r < ROUNDS; ++r) {
    void *buf = omp_target_alloc(SIZE, dev);
    omp_target_memcpy(buf, h, SIZE, 0, 0, dev, host);
    if (ftruncate(fd, 0))
      return 5;
    ompx_io_request_t req;
    if (ompx_target_pwrite_async(fd, buf, SIZE, 0, dev, &req))
      return 6;
    omp_target_free(buf, dev);
    void *next = omp_target_alloc(SIZE, dev);
    omp_target_memcpy(next, fill, SIZE, 0, 0, dev, host);
    writes_ok &= ompx_io_wait(req) == (ssize_t)SIZE;
    file_ok &= pread(fd, tmp, SIZE, 0) == (ssize_t)SIZE &&
               memcmp(tmp, h, SIZE) == 0;
    omp_target_free(next, dev);
  }
  OT_EXPECT(writes_ok, "async writes from freed buffers return the full count");
  OT_EXPECT(file_ok, "async writes took the data of the buffer as it was");
  free(h);
  free(fill);
  free(tmp);
  close(fd);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: async reads into freed buffers return the full count
// CHECK: PASS: async reads never write into the next allocation
// CHECK: PASS: async writes from freed buffers return the full count
// CHECK: PASS: async writes took the data of the buffer as it was
// CHECK-NOT: FAIL
// CHECK: failures: 0

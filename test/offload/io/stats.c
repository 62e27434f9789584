// ompx_io_get_stats: the bytes counted per path add up to exactly what the
// program moved (short reads count the bytes read, failed transfers count
// nothing), and each accepted request is counted once; requests refused at
// submission are not counted. Under OMPX_IO_PATH=staged every byte is on the
// staged path and there are no fallbacks.
//
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic %t.dat | %fcheck-generic
// RUN: env OMPX_IO_PATH=staged %libomptarget-run-generic %t.dat \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,STAGED
// RUN: env OMPX_IO_PATH=staged OMPX_IO_CHUNK_SIZE=64K \
// RUN:   %libomptarget-run-generic %t.dat \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,STAGED

#include <fcntl.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "offload_test.h"
#include "ompx_io.h"

#define FILE_SIZE 1000003

static uint64_t sum(const uint64_t *v) {
  uint64_t s = 0;
  for (int p = 0; p < OMPX_IO_NUM_PATHS; ++p)
    s += v[p];
  return s;
}

static void print_paths(const char *what, const uint64_t *before,
                        const uint64_t *after) {
  printf("%s on:", what);
  for (int p = 0; p < OMPX_IO_NUM_PATHS; ++p)
    if (after[p] != before[p])
      printf(" %s=%llu", ompx_io_path_name(p),
             (unsigned long long)(after[p] - before[p]));
  printf("\n");
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
  char *h = calloc(1, FILE_SIZE);
  if (fd < 0 || pwrite(fd, h, FILE_SIZE, 0) != FILE_SIZE)
    return 3;
  int dev = omp_get_default_device();
  char *dbuf = omp_target_alloc(4 << 20, dev);
  int full = open("/dev/full", O_WRONLY);

  ompx_io_stats_t s0, s1;
  OT_EXPECT(ompx_io_get_stats(dev, &s0) == 0, "stats before");

  // Moved: 500000 + 3 (short read at end of file) + 1000003 read,
  // 777777 + 12345 written; one read and one write refused at submission;
  // one write failing in transfer.
  uint64_t want_read = 0, want_written = 0;
  want_read += ompx_target_pread(fd, dbuf, 500000, 0, dev);
  want_read += ompx_target_pread(fd, dbuf, 4096, FILE_SIZE - 3, dev);
  ompx_io_request_t r;
  if (ompx_target_pread_async(fd, dbuf, 2 << 20, 0, dev, &r) == 0)
    want_read += ompx_io_wait(r);
  want_written += ompx_target_pwrite(fd, dbuf, 777777, 2000000, dev);
  if (ompx_target_pwrite_async(fd, dbuf + 5, 12345, 7, dev, &r) == 0)
    want_written += ompx_io_wait(r);
  OT_EXPECT(ompx_target_pread(fd, h, 100, 0, dev) == -1, "refused read");
  OT_EXPECT(ompx_target_pwrite(-1, dbuf, 100, 0, dev) == -1, "refused write");
  OT_EXPECT(ompx_target_pwrite(full, dbuf, 100000, 0, dev) == -1,
            "write failing in transfer");
  printf("moved: read %llu written %llu\n", (unsigned long long)want_read,
         (unsigned long long)want_written);

  OT_EXPECT(ompx_io_get_stats(dev, &s1) == 0, "stats after");
  uint64_t read = sum(s1.bytes_read) - sum(s0.bytes_read);
  uint64_t written = sum(s1.bytes_written) - sum(s0.bytes_written);
  uint64_t reads = sum(s1.reads) - sum(s0.reads);
  uint64_t writes = sum(s1.writes) - sum(s0.writes);
  printf("counted: read %llu written %llu, %llu reads %llu writes\n",
         (unsigned long long)read, (unsigned long long)written,
         (unsigned long long)reads, (unsigned long long)writes);
  OT_EXPECT(read == want_read, "bytes read match");
  OT_EXPECT(written == want_written, "bytes written match");
  OT_EXPECT(reads == 3, "three reads counted");
  OT_EXPECT(writes == 3, "three writes counted");
  print_paths("read", s0.bytes_read, s1.bytes_read);
  print_paths("written", s0.bytes_written, s1.bytes_written);
  printf("fallbacks: %llu last: '%s'\n", (unsigned long long)s1.fallbacks,
         s1.last_fallback);
  OT_EXPECT(ompx_io_get_stats(dev, NULL) == -1, "NULL stats refused");

  omp_target_free(dbuf, dev);
  close(fd);
  free(h);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: stats before
// CHECK: PASS: refused read
// CHECK: PASS: refused write
// CHECK: PASS: write failing in transfer
// CHECK: moved: read 1500006 written 790122
// CHECK: PASS: stats after
// CHECK: counted: read 1500006 written 790122, 3 reads 3 writes
// CHECK: PASS: bytes read match
// CHECK: PASS: bytes written match
// CHECK: PASS: three reads counted
// CHECK: PASS: three writes counted
// STAGED: read on: staged=1500006{{$}}
// STAGED: written on: staged=790122{{$}}
// STAGED: fallbacks: 0 last: ''
// CHECK: PASS: NULL stats refused
// CHECK-NOT: FAIL
// CHECK: failures: 0

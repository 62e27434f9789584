// O_APPEND: pwrite on an O_APPEND descriptor appends the whole buffer, in
// order, whatever the offset says (Linux ignores it). Several buffers of
// many chunks each, with distinct patterns, are appended many times, first
// with ompx_target_pwrite, then with ompx_target_pwrite_async submitted
// back to back and waited afterwards (appends of one device land in the
// order they were submitted, as POSIX asks of aio_write), and once a
// 40 MiB + 3 buffer in the default 8 MiB chunks; the file must be the
// concatenation, byte for byte.
//
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic
// RUN: env OMPX_IO_THREADS=8 %libomptarget-run-generic %t.dat \
// RUN:   | %fcheck-generic
// RUN: env OMPX_IO_THREADS=8 OMPX_IO_CHUNK_SIZE=64K \
// RUN:   %libomptarget-run-generic %t.dat | %fcheck-generic
// RUN: env OMPX_IO_THREADS=8 OMPX_IO_CHUNK_SIZE=64K OMPX_IO_PATH=staged \
// RUN:   OMPX_IO_RING_DEPTH=1 %libomptarget-run-generic %t.dat \
// RUN:   | %fcheck-generic
// The direct path serves only memory the host can address (the host
// plugin's): elsewhere forcing it is ENOTSUP, tested in force-path.c.
// RUN: %if host-plugin %{ env OMPX_IO_THREADS=3 OMPX_IO_CHUNK_SIZE=64K \
// RUN:   OMPX_IO_PATH=direct %libomptarget-run-generic %t.dat \
// RUN:   | %fcheck-generic %}

#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "offload_pattern.h"
#include "offload_test.h"
#include "ompx_io.h"

#define NBUF 4
#define ROUNDS 6
#define BIG ((40u << 20) + 3)

static const size_t Sizes[NBUF] = {(1u << 20) + 3, (512u << 10) + 77,
                                   (2u << 20) + 4093, 3 * 65536};

/// The file from the start must be Expected[0..Len).
static int matches(int fd, const unsigned char *expect, size_t len) {
  struct stat st;
  if (fstat(fd, &st) || (size_t)st.st_size != len) {
    printf("file is %lld bytes, expected %zu\n", (long long)st.st_size, len);
    return 0;
  }
  unsigned char *back = malloc(len);
  size_t done = 0;
  while (done < len) {
    ssize_t n = pread(fd, back + done, len - done, (off_t)done);
    if (n <= 0)
      break;
    done += (size_t)n;
  }
  int ok = done == len;
  for (size_t i = 0; ok && i < len; ++i)
    if (back[i] != expect[i]) {
      printf("first difference at byte %zu\n", i);
      ok = 0;
    }
  free(back);
  return ok;
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  int dev = omp_get_default_device();
  int host = omp_get_initial_device();
  unsigned char *h[NBUF];
  void *d[NBUF];
  for (int b = 0; b < NBUF; ++b) {
    h[b] = malloc(Sizes[b]);
    for (size_t i = 0; i < Sizes[b]; ++i)
      h[b][i] = ot_pattern(i, b * 61 + 1);
    d[b] = omp_target_alloc(Sizes[b], dev);
    omp_target_memcpy(d[b], h[b], Sizes[b], 0, 0, dev, host);
  }
  size_t total = 0;
  for (int b = 0; b < NBUF; ++b)
    total += Sizes[b];
  total *= 2 * ROUNDS;
  unsigned char *expect = malloc(total);

  int fd = open(argv[1], O_WRONLY | O_APPEND | O_CREAT | O_TRUNC, 0644);
  int check = open(argv[1], O_RDONLY);
  if (fd < 0 || check < 0)
    return 3;

  // Synchronous appends; the offset means nothing with O_APPEND.
  size_t len = 0;
  int counts = 1;
  for (int r = 0; r < ROUNDS; ++r)
    for (int b = 0; b < NBUF; ++b) {
      ssize_t n = ompx_target_pwrite(fd, d[b], Sizes[b], 12345, dev);
      counts &= n == (ssize_t)Sizes[b];
      memcpy(expect + len, h[b], Sizes[b]);
      len += Sizes[b];
    }
  OT_EXPECT(counts, "pwrite appends return the full counts");
  OT_EXPECT(matches(check, expect, len), "pwrite appends land whole and in order");

  // Asynchronous appends: all submitted, then waited for.
  ompx_io_request_t req[ROUNDS * NBUF];
  int submitted = 1;
  for (int r = 0; r < ROUNDS; ++r)
    for (int b = 0; b < NBUF; ++b) {
      submitted &= ompx_target_pwrite_async(fd, d[b], Sizes[b], 0, dev,
                                            &req[r * NBUF + b]) == 0;
      memcpy(expect + len, h[b], Sizes[b]);
      len += Sizes[b];
    }
  counts = submitted;
  for (int r = 0; r < ROUNDS; ++r)
    for (int b = 0; b < NBUF; ++b)
      counts &= ompx_io_wait(req[r * NBUF + b]) == (ssize_t)Sizes[b];
  OT_EXPECT(counts, "async appends return the full counts");
  OT_EXPECT(matches(check, expect, len),
            "async appends land whole and in submission order");

  // 40 MiB + 3 bytes, twice, in the default chunk size unless set.
  unsigned char *hb = malloc(BIG);
  for (size_t i = 0; i < BIG; ++i)
    hb[i] = ot_pattern(i, 7 * 61 + 1);
  void *db = omp_target_alloc(BIG, dev);
  omp_target_memcpy(db, hb, BIG, 0, 0, dev, host);
  int bigfd = open(argv[1], O_WRONLY | O_APPEND | O_TRUNC);
  unsigned char *bigexpect = malloc(2 * (size_t)BIG);
  memcpy(bigexpect, hb, BIG);
  memcpy(bigexpect + BIG, hb, BIG);
  ssize_t n1 = ompx_target_pwrite(bigfd, db, BIG, 0, dev);
  ssize_t n2 = ompx_target_pwrite(bigfd, db, BIG, 0, dev);
  OT_EXPECT(n1 == BIG && n2 == BIG, "40 MiB + 3 appends return %zd and %zd",
            n1, n2);
  OT_EXPECT(matches(check, bigexpect, 2 * (size_t)BIG),
            "40 MiB + 3 appends land whole and in order");

  omp_target_free(db, dev);
  for (int b = 0; b < NBUF; ++b) {
    omp_target_free(d[b], dev);
    free(h[b]);
  }
  free(expect);
  free(hb);
  free(bigexpect);
  close(bigfd);
  close(fd);
  close(check);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: pwrite appends return the full counts
// CHECK: PASS: pwrite appends land whole and in order
// CHECK: PASS: async appends return the full counts
// CHECK: PASS: async appends land whole and in submission order
// CHECK: PASS: 40 MiB + 3 appends return
// CHECK: PASS: 40 MiB + 3 appends land whole and in order
// CHECK-NOT: FAIL
// CHECK: failures: 0

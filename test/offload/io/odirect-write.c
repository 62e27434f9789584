// OMPX_IO_ODIRECT for writes: the aligned middle is written with O_DIRECT,
// an unaligned head and tail buffered; nothing around the range changes and
// a write past the end extends the file exactly. Writes through an O_DIRECT
// descriptor (auto and off) and a buffered one (on), on the direct and the
// staged path; the file is checked byte for byte with plain pread.
//
// REQUIRES: ompx-io, host-plugin
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic %t.dat direct | %fcheck-generic
// RUN: env OMPX_IO_PATH=direct %libomptarget-run-generic %t.dat direct \
// RUN:   | %fcheck-generic
// RUN: env OMPX_IO_PATH=staged %libomptarget-run-generic %t.dat direct \
// RUN:   | %fcheck-generic
// RUN: env OMPX_IO_PATH=staged OMPX_IO_CHUNK_SIZE=64K OMPX_IO_THREADS=3 \
// RUN:   %libomptarget-run-generic %t.dat direct | %fcheck-generic
// RUN: env OMPX_IO_ODIRECT=off %libomptarget-run-generic %t.dat direct \
// RUN:   | %fcheck-generic
// RUN: env OMPX_IO_ODIRECT=on OMPX_IO_PATH=direct \
// RUN:   %libomptarget-run-generic %t.dat buffered | %fcheck-generic
// RUN: env OMPX_IO_ODIRECT=on OMPX_IO_PATH=staged \
// RUN:   %libomptarget-run-generic %t.dat buffered | %fcheck-generic

#define _GNU_SOURCE // O_DIRECT
#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "offload_pattern.h"
#include "offload_test.h"
#include "ompx_io.h"

#define SIZE ((size_t)(3 << 20))
#define PAGE 4096

// What the file should hold: Want[0, WantSize).
static unsigned char *want;
static size_t want_size;

// Write count bytes of pattern seed (by file offset) at off from p.
static ssize_t put(int fd, char *p, int dev, size_t count, size_t off,
                   unsigned seed) {
  unsigned char *h = malloc(count + 1);
  for (size_t i = 0; i < count; ++i)
    h[i] = ot_pattern(off + i, seed);
  if (omp_target_memcpy(p, h, count, 0, 0, dev, omp_get_initial_device()))
    return -2;
  ssize_t n = ompx_target_pwrite(fd, p, count, (off_t)off, dev);
  if (off + count > want_size)
    want_size = off + count;
  memcpy(want + off, h, count);
  free(h);
  return n;
}

// Whether the file holds exactly want[0, want_size).
static int file_ok(const char *path) {
  int fd = open(path, O_RDONLY);
  unsigned char *h = malloc(SIZE * 2);
  ssize_t n = pread(fd, h, SIZE * 2, 0);
  close(fd);
  int ok = n == (ssize_t)want_size && memcmp(h, want, want_size) == 0;
  if (!ok)
    printf("file has %zd bytes, want %zu\n", n, want_size);
  free(h);
  return ok;
}

int main(int argc, char **argv) {
  if (argc < 3)
    return 2;
  setvbuf(stdout, NULL, _IONBF, 0);
  want = calloc(SIZE * 2, 1);
  int flags = O_WRONLY | O_CREAT | O_TRUNC;
  if (!strcmp(argv[2], "direct"))
    flags |= O_DIRECT;
  int fd = open(argv[1], flags, 0644);
  if (fd < 0 && errno == EINVAL && (flags & O_DIRECT)) {
    printf("O_DIRECT unsupported\n");
    fd = open(argv[1], flags & ~O_DIRECT, 0644);
  } else {
    printf("O_DIRECT supported\n");
  }

  int dev = omp_get_default_device();
  char *buf = omp_target_alloc(SIZE + 4 * PAGE, dev);
  OT_EXPECT(fd >= 0 && buf != NULL, "file and device buffer");
  char *abuf = buf + (PAGE - (uintptr_t)buf % PAGE) % PAGE;

  ssize_t n = put(fd, abuf, dev, 2 << 20, 0, 1);
  OT_EXPECT(n == 2 << 20 && file_ok(argv[1]), "aligned write");
  n = put(fd, abuf + 1000, dev, (1 << 20) + 333, 1000, 2);
  OT_EXPECT(n == (1 << 20) + 333 && file_ok(argv[1]),
            "unaligned offset and count, memory aligned to the middle");
  n = put(fd, abuf + 1, dev, 300001, 70001, 3);
  OT_EXPECT(n == 300001 && file_ok(argv[1]),
            "unaligned offset, count and memory");
  n = put(fd, abuf + 7, dev, 999, 5000, 4);
  OT_EXPECT(n == 999 && file_ok(argv[1]), "small, no aligned block");
  // Past the end: [2 MiB, 2 MiB + 100) stays a hole of zeros.
  n = put(fd, abuf + 100, dev, 600007, (2 << 20) + 100, 5);
  OT_EXPECT(n == 600007 && file_ok(argv[1]),
            "unaligned write extending the file");
  n = put(fd, abuf, dev, 65536, 3 << 20, 6);
  OT_EXPECT(n == 65536 && file_ok(argv[1]), "aligned write extending it");

  omp_target_free(buf, dev);
  close(fd);
  free(want);
  OT_SUMMARY();
  return 0;
}

// CHECK: O_DIRECT {{supported|unsupported}}
// CHECK: PASS: file and device buffer
// CHECK: PASS: aligned write
// CHECK: PASS: unaligned offset and count, memory aligned to the middle
// CHECK: PASS: unaligned offset, count and memory
// CHECK: PASS: small, no aligned block
// CHECK: PASS: unaligned write extending the file
// CHECK: PASS: aligned write extending it
// CHECK-NOT: FAIL
// CHECK: failures: 0

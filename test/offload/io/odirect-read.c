// OMPX_IO_ODIRECT: the aligned middle of a read is read with O_DIRECT, an
// unaligned head and tail buffered. Reads from a descriptor opened with
// O_DIRECT (auto), from a buffered one reopened with O_DIRECT (on), and from
// an O_DIRECT one reopened without it (off), on the direct and the staged
// path, with aligned and unaligned offsets, counts and device pointers, and
// across the end of file. Data is checked byte for byte. Where the file
// system refuses O_DIRECT (EINVAL) the test says so and reads buffered.
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
// RUN: env OMPX_IO_ODIRECT=off OMPX_IO_PATH=direct \
// RUN:   %libomptarget-run-generic %t.dat direct | %fcheck-generic
// RUN: env OMPX_IO_ODIRECT=off OMPX_IO_PATH=staged \
// RUN:   %libomptarget-run-generic %t.dat direct | %fcheck-generic
// RUN: env OMPX_IO_ODIRECT=on OMPX_IO_PATH=direct \
// RUN:   %libomptarget-run-generic %t.dat buffered | %fcheck-generic
// RUN: env OMPX_IO_ODIRECT=on OMPX_IO_PATH=staged \
// RUN:   %libomptarget-run-generic %t.dat buffered | %fcheck-generic
// RUN: env OMPX_IO_INFO=1 OMPX_IO_PATH=direct %libomptarget-run-generic \
// RUN:   %t.dat direct 2>&1 | %fcheck-generic --check-prefix=INFO
// RUN: env OMPX_IO_INFO=1 OMPX_IO_ODIRECT=ON %libomptarget-run-generic \
// RUN:   %t.dat buffered 2>&1 | %fcheck-generic --check-prefix=INFO
// RUN: env OMPX_IO_ODIRECT=bogus %libomptarget-run-generic %t.dat direct \
// RUN:   2>&1 | %fcheck-generic --check-prefix=BOGUS

#define _GNU_SOURCE // O_DIRECT
#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "offload_odirect.h"
#include "offload_pattern.h"
#include "offload_test.h"
#include "ompx_io.h"

#define SIZE ((size_t)(3 << 20) + 777)
#define PAGE 4096

// Read count bytes at off into p and check them; want is the count expected.
static void check(int fd, char *p, int dev, size_t count, size_t off,
                  size_t want, const char *what) {
  ssize_t n = ompx_target_pread(fd, p, count, (off_t)off, dev);
  OT_EXPECT(n == (ssize_t)want &&
                ot_device_mismatches(p, dev, want, off, 1) == 0,
            "%s (%zd of %zu)", what, n, want);
}

int main(int argc, char **argv) {
  if (argc < 3)
    return 2;
  setvbuf(stdout, NULL, _IONBF, 0);
  int fd = ot_open_pattern_file(argv[1], SIZE, 1, !strcmp(argv[2], "direct"));

  int dev = omp_get_default_device();
  char *buf = omp_target_alloc(SIZE + 4 * PAGE, dev);
  OT_EXPECT(fd >= 0 && buf != NULL, "file and device buffer");
  // The host plugin's device memory is host memory: a page-aligned pointer
  // inside the allocation.
  char *abuf = buf + (PAGE - (uintptr_t)buf % PAGE) % PAGE;

  check(fd, abuf, dev, 2 << 20, 0, 2 << 20, "aligned offset, count, memory");
  check(fd, abuf, dev, 1 << 20, 1 << 20, 1 << 20, "aligned, second MiB");
  // abuf + 1000 + (4096 - 1000) is aligned: the middle can go O_DIRECT.
  check(fd, abuf + 1000, dev, (1 << 20) + 333, 1000, (1 << 20) + 333,
        "unaligned offset and count, memory aligned to the middle");
  check(fd, abuf + 1, dev, (1 << 20) + 333, 1000, (1 << 20) + 333,
        "unaligned offset, count and memory");
  check(fd, abuf + 5, dev, 777, 12345, 777, "small, no aligned block");
  check(fd, abuf, dev, 8192, SIZE - 777 - 4096, 4096 + 777,
        "aligned count across the end of file");
  check(fd, abuf + 3000, dev, 100000, SIZE - 50000, 50000,
        "unaligned count across the end of file");
  check(fd, abuf, dev, 4096, SIZE - 777, 777, "aligned read of the last bytes");
  check(fd, abuf, dev, 4096, SIZE + 4096 * 3, 0, "read past the end of file");
  OT_EXPECT(ot_device_mismatches(abuf, dev, 777, SIZE - 777, 1) == 0,
            "a read past the end leaves memory alone");

  omp_target_free(buf, dev);
  close(fd);
  OT_SUMMARY();
  return 0;
}

// CHECK: O_DIRECT {{supported|unsupported}}
// CHECK: PASS: file and device buffer
// CHECK: PASS: aligned offset, count, memory
// CHECK: PASS: aligned, second MiB
// CHECK: PASS: unaligned offset and count, memory aligned to the middle
// CHECK: PASS: unaligned offset, count and memory
// CHECK: PASS: small, no aligned block
// CHECK: PASS: aligned count across the end of file
// CHECK: PASS: unaligned count across the end of file
// CHECK: PASS: aligned read of the last bytes
// CHECK: PASS: read past the end of file
// CHECK: PASS: a read past the end leaves memory alone
// CHECK-NOT: FAIL
// CHECK: failures: 0

// Where the file system has no O_DIRECT, the test's own line stands in for
// the engine's note.
// INFO: {{O_DIRECT for the aligned middle \(alignment [0-9]+\)|O_DIRECT unsupported|O_DIRECT unavailable, buffered \(reopen: Invalid argument\)}}
// INFO-NOT: FAIL
// INFO: failures: 0

// BOGUS: offload-io[{{[0-9]+}}]: warning: ignoring OMPX_IO_ODIRECT='bogus': expected one of auto, on, off; using auto
// BOGUS-NOT: FAIL
// BOGUS: failures: 0

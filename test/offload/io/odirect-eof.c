// O_DIRECT reads across the end of file leave the buffer past the count
// alone, as pread(2) does. The kernel's O_DIRECT read zeroes the caller's
// buffer from the end of file to the end of the request while returning the
// short count, so the engine must never aim one past the end of file at the
// program's memory. Reads through a buffered descriptor reopened with
// O_DIRECT (OMPX_IO_ODIRECT=on) and through an O_DIRECT descriptor, on every
// path that serves the device: direct (host plugin), staged, and small
// O_DIRECT chunks so that the end of file falls inside a middle chunk with
// whole chunks after it. Sync and async reads; the buffer is filled with a
// marker before each read and every byte is checked. Where the file system
// refuses O_DIRECT the test says so and the reads are buffered.
//
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic
// RUN: env OMPX_IO_ODIRECT=on %libomptarget-run-generic %t.dat buffered \
// RUN:   | %fcheck-generic
// RUN: %libomptarget-run-generic %t.dat direct | %fcheck-generic
// RUN: env OMPX_IO_ODIRECT=on OMPX_IO_PATH=staged \
// RUN:   %libomptarget-run-generic %t.dat buffered | %fcheck-generic
// RUN: env OMPX_IO_ODIRECT=on OMPX_IO_PATH=staged \
// RUN:   OMPX_IO_DIRECT_CHUNK_SIZE=64K OMPX_IO_THREADS=3 \
// RUN:   %libomptarget-run-generic %t.dat buffered | %fcheck-generic
// RUN: %if host-plugin %{ env OMPX_IO_ODIRECT=on OMPX_IO_PATH=direct \
// RUN:   %libomptarget-run-generic %t.dat buffered | %fcheck-generic %}
// RUN: %if host-plugin %{ env OMPX_IO_ODIRECT=on OMPX_IO_PATH=direct \
// RUN:   OMPX_IO_DIRECT_CHUNK_SIZE=64K OMPX_IO_THREADS=3 \
// RUN:   %libomptarget-run-generic %t.dat buffered | %fcheck-generic %}
// RUN: %if host-plugin %{ env OMPX_IO_PATH=direct \
// RUN:   OMPX_IO_DIRECT_CHUNK_SIZE=64K %libomptarget-run-generic %t.dat \
// RUN:   direct | %fcheck-generic %}

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

#define FILE_SIZE 300007
#define BUF_SIZE (1 << 20)
#define PAGE 4096
#define OLD 0xAB

// Read count bytes at off into dbuf, filled with OLD before, expecting want
// of them, and check the whole buffer.
static void check(int fd, char *dbuf, int dev, size_t count, size_t off,
                  size_t want, const char *what) {
  ot_device_fill(dbuf, dev, BUF_SIZE, OLD);
  ssize_t n = ompx_target_pread(fd, dbuf, count, (off_t)off, dev);
  size_t bad = ot_device_read_mismatches(dbuf, dev, BUF_SIZE, want, off, 1, OLD);
  OT_EXPECT(n == (ssize_t)want && bad == 0, "%s (%zd of %zu, %zu bytes wrong)",
            what, n, want, bad);
}

int main(int argc, char **argv) {
  if (argc < 3)
    return 2;
  setvbuf(stdout, NULL, _IONBF, 0);
  int fd = ot_open_pattern_file(argv[1], FILE_SIZE, 1,
                                !strcmp(argv[2], "direct"));

  int dev = omp_get_default_device();
  char *alloc = omp_target_alloc(BUF_SIZE + PAGE, dev);
  OT_EXPECT(fd >= 0 && alloc != NULL, "file and device buffer");
  // Page-aligned memory, so that the aligned middle can go O_DIRECT.
  char *dbuf = alloc + (PAGE - (uintptr_t)alloc % PAGE) % PAGE;

  check(fd, dbuf, dev, BUF_SIZE, 0, FILE_SIZE, "whole buffer from offset 0");
  check(fd, dbuf, dev, 256 << 10, 128 << 10, FILE_SIZE - (128 << 10),
        "aligned offset and count across the end of file");
  check(fd, dbuf, dev, 64 << 10, 70 * PAGE, FILE_SIZE - 70 * PAGE,
        "last partial block, aligned count");
  check(fd, dbuf, dev, BUF_SIZE - 1000, 1000, FILE_SIZE - 1000,
        "unaligned offset and count across the end of file");
  check(fd, dbuf, dev, 8 * PAGE, FILE_SIZE - FILE_SIZE % PAGE, FILE_SIZE % PAGE,
        "aligned read of the last bytes");
  check(fd, dbuf, dev, BUF_SIZE, FILE_SIZE, 0, "read at the end of file");
  check(fd, dbuf, dev, 4 * PAGE, 100 * PAGE, 0, "read past the end of file");

  ot_device_fill(dbuf, dev, BUF_SIZE, OLD);
  ompx_io_request_t req = NULL;
  int rc = ompx_target_pread_async(fd, dbuf, BUF_SIZE, 4 * PAGE, dev, &req);
  ssize_t n = rc == 0 ? ompx_io_wait(req) : -1;
  size_t bad = ot_device_read_mismatches(dbuf, dev, BUF_SIZE,
                                         FILE_SIZE - 4 * PAGE, 4 * PAGE, 1, OLD);
  OT_EXPECT(n == FILE_SIZE - 4 * PAGE && bad == 0,
            "async read across the end of file (%zd, %zu bytes wrong)", n,
            bad);

  omp_target_free(alloc, dev);
  close(fd);
  OT_SUMMARY();
  return 0;
}

// CHECK: O_DIRECT {{supported|unsupported}}
// CHECK: PASS: file and device buffer
// CHECK: PASS: whole buffer from offset 0
// CHECK: PASS: aligned offset and count across the end of file
// CHECK: PASS: last partial block, aligned count
// CHECK: PASS: unaligned offset and count across the end of file
// CHECK: PASS: aligned read of the last bytes
// CHECK: PASS: read at the end of file
// CHECK: PASS: read past the end of file
// CHECK: PASS: async read across the end of file
// CHECK-NOT: FAIL
// CHECK: failures: 0

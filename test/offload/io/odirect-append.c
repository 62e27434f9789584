// O_APPEND | O_DIRECT: what O_DIRECT refuses with EINVAL (an unaligned
// count, or the end of file at an unaligned offset) is retried without
// O_DIRECT, as for any O_DIRECT descriptor, and still appends. Each write
// lands after the previous one whatever offset it names; the file is checked
// byte for byte with plain pread. Auto, on and off, the direct and the
// staged path.
//
// REQUIRES: ompx-io, host-plugin
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic %t.dat | %fcheck-generic
// RUN: env OMPX_IO_PATH=staged %libomptarget-run-generic %t.dat \
// RUN:   | %fcheck-generic
// RUN: env OMPX_IO_ODIRECT=on %libomptarget-run-generic %t.dat \
// RUN:   | %fcheck-generic
// RUN: env OMPX_IO_ODIRECT=off OMPX_IO_PATH=staged \
// RUN:   %libomptarget-run-generic %t.dat | %fcheck-generic

#define _GNU_SOURCE // O_DIRECT, strerrorname_np
#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "offload_test.h"
#include "ompx_io.h"

#define PAGE 4096
#define TOTAL (1000 + 8192 + 5000 + 4096)

static unsigned char pat(size_t o) { return (unsigned char)(o * 13 + 5); }

static const char *name(int e) { return e ? strerrorname_np(e) : "0"; }

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  setvbuf(stdout, NULL, _IONBF, 0);
  int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_DIRECT,
                0644);
  if (fd < 0 && errno == EINVAL) {
    printf("O_DIRECT unsupported\n");
    fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
  } else {
    printf("O_DIRECT supported\n");
  }
  int dev = omp_get_default_device();
  char *buf = omp_target_alloc(8192 + PAGE, dev);
  OT_EXPECT(fd >= 0 && buf != NULL, "file and device buffer");
  // Page-aligned memory each time; counts and the end of file vary.
  char *abuf = buf + (PAGE - (uintptr_t)buf % PAGE) % PAGE;
  unsigned char *h = malloc(TOTAL);
  for (size_t i = 0; i < TOTAL; ++i)
    h[i] = pat(i);

  static const size_t counts[] = {1000, 8192, 5000, 4096};
  size_t at = 0;
  for (int i = 0; i < 4; ++i) {
    if (omp_target_memcpy(abuf, h + at, counts[i], 0, 0, dev,
                          omp_get_initial_device()))
      return 3;
    // The named offset (0) is ignored: O_APPEND writes at the end.
    errno = 0;
    ssize_t n = ompx_target_pwrite(fd, abuf, counts[i], 0, dev);
    OT_EXPECT(n == (ssize_t)counts[i], "append %zu bytes at %zu -> %zd %s",
              counts[i], at, n, name(n < 0 ? errno : 0));
    at += counts[i];
  }
  int rd = open(argv[1], O_RDONLY);
  unsigned char *back = calloc(TOTAL + 100, 1);
  ssize_t n = pread(rd, back, TOTAL + 100, 0);
  OT_EXPECT(n == TOTAL && memcmp(back, h, TOTAL) == 0,
            "file holds the %d bytes in order (has %zd)", TOTAL, n);

  close(rd);
  close(fd);
  omp_target_free(buf, dev);
  free(h);
  free(back);
  OT_SUMMARY();
  return 0;
}

// CHECK: O_DIRECT {{supported|unsupported}}
// CHECK: PASS: file and device buffer
// CHECK: PASS: append 1000 bytes at 0 -> 1000 0
// CHECK: PASS: append 8192 bytes at 1000 -> 8192 0
// CHECK: PASS: append 5000 bytes at 9192 -> 5000 0
// CHECK: PASS: append 4096 bytes at 14192 -> 4096 0
// CHECK: PASS: file holds the 18288 bytes in order
// CHECK-NOT: FAIL
// CHECK: failures: 0

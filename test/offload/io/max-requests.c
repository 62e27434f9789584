// OMPX_IO_MAX_REQUESTS caps the requests of a device that were submitted
// and not yet waited for (each holds a descriptor and memory). Past the
// cap, submission fails at once with EAGAIN (a synchronous read too: it is
// a request for the time it runs) and nothing is transferred; waiting for
// one request makes room again. The default is 256, and an invalid value is
// reported and replaced by it. Every byte that was read is checked.
//
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic
// RUN: env OMPX_IO_MAX_REQUESTS=4 %libomptarget-run-generic %t.dat 4 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,QUIET
// RUN: env OMPX_IO_MAX_REQUESTS=4 OFFLOADIO_INFO=1 \
// RUN:   %libomptarget-run-generic %t.dat 4 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,INFO
// RUN: %libomptarget-run-generic %t.dat 256 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,QUIET
// RUN: env OMPX_IO_MAX_REQUESTS=0 %libomptarget-run-generic %t.dat 256 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,INVALID

#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "offload_io_test.h"
#include "ompx_io.h"

#define PIECE 4096

static unsigned char pat(size_t o) { return (unsigned char)(o * 11 + 3); }

int main(int argc, char **argv) {
  if (argc < 3)
    return 2;
  setvbuf(stdout, NULL, _IOLBF, 0);
  int cap = atoi(argv[2]);
  size_t size = (size_t)(cap + 1) * PIECE;
  unsigned char *h = malloc(size);
  for (size_t i = 0; i < size; ++i)
    h[i] = pat(i);
  int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || pwrite(fd, h, size, 0) != (ssize_t)size)
    return 3;
  int dev = omp_get_default_device(), host = omp_get_initial_device();
  unsigned char *d = omp_target_alloc(size, dev);
  unsigned char *zero = calloc(1, size);
  omp_target_memcpy(d, zero, size, 0, 0, dev, host);

  // The cap is reached; the requests stay unwaited.
  ompx_io_request_t *reqs = calloc(cap + 1, sizeof(*reqs));
  int submitted = 0;
  for (int i = 0; i < cap; ++i)
    submitted += ompx_target_pread_async(fd, d + (size_t)i * PIECE, PIECE,
                                         (off_t)i * PIECE, dev, &reqs[i]) == 0;
  OT_EXPECT(submitted == cap, "%d requests submitted up to the cap",
            submitted);
  ompx_io_request_t extra = NULL;
  printf("past the cap\n");
  EXPECT_ERRNO(ompx_target_pread_async(fd, d + (size_t)cap * PIECE, PIECE,
                                       (off_t)cap * PIECE, dev, &extra),
               EAGAIN, "async read past the cap");
  OT_EXPECT(extra == NULL, "no request handle for the refused read");
  EXPECT_ERRNO(ompx_target_pread(fd, d + (size_t)cap * PIECE, PIECE,
                                 (off_t)cap * PIECE, dev),
               EAGAIN, "synchronous read past the cap");
  EXPECT_ERRNO(ompx_target_pwrite(fd, d, PIECE, 0, dev), EAGAIN,
               "synchronous write past the cap");

  // One wait makes room for one more.
  OT_EXPECT(ompx_io_wait(reqs[0]) == PIECE, "first request waited");
  OT_EXPECT(ompx_target_pread_async(fd, d + (size_t)cap * PIECE, PIECE,
                                    (off_t)cap * PIECE, dev, &reqs[0]) == 0,
            "a wait made room for the refused read");
  EXPECT_ERRNO(ompx_target_pread_async(fd, d, PIECE, 0, dev, &extra), EAGAIN,
               "at the cap again");
  ssize_t total = 0;
  for (int i = 0; i < cap; ++i)
    total += ompx_io_wait(reqs[i]);
  OT_EXPECT(total == (ssize_t)cap * PIECE, "all %d requests done", cap);

  // No slot leaked: the cap is free again, for async and sync alike.
  submitted = 0;
  for (int i = 0; i < cap; ++i)
    submitted += ompx_target_pread_async(fd, d + (size_t)i * PIECE, PIECE,
                                         (off_t)i * PIECE, dev, &reqs[i]) == 0;
  for (int i = 0; i < submitted; ++i)
    ompx_io_wait(reqs[i]);
  OT_EXPECT(submitted == cap &&
                ompx_target_pread(fd, d, PIECE, 0, dev) == PIECE,
            "every slot came back");

  omp_target_memcpy(h, d, size, 0, 0, host, dev);
  size_t bad = 0;
  for (size_t i = 0; i < size; ++i)
    bad += h[i] != pat(i);
  OT_EXPECT(bad == 0, "every byte read is right (%zu wrong)", bad);
  omp_target_free(d, dev);
  free(reqs);
  free(zero);
  free(h);
  close(fd);
  OT_SUMMARY();
  return 0;
}

// INVALID: offload-io[{{[0-9]+}}]: warning: ignoring OMPX_IO_MAX_REQUESTS='0': expected an integer from 1 to 1048576; using 256
// CHECK: PASS: {{4|256}} requests submitted up to the cap
// CHECK-LABEL: past the cap
// INFO-NEXT: offload-io({{[^)]+}})[{{[0-9]+}}] device {{[0-9]+}}: read of 4096 bytes on device {{[0-9]+}}: 4 requests are outstanding, the OMPX_IO_MAX_REQUESTS limit; wait for some first: Resource temporarily unavailable
// QUIET-NOT: offload-io
// CHECK: PASS: async read past the cap -> -1 EAGAIN
// CHECK: PASS: no request handle for the refused read
// CHECK: PASS: synchronous read past the cap
// CHECK: PASS: synchronous write past the cap
// CHECK: PASS: first request waited
// CHECK: PASS: a wait made room for the refused read
// CHECK: PASS: at the cap again
// CHECK: PASS: all {{4|256}} requests done
// CHECK: PASS: every slot came back
// CHECK: PASS: every byte read is right (0 wrong)
// CHECK-NOT: FAIL
// CHECK: failures: 0

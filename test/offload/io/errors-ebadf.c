// Bad descriptors fail with EBADF, at once, for device and host memory:
// -1, a closed descriptor, a number never opened, a read from an O_WRONLY
// descriptor and a write to an O_RDONLY one. Count 0 does not skip the
// check. Async submissions fail the same way and leave the request NULL.
//
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic %t.dat | %fcheck-generic

#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "offload_io_test.h"
#include "ompx_io.h"

static void check_all(const char *where, int dev, void *buf, int rdonly,
                      int wronly, int closed) {
  char what[128];
  struct {
    const char *name;
    int fd;
  } bad[] = {{"fd -1", -1}, {"closed fd", closed}, {"fd 1000000", 1000000}};
  for (int i = 0; i < 3; ++i) {
    snprintf(what, sizeof what, "%s: read %s", where, bad[i].name);
    EXPECT_ERRNO(ompx_target_pread(bad[i].fd, buf, 64, 0, dev), EBADF, what);
    snprintf(what, sizeof what, "%s: write %s", where, bad[i].name);
    EXPECT_ERRNO(ompx_target_pwrite(bad[i].fd, buf, 64, 0, dev), EBADF, what);
  }
  snprintf(what, sizeof what, "%s: read count 0 closed fd", where);
  EXPECT_ERRNO(ompx_target_pread(closed, buf, 0, 0, dev), EBADF, what);
  snprintf(what, sizeof what, "%s: read from O_WRONLY", where);
  EXPECT_ERRNO(ompx_target_pread(wronly, buf, 64, 0, dev), EBADF, what);
  snprintf(what, sizeof what, "%s: write to O_RDONLY", where);
  EXPECT_ERRNO(ompx_target_pwrite(rdonly, buf, 64, 0, dev), EBADF, what);

  ompx_io_request_t req = NULL;
  snprintf(what, sizeof what, "%s: async read closed fd", where);
  EXPECT_ERRNO(ompx_target_pread_async(closed, buf, 64, 0, dev, &req), EBADF,
               what);
  OT_EXPECT(req == NULL, "%s: request stays NULL", where);
  snprintf(what, sizeof what, "%s: async read from O_WRONLY", where);
  EXPECT_ERRNO(ompx_target_pread_async(wronly, buf, 64, 0, dev, &req), EBADF,
               what);
  OT_EXPECT(req == NULL, "%s: request stays NULL", where);
  snprintf(what, sizeof what, "%s: async write to O_RDONLY", where);
  EXPECT_ERRNO(ompx_target_pwrite_async(rdonly, buf, 64, 0, dev, &req), EBADF,
               what);
  OT_EXPECT(req == NULL, "%s: request stays NULL", where);
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
  char zeros[4096] = {0};
  if (fd < 0 || write(fd, zeros, sizeof zeros) != sizeof zeros)
    return 3;
  int rdonly = open(argv[1], O_RDONLY);
  int wronly = open(argv[1], O_WRONLY);
  // A closed descriptor far above the ones in use: runtimes open files of
  // their own (the CUDA driver does), and a low number would be reused.
  int tmp = open(argv[1], O_RDONLY);
  int closed = dup2(tmp, 900);
  close(tmp);
  close(closed);

  int dev = omp_get_default_device();
  void *dbuf = omp_target_alloc(4096, dev);
  check_all("device", dev, dbuf, rdonly, wronly, closed);
  void *hbuf = malloc(4096);
  check_all("host", omp_get_initial_device(), hbuf, rdonly, wronly, closed);

  // The good descriptors still work after all that.
  OT_EXPECT(ompx_target_pread(rdonly, dbuf, 4096, 0, dev) == 4096 &&
                ompx_target_pwrite(wronly, dbuf, 4096, 4096, dev) == 4096,
            "good descriptors work");

  omp_target_free(dbuf, dev);
  free(hbuf);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: device: read fd -1 -> -1 EBADF
// CHECK: PASS: device: write fd -1 -> -1 EBADF
// CHECK: PASS: device: read closed fd -> -1 EBADF
// CHECK: PASS: device: write closed fd -> -1 EBADF
// CHECK: PASS: device: read fd 1000000 -> -1 EBADF
// CHECK: PASS: device: write fd 1000000 -> -1 EBADF
// CHECK: PASS: device: read count 0 closed fd -> -1 EBADF
// CHECK: PASS: device: read from O_WRONLY -> -1 EBADF
// CHECK: PASS: device: write to O_RDONLY -> -1 EBADF
// CHECK: PASS: device: async read closed fd -> -1 EBADF
// CHECK: PASS: device: request stays NULL
// CHECK: PASS: device: async read from O_WRONLY -> -1 EBADF
// CHECK: PASS: device: request stays NULL
// CHECK: PASS: device: async write to O_RDONLY -> -1 EBADF
// CHECK: PASS: device: request stays NULL
// CHECK: PASS: host: read fd -1 -> -1 EBADF
// CHECK: PASS: host: write fd -1 -> -1 EBADF
// CHECK: PASS: host: read closed fd -> -1 EBADF
// CHECK: PASS: host: write closed fd -> -1 EBADF
// CHECK: PASS: host: read fd 1000000 -> -1 EBADF
// CHECK: PASS: host: write fd 1000000 -> -1 EBADF
// CHECK: PASS: host: read count 0 closed fd -> -1 EBADF
// CHECK: PASS: host: read from O_WRONLY -> -1 EBADF
// CHECK: PASS: host: write to O_RDONLY -> -1 EBADF
// CHECK: PASS: host: async read closed fd -> -1 EBADF
// CHECK: PASS: host: request stays NULL
// CHECK: PASS: host: async read from O_WRONLY -> -1 EBADF
// CHECK: PASS: host: request stays NULL
// CHECK: PASS: host: async write to O_RDONLY -> -1 EBADF
// CHECK: PASS: host: request stays NULL
// CHECK: PASS: good descriptors work
// CHECK-NOT: FAIL
// CHECK: failures: 0

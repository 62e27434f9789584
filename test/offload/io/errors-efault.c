// EFAULT: a NULL buffer with a nonzero count, and buffers that are not
// memory of the device: malloc memory and a stack array (another device's
// allocation is covered in device-numbers.c). NULL with count 0 is a valid
// empty transfer. Host memory (the initial device) accepts malloc buffers
// but not NULL.
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

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
  char data[4096];
  memset(data, 'x', sizeof data);
  if (fd < 0 || write(fd, data, sizeof data) != sizeof data)
    return 3;
  int dev = omp_get_default_device();
  int host = omp_get_initial_device();
  char *heap = malloc(4096);
  char stack[256];
  memset(heap, 'h', 4096);
  memset(stack, 's', sizeof stack);
  ompx_io_request_t req = NULL;

  EXPECT_ERRNO(ompx_target_pread(fd, NULL, 64, 0, dev), EFAULT,
               "device: read into NULL");
  EXPECT_ERRNO(ompx_target_pwrite(fd, NULL, 64, 0, dev), EFAULT,
               "device: write from NULL");
  EXPECT_ERRNO(ompx_target_pread(fd, heap, 64, 0, dev), EFAULT,
               "device: read into malloc memory");
  EXPECT_ERRNO(ompx_target_pwrite(fd, heap, 64, 0, dev), EFAULT,
               "device: write from malloc memory");
  EXPECT_ERRNO(ompx_target_pread(fd, stack, 64, 0, dev), EFAULT,
               "device: read into a stack array");
  EXPECT_ERRNO(ompx_target_pread_async(fd, heap, 64, 0, dev, &req), EFAULT,
               "device: async read into malloc memory");
  OT_EXPECT(req == NULL, "device: request stays NULL");
  EXPECT_ERRNO(ompx_target_pwrite_async(fd, NULL, 64, 0, dev, &req), EFAULT,
               "device: async write from NULL");
  OT_EXPECT(req == NULL, "device: request stays NULL");
  // A range running past the end of its allocation is refused too.
  char *small = omp_target_alloc(1 << 20, dev);
  EXPECT_ERRNO(ompx_target_pread(fd, small, (1 << 20) + 4096, 0, dev), EFAULT,
               "device: read past the end of the allocation");
  EXPECT_ERRNO(ompx_target_pwrite(fd, small + 4096, 1 << 20, 0, dev), EFAULT,
               "device: write past the end of the allocation");
  OT_EXPECT(ompx_target_pread(fd, small + 4096, 4096, 0, dev) == 4096,
            "device: read ending inside the allocation works");
  omp_target_free(small, dev);
  // Nothing was read into the refused buffers, nothing written to the file.
  int untouched = 1;
  for (int i = 0; i < 4096; ++i)
    untouched &= heap[i] == 'h';
  for (int i = 0; i < 256; ++i)
    untouched &= stack[i] == 's';
  char back[4096];
  untouched &= pread(fd, back, sizeof back, 0) == sizeof back &&
               memcmp(back, data, sizeof back) == 0;
  OT_EXPECT(untouched, "refused transfers touched nothing");

  OT_EXPECT(ompx_target_pread(fd, NULL, 0, 0, dev) == 0,
            "device: NULL with count 0 returns 0");
  OT_EXPECT(ompx_target_pwrite(fd, NULL, 0, 0, dev) == 0,
            "device: NULL write with count 0 returns 0");

  EXPECT_ERRNO(ompx_target_pread(fd, NULL, 64, 0, host), EFAULT,
               "host: read into NULL");
  EXPECT_ERRNO(ompx_target_pwrite_async(fd, NULL, 64, 0, host, &req), EFAULT,
               "host: async write from NULL");
  OT_EXPECT(req == NULL, "host: request stays NULL");
  OT_EXPECT(ompx_target_pread(fd, heap, 4096, 0, host) == 4096 &&
                memcmp(heap, data, 4096) == 0,
            "host: malloc memory is fine on the initial device");

  // A device allocation works after the refusals.
  char *dbuf = omp_target_alloc(4096, dev);
  OT_EXPECT(ompx_target_pread(fd, dbuf, 4096, 0, dev) == 4096,
            "device allocation reads");
  omp_target_free(dbuf, dev);
  free(heap);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: device: read into NULL -> -1 EFAULT
// CHECK: PASS: device: write from NULL -> -1 EFAULT
// CHECK: PASS: device: read into malloc memory -> -1 EFAULT
// CHECK: PASS: device: write from malloc memory -> -1 EFAULT
// CHECK: PASS: device: read into a stack array -> -1 EFAULT
// CHECK: PASS: device: async read into malloc memory -> -1 EFAULT
// CHECK: PASS: device: request stays NULL
// CHECK: PASS: device: async write from NULL -> -1 EFAULT
// CHECK: PASS: device: request stays NULL
// CHECK: PASS: device: read past the end of the allocation -> -1 EFAULT
// CHECK: PASS: device: write past the end of the allocation -> -1 EFAULT
// CHECK: PASS: device: read ending inside the allocation works
// CHECK: PASS: refused transfers touched nothing
// CHECK: PASS: device: NULL with count 0 returns 0
// CHECK: PASS: device: NULL write with count 0 returns 0
// CHECK: PASS: host: read into NULL -> -1 EFAULT
// CHECK: PASS: host: async write from NULL -> -1 EFAULT
// CHECK: PASS: host: request stays NULL
// CHECK: PASS: host: malloc memory is fine on the initial device
// CHECK: PASS: device allocation reads
// CHECK-NOT: FAIL
// CHECK: failures: 0

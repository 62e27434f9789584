// device_num == omp_get_initial_device() means plain host memory: reads and
// writes with pread/pwrite semantics (full count unless end of file, tail
// untouched, file extended exactly), async requests that capture their
// arguments, and only the host path in ompx_io_paths.
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
#include <sys/stat.h>
#include <unistd.h>
#include "offload_pattern.h"
#include "offload_test.h"
#include "ompx_io.h"

#define SIZE 100003

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  int host = omp_get_initial_device();
  unsigned char *src = malloc(SIZE), *buf = malloc(2 * SIZE);
  for (size_t i = 0; i < SIZE; ++i)
    src[i] = ot_pattern(i, 1);
  int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);

  ssize_t n = ompx_target_pwrite(fd, src, SIZE, 0, host);
  struct stat st;
  fstat(fd, &st);
  printf("write: %zd size %lld\n", n, (long long)st.st_size);

  memset(buf, 0xAB, 2 * SIZE);
  n = ompx_target_pread(fd, buf, 2 * SIZE, 0, host);
  int tail_ok = 1;
  for (size_t i = SIZE; i < 2 * SIZE; ++i)
    tail_ok &= buf[i] == 0xAB;
  printf("read across eof: %zd\n", n);
  OT_EXPECT(memcmp(buf, src, SIZE) == 0 && tail_ok,
            "data exact, tail untouched");
  OT_EXPECT(ompx_target_pread(fd, buf, 10, SIZE, host) == 0, "at eof: 0");
  OT_EXPECT(ompx_target_pread(fd, buf, 0, 0, host) == 0, "count 0: 0");

  n = ompx_target_pwrite(fd, src, 10, 2 * SIZE, host);
  fstat(fd, &st);
  printf("write past end: %zd size %lld\n", n, (long long)st.st_size);

  // Async: arguments and descriptor captured at submission.
  int fd2 = dup(fd);
  unsigned char *p = buf;
  size_t count = 5000;
  off_t off = 1234;
  ompx_io_request_t req = NULL;
  memset(buf, 0, 2 * SIZE);
  int rc = ompx_target_pread_async(fd2, p, count, off, host, &req);
  close(fd2);
  p = NULL;
  count = 0;
  off = -1;
  int t = ompx_io_test(req);
  n = ompx_io_wait(req);
  printf("async: rc %d test %d wait %zd\n", rc, t, n);
  OT_EXPECT(memcmp(buf, src + 1234, 5000) == 0, "async data exact");

  unsigned mask = 0;
  OT_EXPECT(ompx_io_paths(host, &mask, NULL, 0) == 0 &&
                mask == 1u << OMPX_IO_PATH_HOST,
            "only the host path");
  close(fd);
  free(src);
  free(buf);
  OT_SUMMARY();
  return 0;
}

// CHECK: write: 100003 size 100003
// CHECK: read across eof: 100003
// CHECK: PASS: data exact, tail untouched
// CHECK: PASS: at eof: 0
// CHECK: PASS: count 0: 0
// CHECK: write past end: 10 size 200016
// CHECK: async: rc 0 test 1 wait 5000
// CHECK: PASS: async data exact
// CHECK: PASS: only the host path
// CHECK-NOT: FAIL
// CHECK: failures: 0

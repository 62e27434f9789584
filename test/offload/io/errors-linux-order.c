// Reads and writes answer exactly as Linux's pread(2) and pwrite(2) do for
// descriptors that are not plain files, count 0 included: each case runs
// the system call on host memory, then ompx_target_pread/pwrite on device
// memory and on the initial device, and the three results must agree. The
// expected errno is also spelled out below: ESPIPE for either end of a pipe
// and for a socket (seekability is checked before the access mode), EISDIR
// for reading a directory, EBADF for writing one (it is open read-only), a
// closed descriptor or the wrong access mode, EINVAL for a negative offset
// before anything else, 0 for count 0 on a file. Counts no address space
// holds (over SSIZE_MAX) are EFAULT, after the descriptor's checks and
// before the offset range's (EINVAL, also past 1 GiB) and the directory's;
// an eventfd has no file offset (ESPIPE, at submission too). One deliberate
// difference: count 0 to /dev/full returns 0 (Linux: ENOSPC from the
// driver), see docs/errors-and-env.md.
//
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic %t.dat %t.dir | %fcheck-generic
// RUN: env OMPX_IO_PATH=staged OMPX_IO_ODIRECT=on \
// RUN:   %libomptarget-run-generic %t.dat %t.dir | %fcheck-generic

#define _GNU_SOURCE // strerrorname_np
#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include "offload_test.h"
#include "ompx_io.h"
// clang-16's amdgcn device pass includes system headers before the first
// line, too early for the _GNU_SOURCE above, and still parses the host code.
#ifdef __AMDGCN__
const char *strerrorname_np(int errnum);
#endif

static const char *name(int e) { return e ? strerrorname_np(e) : "0"; }

static char hbuf[4096];
static void *dbuf;
static int dev;

// One case: what Linux says of host buffer hb, then the device with device
// buffer db and the initial device with hb.
static void check_with(const char *what, int write, int fd, size_t count,
                       off_t off, void *hb, void *db) {
  errno = 0;
  ssize_t want = write ? pwrite(fd, hb, count, off) : pread(fd, hb, count, off);
  int want_errno = want < 0 ? errno : 0;
  printf("Linux: %s -> %zd %s\n", what, want, name(want_errno));
  struct {
    const char *where;
    int dev;
    void *buf;
  } on[] = {{"device", dev, db}, {"host", omp_get_initial_device(), hb}};
  for (int i = 0; i < 2; ++i) {
    errno = 0;
    ssize_t got = write ? ompx_target_pwrite(fd, on[i].buf, count, off,
                                             on[i].dev)
                        : ompx_target_pread(fd, on[i].buf, count, off,
                                            on[i].dev);
    int got_errno = got < 0 ? errno : 0;
    OT_EXPECT(got == want && got_errno == want_errno, "%s: %s -> %zd %s",
              on[i].where, what, got, name(got_errno));
  }
}

// One case with the 4 KiB buffers.
static void check(const char *what, int write, int fd, size_t count,
                  off_t off) {
  check_with(what, write, fd, count, off, hbuf, dbuf);
}

int main(int argc, char **argv) {
  if (argc < 3)
    return 2;
  setvbuf(stdout, NULL, _IONBF, 0);
  signal(SIGPIPE, SIG_IGN);
  alarm(60);
  int file = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
  int wronly = open(argv[1], O_WRONLY);
  int rdonly = open(argv[1], O_RDONLY);
  mkdir(argv[2], 0755);
  int dir = open(argv[2], O_RDONLY | O_DIRECTORY);
  int pipefd[2], sock[2];
  int full = open("/dev/full", O_WRONLY);
  if (file < 0 || wronly < 0 || rdonly < 0 || dir < 0 || pipe(pipefd) ||
      socketpair(AF_UNIX, SOCK_STREAM, 0, sock) || full < 0)
    return 3;
  int tmp = open(argv[1], O_RDONLY);
  int closed = dup2(tmp, 900);
  close(tmp);
  close(closed);
  dev = omp_get_default_device();
  dbuf = omp_target_alloc(4096, dev);

  check("read pipe read end 64", 0, pipefd[0], 64, 0);
  check("read pipe read end 0", 0, pipefd[0], 0, 0);
  check("read pipe write end 64", 0, pipefd[1], 64, 0);
  check("read pipe write end 0", 0, pipefd[1], 0, 0);
  check("write pipe write end 64", 1, pipefd[1], 64, 0);
  check("write pipe write end 0", 1, pipefd[1], 0, 0);
  check("write pipe read end 64", 1, pipefd[0], 64, 0);
  check("write pipe read end 0", 1, pipefd[0], 0, 0);
  check("read pipe offset -1", 0, pipefd[0], 64, -1);
  check("read socket 64", 0, sock[0], 64, 0);
  check("write socket 0", 1, sock[0], 0, 0);
  check("read directory 64", 0, dir, 64, 0);
  check("read directory 0", 0, dir, 0, 0);
  check("write directory 64", 1, dir, 64, 0);
  check("write directory 0", 1, dir, 0, 0);
  check("read closed fd 0", 0, closed, 0, 0);
  check("write closed fd 0", 1, closed, 0, 0);
  check("read closed fd offset -1", 0, closed, 64, -1);
  check("read write-only fd 0", 0, wronly, 0, 0);
  check("write read-only fd 0", 1, rdonly, 0, 0);
  for (int i = 0; i < 2; ++i) {
    int d = i ? omp_get_initial_device() : dev;
    OT_EXPECT(ompx_target_pwrite(full, i ? hbuf : dbuf, 0, 0, d) == 0,
              "%s: write /dev/full 0 -> 0", i ? "host" : "device");
  }
  check("write /dev/full 64", 1, full, 64, 0);
  check("read file 0", 0, file, 0, 0);
  check("write file 0", 1, file, 0, 0);

  // Counts: the descriptor's errors come before a count no address space
  // holds (EFAULT), which comes before the offset range and the directory.
  size_t huge = (size_t)SSIZE_MAX + 1;
  check("read closed fd huge", 0, closed, huge, 0);
  check("read write-only fd huge", 0, wronly, huge, 0);
  check("read pipe huge", 0, pipefd[0], huge, 0);
  check("write socket huge", 1, sock[0], huge, 0);
  check("read file huge", 0, file, huge, 0);
  check("read directory huge", 0, dir, huge, 0);
  check("read directory past INT64_MAX", 0, dir, 64, INT64_MAX - 10);
  // Past 1 GiB, with buffers that hold the count (never touched).
  size_t big = ((size_t)1 << 30) + 8192;
  void *hbig = malloc(big), *dbig = omp_target_alloc(big, dev);
  if (hbig && dbig) {
    check_with("read file 1 GiB + 8 KiB past INT64_MAX", 0, file, big,
               INT64_MAX - ((off_t)1 << 30) - 4096, hbig, dbig);
    check_with("write file 1 GiB + 8 KiB past INT64_MAX", 1, file, big,
               INT64_MAX - ((off_t)1 << 30) - 4096, hbig, dbig);
  } else {
    printf("no buffers of %zu bytes\n", big);
  }
  free(hbig);
  omp_target_free(dbig, dev);

  // An eventfd has no file offset: refused at submission, as a pipe is.
  int ev = eventfd(1, 0);
  check("read eventfd 8", 0, ev, 8, 0);
  check("read eventfd 0", 0, ev, 0, 0);
  check("write eventfd 8", 1, ev, 8, 0);
  for (int i = 0; i < 2; ++i) {
    ompx_io_request_t req = NULL;
    errno = 0;
    int r = ompx_target_pread_async(ev, i ? hbuf : dbuf, 8, 0,
                                    i ? omp_get_initial_device() : dev, &req);
    OT_EXPECT(r == -1 && errno == ESPIPE && req == NULL,
              "%s: async read eventfd -> %d %s at submission",
              i ? "host" : "device", r, name(r ? errno : 0));
  }
  close(ev);

  omp_target_free(dbuf, dev);
  rmdir(argv[2]);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: device: read pipe read end 64 -> -1 ESPIPE
// CHECK: PASS: host: read pipe read end 64 -> -1 ESPIPE
// CHECK: PASS: device: read pipe read end 0 -> -1 ESPIPE
// CHECK: PASS: host: read pipe read end 0 -> -1 ESPIPE
// CHECK: PASS: device: read pipe write end 64 -> -1 ESPIPE
// CHECK: PASS: host: read pipe write end 64 -> -1 ESPIPE
// CHECK: PASS: device: read pipe write end 0 -> -1 ESPIPE
// CHECK: PASS: host: read pipe write end 0 -> -1 ESPIPE
// CHECK: PASS: device: write pipe write end 64 -> -1 ESPIPE
// CHECK: PASS: host: write pipe write end 64 -> -1 ESPIPE
// CHECK: PASS: device: write pipe write end 0 -> -1 ESPIPE
// CHECK: PASS: host: write pipe write end 0 -> -1 ESPIPE
// CHECK: PASS: device: write pipe read end 64 -> -1 ESPIPE
// CHECK: PASS: host: write pipe read end 64 -> -1 ESPIPE
// CHECK: PASS: device: write pipe read end 0 -> -1 ESPIPE
// CHECK: PASS: host: write pipe read end 0 -> -1 ESPIPE
// CHECK: PASS: device: read pipe offset -1 -> -1 EINVAL
// CHECK: PASS: host: read pipe offset -1 -> -1 EINVAL
// CHECK: PASS: device: read socket 64 -> -1 ESPIPE
// CHECK: PASS: host: read socket 64 -> -1 ESPIPE
// CHECK: PASS: device: write socket 0 -> -1 ESPIPE
// CHECK: PASS: host: write socket 0 -> -1 ESPIPE
// CHECK: PASS: device: read directory 64 -> -1 EISDIR
// CHECK: PASS: host: read directory 64 -> -1 EISDIR
// CHECK: PASS: device: read directory 0 -> -1 EISDIR
// CHECK: PASS: host: read directory 0 -> -1 EISDIR
// CHECK: PASS: device: write directory 64 -> -1 EBADF
// CHECK: PASS: host: write directory 64 -> -1 EBADF
// CHECK: PASS: device: write directory 0 -> -1 EBADF
// CHECK: PASS: host: write directory 0 -> -1 EBADF
// CHECK: PASS: device: read closed fd 0 -> -1 EBADF
// CHECK: PASS: host: read closed fd 0 -> -1 EBADF
// CHECK: PASS: device: write closed fd 0 -> -1 EBADF
// CHECK: PASS: host: write closed fd 0 -> -1 EBADF
// CHECK: PASS: device: read closed fd offset -1 -> -1 EINVAL
// CHECK: PASS: host: read closed fd offset -1 -> -1 EINVAL
// CHECK: PASS: device: read write-only fd 0 -> -1 EBADF
// CHECK: PASS: host: read write-only fd 0 -> -1 EBADF
// CHECK: PASS: device: write read-only fd 0 -> -1 EBADF
// CHECK: PASS: host: write read-only fd 0 -> -1 EBADF
// CHECK: PASS: device: write /dev/full 0 -> 0
// CHECK: PASS: host: write /dev/full 0 -> 0
// CHECK: PASS: device: write /dev/full 64 -> -1 ENOSPC
// CHECK: PASS: host: write /dev/full 64 -> -1 ENOSPC
// CHECK: PASS: device: read file 0 -> 0 0
// CHECK: PASS: host: read file 0 -> 0 0
// CHECK: PASS: device: write file 0 -> 0 0
// CHECK: PASS: host: write file 0 -> 0 0
// CHECK: PASS: device: read closed fd huge -> -1 EBADF
// CHECK: PASS: host: read closed fd huge -> -1 EBADF
// CHECK: PASS: device: read write-only fd huge -> -1 EBADF
// CHECK: PASS: host: read write-only fd huge -> -1 EBADF
// CHECK: PASS: device: read pipe huge -> -1 ESPIPE
// CHECK: PASS: host: read pipe huge -> -1 ESPIPE
// CHECK: PASS: device: write socket huge -> -1 ESPIPE
// CHECK: PASS: host: write socket huge -> -1 ESPIPE
// CHECK: PASS: device: read file huge -> -1 EFAULT
// CHECK: PASS: host: read file huge -> -1 EFAULT
// CHECK: PASS: device: read directory huge -> -1 EFAULT
// CHECK: PASS: host: read directory huge -> -1 EFAULT
// CHECK: PASS: device: read directory past INT64_MAX -> -1 EINVAL
// CHECK: PASS: host: read directory past INT64_MAX -> -1 EINVAL
// CHECK: PASS: device: read file 1 GiB + 8 KiB past INT64_MAX -> -1 EINVAL
// CHECK: PASS: host: read file 1 GiB + 8 KiB past INT64_MAX -> -1 EINVAL
// CHECK: PASS: device: write file 1 GiB + 8 KiB past INT64_MAX -> -1 EINVAL
// CHECK: PASS: host: write file 1 GiB + 8 KiB past INT64_MAX -> -1 EINVAL
// CHECK: PASS: device: read eventfd 8 -> -1 ESPIPE
// CHECK: PASS: host: read eventfd 8 -> -1 ESPIPE
// CHECK: PASS: device: read eventfd 0 -> -1 ESPIPE
// CHECK: PASS: host: read eventfd 0 -> -1 ESPIPE
// CHECK: PASS: device: write eventfd 8 -> -1 ESPIPE
// CHECK: PASS: host: write eventfd 8 -> -1 ESPIPE
// CHECK: PASS: device: async read eventfd -> -1 ESPIPE at submission
// CHECK: PASS: host: async read eventfd -> -1 ESPIPE at submission
// CHECK-NOT: FAIL
// CHECK: failures: 0

// A FIFO answers at once, whatever OMPX_IO_ODIRECT says: pread on one opened
// O_RDONLY | O_NONBLOCK with no writer, and pwrite on one whose reader left,
// fail with ESPIPE as they do in Linux, for device memory (synchronous and
// async) and on the initial device. The engine used to reopen the
// descriptor through /proc/self/fd for O_DIRECT, and opening a FIFO waits
// for a peer: forever. alarm() makes such a hang a failure.
//
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic
// RUN: env OMPX_IO_ODIRECT=on %libomptarget-run-generic %t.fifo \
// RUN:   | %fcheck-generic
// RUN: env OMPX_IO_ODIRECT=on OMPX_IO_PATH=staged \
// RUN:   %libomptarget-run-generic %t.fifo | %fcheck-generic
// RUN: %libomptarget-run-generic %t.fifo | %fcheck-generic

#define _GNU_SOURCE // strerrorname_np
#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

#define EXPECT_ESPIPE(expr, ...)                                               \
  do {                                                                         \
    errno = 0;                                                                 \
    long long r_ = (long long)(expr);                                          \
    int e_ = errno;                                                            \
    char w_[128];                                                              \
    snprintf(w_, sizeof w_, __VA_ARGS__);                                      \
    OT_EXPECT(r_ == -1 && e_ == ESPIPE, "%s -> %lld %s", w_, r_, name(e_));   \
  } while (0)

static void check(const char *where, int dev, void *buf, int rd, int wr) {
  ompx_io_request_t req = NULL;
  EXPECT_ESPIPE(ompx_target_pread(rd, buf, 4096, 0, dev),
                "%s: read FIFO without writer", where);
  EXPECT_ESPIPE(ompx_target_pread_async(rd, buf, 4096, 0, dev, &req),
                "%s: async read FIFO without writer", where);
  OT_EXPECT(req == NULL, "%s: request stays NULL", where);
  EXPECT_ESPIPE(ompx_target_pwrite(wr, buf, 4096, 0, dev),
                "%s: write FIFO without reader", where);
  EXPECT_ESPIPE(ompx_target_pwrite_async(wr, buf, 4096, 0, dev, &req),
                "%s: async write FIFO without reader", where);
  OT_EXPECT(req == NULL, "%s: request stays NULL", where);
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  setvbuf(stdout, NULL, _IONBF, 0);
  signal(SIGPIPE, SIG_IGN);
  alarm(60);
  // Two FIFOs: one opened for reading that no writer ever opens, one whose
  // only reader closed after its writer opened it.
  char a[4096], b[4096];
  snprintf(a, sizeof a, "%s.a", argv[1]);
  snprintf(b, sizeof b, "%s.b", argv[1]);
  unlink(a);
  unlink(b);
  if (mkfifo(a, 0600) || mkfifo(b, 0600))
    return 3;
  int rd = open(a, O_RDONLY | O_NONBLOCK);
  int rb = open(b, O_RDONLY | O_NONBLOCK);
  int wr = open(b, O_WRONLY | O_NONBLOCK);
  if (rd < 0 || rb < 0 || wr < 0)
    return 4;
  close(rb);
  char hbuf[4096];
  EXPECT_ESPIPE(pwrite(wr, hbuf, 4096, 0), "Linux: pwrite FIFO");
  EXPECT_ESPIPE(pread(rd, hbuf, 4096, 0), "Linux: pread FIFO");

  int dev = omp_get_default_device();
  void *dbuf = omp_target_alloc(4096, dev);
  check("device", dev, dbuf, rd, wr);
  check("host", omp_get_initial_device(), hbuf, rd, wr);
  omp_target_free(dbuf, dev);
  close(rd);
  close(wr);
  unlink(a);
  unlink(b);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: Linux: pwrite FIFO -> -1 ESPIPE
// CHECK: PASS: Linux: pread FIFO -> -1 ESPIPE
// CHECK: PASS: device: read FIFO without writer -> -1 ESPIPE
// CHECK: PASS: device: async read FIFO without writer -> -1 ESPIPE
// CHECK: PASS: device: request stays NULL
// CHECK: PASS: device: write FIFO without reader -> -1 ESPIPE
// CHECK: PASS: device: async write FIFO without reader -> -1 ESPIPE
// CHECK: PASS: device: request stays NULL
// CHECK: PASS: host: read FIFO without writer -> -1 ESPIPE
// CHECK: PASS: host: async read FIFO without writer -> -1 ESPIPE
// CHECK: PASS: host: request stays NULL
// CHECK: PASS: host: write FIFO without reader -> -1 ESPIPE
// CHECK: PASS: host: async write FIFO without reader -> -1 ESPIPE
// CHECK: PASS: host: request stays NULL
// CHECK-NOT: FAIL
// CHECK: failures: 0

// A batch whose later operation names a descriptor the program closed just
// before: that operation fails with EBADF and nothing else happens to any
// file. The library must check every descriptor of the batch before it
// duplicates one, or the duplicate of an earlier operation's descriptor
// takes the closed number and the later operation runs on the wrong file
// (a write overwrote another file's bytes, a read returned them). Each case
// is run with the earlier operation on the device and on the initial
// device, the closed one on either, and across two devices where there are
// two: writes and reads, then a batch whose every operation is good.
//
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic %t | %fcheck-generic
// RUN: env OMPX_IO_PATH=staged \
// RUN:   %libomptarget-run-generic %t | %fcheck-generic
// RUN: env OMPX_IO_ODIRECT=on \
// RUN:   %libomptarget-run-generic %t | %fcheck-generic

#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "offload_io_test.h"
#include "ompx_io.h"

#define FILE_SIZE (128 << 10)
#define OP_SIZE 4096
#define OP_OFFSET 65536

static char path[2][4096];

/// Fill file \p i with the byte 'A' + i.
static void fill(int i) {
  int fd = open(path[i], O_RDWR | O_CREAT | O_TRUNC, 0644);
  static char bytes[FILE_SIZE];
  memset(bytes, 'A' + i, sizeof bytes);
  if (fd < 0 || write(fd, bytes, sizeof bytes) != sizeof bytes)
    exit(3);
  close(fd);
}

/// Whether file \p i still holds only 'A' + i.
static int intact(int i) {
  int fd = open(path[i], O_RDONLY);
  static char bytes[FILE_SIZE + 1];
  ssize_t n = read(fd, bytes, sizeof bytes);
  close(fd);
  if (n != FILE_SIZE)
    return 0;
  for (ssize_t k = 0; k < n; ++k)
    if (bytes[k] != 'A' + i)
      return 0;
  return 1;
}

/// A buffer of OP_SIZE bytes of \p c on device \p dev.
static void *buffer(int dev, char c) {
  char host[OP_SIZE];
  memset(host, c, sizeof host);
  void *p = omp_target_alloc(OP_SIZE, dev);
  omp_target_memcpy(p, host, OP_SIZE, 0, 0, dev, omp_get_initial_device());
  return p;
}

/// Whether device buffer \p p of \p dev holds only \p c.
static int holds(void *p, int dev, char c) {
  char host[OP_SIZE];
  omp_target_memcpy(host, p, OP_SIZE, 0, 0, omp_get_initial_device(), dev);
  for (int k = 0; k < OP_SIZE; ++k)
    if (host[k] != c)
      return 0;
  return 1;
}

/// Operation 0 on file 0 with device \p d0; operation 1 on a descriptor
/// closed just before the batch (the number file 1 had), device \p d1.
static void closed_case(const char *what, int opcode, int d0, int d1) {
  fill(0);
  fill(1);
  int fd0 = open(path[0], O_RDWR);
  int fd1 = open(path[1], O_RDWR);
  void *b0 = buffer(d0, 'w');
  void *b1 = buffer(d1, 'z');
  close(fd1);
  ompx_io_op_t ops[2] = {
      {opcode, fd0, b0, OP_SIZE, 0, d0, -7, -7},
      {opcode, fd1, b1, OP_SIZE, OP_OFFSET, d1, -7, -7},
  };
  ompx_io_batch_t batch;
  OT_EXPECT(ompx_io_batch_submit(ops, 2, &batch) == 0, "%s: submitted", what);
  ssize_t failed = ompx_io_batch_wait(batch);
  OT_EXPECT(failed == 1 && ops[0].result == OP_SIZE && ops[0].error == 0,
            "%s: the first operation runs (failed %zd, result %zd)", what,
            failed, ops[0].result);
  OT_EXPECT(ops[1].result == -1 && ops[1].error == EBADF,
            "%s: the closed descriptor -> %zd %s", what, ops[1].result,
            ename(ops[1].error));
  if (opcode == OMPX_IO_OP_WRITE) {
    // File 0 got its 4 KiB at offset 0 and nothing at OP_OFFSET.
    char got[OP_SIZE];
    OT_EXPECT(pread(fd0, got, OP_SIZE, OP_OFFSET) == OP_SIZE &&
                  got[0] == 'A' && got[OP_SIZE - 1] == 'A',
              "%s: no byte landed at offset %d of the other file", what,
              OP_OFFSET);
    OT_EXPECT(intact(1), "%s: the closed file is untouched", what);
  } else {
    OT_EXPECT(holds(b1, d1, 'z'), "%s: the failed read's buffer is untouched",
              what);
    OT_EXPECT(intact(0) && intact(1), "%s: the files are untouched", what);
  }
  close(fd0);
  omp_target_free(b0, d0);
  omp_target_free(b1, d1);
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  setvbuf(stdout, NULL, _IONBF, 0);
  snprintf(path[0], sizeof path[0], "%s.0", argv[1]);
  snprintf(path[1], sizeof path[1], "%s.1", argv[1]);
  int dev = omp_get_default_device();
  int host = omp_get_initial_device();
  // A second device where there is one; the first again otherwise.
  int other = omp_get_num_devices() > 1 ? 1 - dev : dev;
  int ops[2] = {OMPX_IO_OP_WRITE, OMPX_IO_OP_READ};
  for (int i = 0; i < 2; ++i) {
    const char *op = i ? "read" : "write";
    char what[64];
    snprintf(what, sizeof what, "%s: device, device", op);
    closed_case(what, ops[i], dev, dev);
    snprintf(what, sizeof what, "%s: device, initial device", op);
    closed_case(what, ops[i], dev, host);
    snprintf(what, sizeof what, "%s: initial device, device", op);
    closed_case(what, ops[i], host, dev);
    snprintf(what, sizeof what, "%s: device, another device", op);
    closed_case(what, ops[i], dev, other);
  }

  // A good batch over both files still runs whole.
  fill(0);
  fill(1);
  int fd0 = open(path[0], O_RDWR), fd1 = open(path[1], O_RDWR);
  void *b0 = buffer(dev, 'w'), *b1 = buffer(dev, 'z');
  ompx_io_op_t good[2] = {
      {OMPX_IO_OP_READ, fd0, b0, OP_SIZE, 0, dev, -7, -7},
      {OMPX_IO_OP_READ, fd1, b1, OP_SIZE, OP_OFFSET, dev, -7, -7},
  };
  ompx_io_batch_t batch;
  OT_EXPECT(ompx_io_batch_submit(good, 2, &batch) == 0 &&
                ompx_io_batch_wait(batch) == 0 && holds(b0, dev, 'A') &&
                holds(b1, dev, 'B'),
            "a good batch reads each file's own bytes");
  close(fd0);
  close(fd1);
  omp_target_free(b0, dev);
  omp_target_free(b1, dev);
  unlink(path[0]);
  unlink(path[1]);
  OT_SUMMARY();
  return 0;
}

// CHECK-NOT: FAIL
// CHECK: PASS: write: device, device: the closed descriptor -> -1 EBADF
// CHECK: PASS: write: device, device: no byte landed at offset 65536 of the other file
// CHECK: PASS: write: device, initial device: the closed descriptor -> -1 EBADF
// CHECK: PASS: write: initial device, device: the closed descriptor -> -1 EBADF
// CHECK: PASS: write: device, another device: the closed descriptor -> -1 EBADF
// CHECK: PASS: read: device, device: the closed descriptor -> -1 EBADF
// CHECK: PASS: read: device, device: the failed read's buffer is untouched
// CHECK: PASS: read: device, another device: the files are untouched
// CHECK: PASS: a good batch reads each file's own bytes
// CHECK: failures: 0

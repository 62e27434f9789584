// Every refusal of the batch API: NULL ops, nops 0, NULL batch handle (-1,
// EINVAL, nothing submitted); per operation, with the others running
// untouched: a bad opcode, a bad descriptor (EBADF), a buffer that is not
// the device's (EFAULT), a read's destination overlapping another read's
// (both refused) or a write's source (the read refused), written file
// ranges overlapping another operation's (both refused); a device without
// a request left (EAGAIN, nothing submitted); waiting twice and testing a
// waited batch (EINVAL); and the text of ompx_io_last_error naming the
// failed operations.
//
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic %t.dat | %fcheck-generic
// RUN: env OMPX_IO_PATH=staged \
// RUN:   %libomptarget-run-generic %t.dat | %fcheck-generic

#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "offload_io_test.h"
#include "ompx_io.h"

#define OP(code, f, buf, n, off, d)                                            \
  (ompx_io_op_t) { code, f, buf, n, off, d, -7, -7 }

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  int fd = ot_open_zeros(argv[1]);
  if (fd < 0)
    return 3;
  int dev = omp_get_default_device();
  char *d = omp_target_alloc(1 << 16, dev);
  char heap[64];
  memset(heap, 'x', sizeof heap);
  ompx_io_batch_t batch = (ompx_io_batch_t)1;
  ompx_io_op_t one = OP(OMPX_IO_OP_READ, fd, d, 10, 0, dev);

  EXPECT_ERRNO(ompx_io_batch_submit(NULL, 1, &batch), EINVAL, "NULL ops");
  OT_EXPECT(batch == NULL, "batch NULL after a refusal");
  EXPECT_ERRNO(ompx_io_batch_submit(&one, 0, &batch), EINVAL, "nops 0");
  EXPECT_ERRNO(ompx_io_batch_submit(&one, 1, NULL), EINVAL, "NULL batch");
  EXPECT_ERRNO(ompx_io_batch_test(NULL), EINVAL, "test NULL");
  EXPECT_ERRNO(ompx_io_batch_wait(NULL), EINVAL, "wait NULL");
  OT_EXPECT(one.result == -7, "nothing written by refused submissions");

  ompx_io_op_t ops[] = {
      OP(OMPX_IO_OP_READ, fd, d, 100, 0, dev),            // 0: good
      OP(7, fd, d + 200, 100, 0, dev),                    // 1: bad opcode
      OP(OMPX_IO_OP_READ, -1, d + 400, 100, 0, dev),      // 2: EBADF
      OP(OMPX_IO_OP_READ, fd, heap, 64, 0, dev),          // 3: EFAULT
      OP(OMPX_IO_OP_READ, fd, d + 1000, 100, 0, dev),     // 4: overlaps 5
      OP(OMPX_IO_OP_READ, fd, d + 1050, 100, 0, dev),     // 5: overlaps 4
      OP(OMPX_IO_OP_WRITE, fd, d + 2000, 100, 8192, dev), // 6: source of 7
      OP(OMPX_IO_OP_READ, fd, d + 2050, 10, 0, dev),      // 7: into 6's source
      OP(OMPX_IO_OP_WRITE, fd, d + 3000, 100, 500, dev),  // 8: file overlaps 9
      OP(OMPX_IO_OP_READ, fd, d + 4000, 100, 550, dev),   // 9: file overlaps 8
      OP(OMPX_IO_OP_WRITE, fd, d + 5000, 100, 9000, dev), // 10: good write
      OP(OMPX_IO_OP_READ, fd, d + 6000, 100, 100, dev),   // 11: good
  };
  int n = sizeof ops / sizeof ops[0];
  OT_EXPECT(ompx_io_batch_submit(ops, n, &batch) == 0, "mixed batch submitted");
  ssize_t failed = ompx_io_batch_wait(batch);
  OT_EXPECT(failed == 8, "wait: 8 operations failed (%zd)", failed);
  OT_EXPECT(ops[0].result == 100 && ops[0].error == 0, "good read runs");
  OT_EXPECT(ops[1].result == -1 && ops[1].error == EINVAL, "bad opcode: EINVAL");
  OT_EXPECT(ops[2].result == -1 && ops[2].error == EBADF, "bad fd: EBADF");
  OT_EXPECT(ops[3].result == -1 && ops[3].error == EFAULT, "bad buffer: EFAULT");
  OT_EXPECT(ops[4].error == EINVAL && ops[5].error == EINVAL,
            "overlapping destinations: both EINVAL");
  OT_EXPECT(ops[6].result == 100 && ops[6].error == 0 && ops[7].error == EINVAL,
            "read into a write's source: the read EINVAL, the write runs");
  OT_EXPECT(ops[8].error == EINVAL && ops[9].error == EINVAL,
            "overlapping file ranges with a write: both EINVAL");
  OT_EXPECT(ops[10].result == 100 && ops[11].result == 100,
            "the other operations run");
  const char *msg = ompx_io_last_error();
  printf("last error: %s\n", msg);
  OT_EXPECT(strstr(msg, "8 of 12 operations failed") &&
                strstr(msg, "operation 1 (opcode ?, fd") &&
                strstr(msg, "operation 2 (read, fd -1, 100 bytes at offset 0") &&
                strstr(msg, "and 0 more") == NULL,
            "last error names the failed operations");

  EXPECT_ERRNO(ompx_io_batch_wait(batch), EINVAL, "wait twice");
  EXPECT_ERRNO(ompx_io_batch_test(batch), EINVAL, "test on a waited batch");

  // More failures than the message names one by one.
  ompx_io_op_t bad[12];
  for (int i = 0; i < 12; ++i)
    bad[i] = OP(OMPX_IO_OP_READ, -1, d + 100 * i, 10, 0, dev);
  OT_EXPECT(ompx_io_batch_submit(bad, 12, &batch) == 0 &&
                ompx_io_batch_wait(batch) == 12,
            "twelve bad descriptors fail");
  OT_EXPECT(strstr(ompx_io_last_error(), "; and 4 more") != NULL,
            "last error: the first eight, then and 4 more");

  // A device with no request left refuses the whole batch.
  ompx_io_request_t reqs[300];
  int held = 0;
  // Each into its own bytes: requests in flight at once must not share a
  // destination.
  while (held < 300 && ompx_target_pread_async(fd, d + 8192 + 16 * held, 16,
                                               0, dev, &reqs[held]) == 0)
    ++held;
  ompx_io_op_t two[] = {OP(OMPX_IO_OP_READ, fd, d, 16, 0, dev),
                        OP(OMPX_IO_OP_READ, fd, heap, 16, 0,
                           omp_get_initial_device())};
  EXPECT_ERRNO(ompx_io_batch_submit(two, 2, &batch), EAGAIN,
               "no request left: EAGAIN");
  OT_EXPECT(two[1].result == -7 && heap[0] == 'x',
            "nothing ran, the initial device's read neither");
  for (int i = 0; i < held; ++i)
    ompx_io_wait(reqs[i]);
  OT_EXPECT(ompx_io_batch_submit(two, 2, &batch) == 0 &&
                ompx_io_batch_wait(batch) == 0 && two[1].result == 16,
            "after the wait for requests, the batch runs");

  omp_target_free(d, dev);
  close(fd);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: NULL ops -> -1 EINVAL
// CHECK: PASS: batch NULL after a refusal
// CHECK: PASS: nops 0 -> -1 EINVAL
// CHECK: PASS: NULL batch -> -1 EINVAL
// CHECK: PASS: test NULL -> -1 EINVAL
// CHECK: PASS: wait NULL -> -1 EINVAL
// CHECK: PASS: nothing written by refused submissions
// CHECK: PASS: mixed batch submitted
// CHECK: PASS: wait: 8 operations failed
// CHECK: PASS: good read runs
// CHECK: PASS: bad opcode: EINVAL
// CHECK: PASS: bad fd: EBADF
// CHECK: PASS: bad buffer: EFAULT
// CHECK: PASS: overlapping destinations: both EINVAL
// CHECK: PASS: read into a write's source: the read EINVAL, the write runs
// CHECK: PASS: overlapping file ranges with a write: both EINVAL
// CHECK: PASS: the other operations run
// CHECK: last error: ompx_io_batch_wait: 8 of 12 operations failed: operation 1 (opcode ?, fd {{[0-9]+}}, 100 bytes at offset 0, device {{[0-9]+}}): Invalid argument: opcode 7 is neither OMPX_IO_OP_READ nor OMPX_IO_OP_WRITE; operation 2
// CHECK: PASS: last error names the failed operations
// CHECK: PASS: wait twice -> -1 EINVAL
// CHECK: PASS: test on a waited batch -> -1 EINVAL
// CHECK: PASS: twelve bad descriptors fail
// CHECK: PASS: last error: the first eight, then and 4 more
// CHECK: PASS: no request left: EAGAIN
// CHECK: PASS: nothing ran, the initial device's read neither
// CHECK: PASS: after the wait for requests, the batch runs
// CHECK-NOT: FAIL
// CHECK: failures: 0

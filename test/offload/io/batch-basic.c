// ompx_io_batch_submit with a mix of devices (the default device, another
// one where there is one, and the initial device) and two files: many small
// reads whose file ranges touch (gathered by the engine), reads larger than
// a chunk, reads at and past end of file (short counts, 0), and writes to a
// second file, checked byte for byte. ompx_io_batch_test says 1 once done.
//
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic %t.dat | %fcheck-generic
// RUN: env OMPX_IO_PATH=staged OMPX_IO_CHUNK_SIZE=64K \
// RUN:   %libomptarget-run-generic %t.dat | %fcheck-generic
// RUN: env OMPX_IO_MAX_REQUESTS=1 OMPX_IO_CHUNK_SIZE=64K \
// RUN:   %libomptarget-run-generic %t.dat | %fcheck-generic

#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "offload_io_test.h"
#include "ompx_io.h"

#define FILE_SIZE (300 * 1000 + 123) // not a multiple of anything
#define SMALL 1000                   // bytes of each small read
#define NSMALL 200                   // small reads, touching, from offset 0
#define BIG (200 * 1000)             // a read of several 64 KiB chunks
#define NOPS (NSMALL + 8)

static unsigned char pattern(size_t i) { return (unsigned char)(i * 7 + 1); }

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  char out_path[4096];
  snprintf(out_path, sizeof out_path, "%s.out", argv[1]);
  int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
  int out = open(out_path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  unsigned char *h = malloc(FILE_SIZE);
  for (size_t i = 0; i < FILE_SIZE; ++i)
    h[i] = pattern(i);
  if (fd < 0 || out < 0 || pwrite(fd, h, FILE_SIZE, 0) != FILE_SIZE)
    return 3;

  int dev = omp_get_default_device();
  int dev2 = omp_get_num_devices() > 1 ? 1 : dev;
  int host = omp_get_initial_device();
  char *small = omp_target_alloc(NSMALL * SMALL, dev);
  char *big = omp_target_alloc(BIG, dev2);
  char *tail = omp_target_alloc(4096, dev);
  char *src = omp_target_alloc(BIG, dev2);
  unsigned char *hbuf = malloc(4096);
  unsigned char *hsrc = malloc(4096);
  memset(hsrc, 0x5a, 4096);
  // The write's source on the device: the file's first BIG bytes.
  omp_target_memcpy(src, h, BIG, 0, 0, dev2, host);

  ompx_io_op_t ops[NOPS];
  memset(ops, 0, sizeof ops);
  int n = 0;
  // Reversed order: the engine sorts them by offset to gather them.
  for (int i = NSMALL - 1; i >= 0; --i)
    ops[n++] = (ompx_io_op_t){OMPX_IO_OP_READ, fd, small + (size_t)i * SMALL,
                              SMALL, (off_t)i * SMALL, dev, 0, 0};
  int i_big = n;
  ops[n++] = (ompx_io_op_t){OMPX_IO_OP_READ, fd, big, BIG, 100000, dev2, 0, 0};
  int i_tail = n; // 100 bytes before the end: short
  ops[n++] = (ompx_io_op_t){OMPX_IO_OP_READ, fd, tail, 150, FILE_SIZE - 100,
                            dev, 0, 0};
  int i_eof = n; // at end of file: 0
  ops[n++] = (ompx_io_op_t){OMPX_IO_OP_READ, fd, tail + 200, 100, FILE_SIZE,
                            dev, 0, 0};
  int i_host = n;
  ops[n++] = (ompx_io_op_t){OMPX_IO_OP_READ, fd, hbuf, 4096, 5, host, 0, 0};
  int i_wdev = n;
  ops[n++] = (ompx_io_op_t){OMPX_IO_OP_WRITE, out, src, BIG, 4096, dev2, 0, 0};
  int i_whost = n;
  ops[n++] = (ompx_io_op_t){OMPX_IO_OP_WRITE, out, hsrc, 4096, 0, host, 0, 0};
  int i_zero = n;
  ops[n++] = (ompx_io_op_t){OMPX_IO_OP_READ, fd, tail + 400, 0, 0, dev, 0, 0};
  int i_past = n; // far past end of file: 0
  ops[n++] = (ompx_io_op_t){OMPX_IO_OP_READ, fd, tail + 500, 10, 1 << 30, dev,
                            0, 0};
  for (int i = 0; i < n; ++i) {
    ops[i].result = -7;
    ops[i].error = -7;
  }

  ompx_io_batch_t batch = NULL;
  OT_EXPECT(ompx_io_batch_submit(ops, n, &batch) == 0 && batch != NULL,
            "batch of %d operations submitted", n);
  OT_EXPECT(ops[0].result == -7, "results untouched until the wait");
  while (ompx_io_batch_test(batch) == 0)
    usleep(100);
  OT_EXPECT(ompx_io_batch_test(batch) == 1, "test: done");
  ssize_t failed = ompx_io_batch_wait(batch);
  OT_EXPECT(failed == 0, "wait: no operation failed");
  if (failed)
    printf("%s\n", ompx_io_last_error());

  int ok = 1;
  for (int i = 0; i < NSMALL; ++i)
    ok &= ops[i].result == SMALL && ops[i].error == 0;
  OT_EXPECT(ok, "small reads: %d bytes each", SMALL);
  OT_EXPECT(ops[i_big].result == BIG && ops[i_big].error == 0, "big read");
  OT_EXPECT(ops[i_tail].result == 100, "read across end of file: 100 bytes");
  OT_EXPECT(ops[i_eof].result == 0 && ops[i_eof].error == 0,
            "read at end of file: 0");
  OT_EXPECT(ops[i_past].result == 0, "read past end of file: 0");
  OT_EXPECT(ops[i_zero].result == 0 && ops[i_zero].error == 0, "count 0: 0");
  OT_EXPECT(ops[i_host].result == 4096, "initial-device read");
  OT_EXPECT(ops[i_wdev].result == BIG && ops[i_whost].result == 4096,
            "writes");

  unsigned char *back = malloc(NSMALL * SMALL > BIG ? NSMALL * SMALL : BIG);
  omp_target_memcpy(back, small, NSMALL * SMALL, 0, 0, host, dev);
  OT_EXPECT(memcmp(back, h, NSMALL * SMALL) == 0, "small reads' bytes");
  omp_target_memcpy(back, big, BIG, 0, 0, host, dev2);
  OT_EXPECT(memcmp(back, h + 100000, BIG) == 0, "big read's bytes");
  omp_target_memcpy(back, tail, 100, 0, 0, host, dev);
  OT_EXPECT(memcmp(back, h + FILE_SIZE - 100, 100) == 0, "tail's bytes");
  OT_EXPECT(memcmp(hbuf, h + 5, 4096) == 0, "initial-device bytes");
  unsigned char *file = malloc(4096 + BIG);
  OT_EXPECT(pread(out, file, 4096 + BIG, 0) == 4096 + BIG &&
                memcmp(file, hsrc, 4096) == 0 &&
                memcmp(file + 4096, h, BIG) == 0,
            "written file's bytes");

  omp_target_free(small, dev);
  omp_target_free(big, dev2);
  omp_target_free(tail, dev);
  omp_target_free(src, dev2);
  close(fd);
  close(out);
  unlink(out_path);
  free(h);
  free(back);
  free(file);
  free(hbuf);
  free(hsrc);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: batch of 208 operations submitted
// CHECK: PASS: results untouched until the wait
// CHECK: PASS: test: done
// CHECK: PASS: wait: no operation failed
// CHECK: PASS: small reads: 1000 bytes each
// CHECK: PASS: big read
// CHECK: PASS: read across end of file: 100 bytes
// CHECK: PASS: read at end of file: 0
// CHECK: PASS: read past end of file: 0
// CHECK: PASS: count 0: 0
// CHECK: PASS: initial-device read
// CHECK: PASS: writes
// CHECK: PASS: small reads' bytes
// CHECK: PASS: big read's bytes
// CHECK: PASS: tail's bytes
// CHECK: PASS: initial-device bytes
// CHECK: PASS: written file's bytes
// CHECK-NOT: FAIL
// CHECK: failures: 0

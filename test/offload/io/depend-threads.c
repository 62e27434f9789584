// Depend transfers issued from every thread of a parallel region at once,
// each thread with its own buffers and depend objects, then taskwait: per
// pair, a read, a plain task that depends on the read, and a write of the
// transformed buffer that depends on that task. libomp finishes a detached
// task fulfilled outside the team in a thread of the team that may be
// another thread than the one that created it; none of the threads waiting
// in taskwait may be left without a task it is allowed to run (the hang of
// issue 27: every thread spinning in taskwait, the IO workers idle).
// timeout turns a hang into a failure. Two threads of 8 pairs, eight of 16,
// and eight of 64 with room for only 4 requests per device: transfers whose
// tasks start while OMPX_IO_MAX_REQUESTS are in flight wait for one to
// complete, instead of failing with EAGAIN.
//
// REQUIRES: ompx-io
// The order these tasks run in is libomp's, which TSan cannot see (libomp
// is not instrumented): every hand-off between the program's thread and a
// task reads as a race. Our side of it, the engine's completion
// notification, runs under TSan in IORequestNotifyTest and IOBatchTest.
// UNSUPPORTED: thread-sanitizer
// RUN: %libomptarget-compile-generic
// RUN: timeout 60 %libomptarget-run-generic %t.dat 2 8 | %fcheck-generic
// RUN: timeout 60 %libomptarget-run-generic %t.dat 8 16 | %fcheck-generic
// RUN: env OMPX_IO_MAX_REQUESTS=4 \
// RUN:   timeout 120 %libomptarget-run-generic %t.dat 8 64 | %fcheck-generic

#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "offload_test.h"
#include "ompx_io_depend.h"

#define BYTES 4096
#define MAX_PAIRS 64

static unsigned char pattern(size_t i) { return (unsigned char)(i * 7 + 3); }

int main(int argc, char **argv) {
  if (argc < 4)
    return 2;
  setvbuf(stdout, NULL, _IONBF, 0);
  int threads = atoi(argv[2]), pairs = atoi(argv[3]);
  if (threads < 1 || pairs < 1 || pairs > MAX_PAIRS)
    return 2;
  int dev = omp_get_default_device();
  size_t total = (size_t)threads * pairs * BYTES;

  char in_path[4096], out_path[4096];
  snprintf(in_path, sizeof in_path, "%s.in", argv[1]);
  snprintf(out_path, sizeof out_path, "%s.out", argv[1]);
  int in = open(in_path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  int out = open(out_path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  unsigned char *h = malloc(total);
  for (size_t i = 0; i < total; ++i)
    h[i] = pattern(i);
  OT_EXPECT(in >= 0 && out >= 0 && pwrite(in, h, total, 0) == (ssize_t)total,
            "files");

  int refused = 0;
  long failed = 0;
#pragma omp parallel num_threads(threads) reduction(+ : refused, failed)
  {
    int t = omp_get_thread_num();
    unsigned char *d = omp_target_alloc((size_t)pairs * BYTES, dev);
    ssize_t r[2 * MAX_PAIRS];
    int e[2 * MAX_PAIRS];
    for (int p = 0; p < pairs; ++p) {
      unsigned char *b = d + (size_t)p * BYTES;
      off_t off = (off_t)((size_t)t * pairs + p) * BYTES;
      omp_depend_t read_out, write_in;
#pragma omp depobj(read_out) depend(out: b[0])
#pragma omp depobj(write_in) depend(in: b[0])
      r[2 * p] = r[2 * p + 1] = -2;
      refused += ompx_target_pread_depend(in, b, BYTES, off, dev, &r[2 * p],
                                          &e[2 * p], 1, &read_out) != 0;
      // A plain task between the two, as a kernel would be: tied, released
      // by the read's completion.
#pragma omp task depend(inout: b[0]) firstprivate(b, dev)
      {
        unsigned char tmp[BYTES];
        omp_target_memcpy(tmp, b, BYTES, 0, 0, omp_get_initial_device(), dev);
        for (int i = 0; i < BYTES; ++i)
          tmp[i] = (unsigned char)(tmp[i] + 1);
        omp_target_memcpy(b, tmp, BYTES, 0, 0, dev, omp_get_initial_device());
      }
      refused += ompx_target_pwrite_depend(out, b, BYTES, off, dev,
                                           &r[2 * p + 1], &e[2 * p + 1], 1,
                                           &write_in) != 0;
#pragma omp depobj(read_out) destroy
#pragma omp depobj(write_in) destroy
    }
#pragma omp taskwait
    for (int k = 0; k < 2 * pairs; ++k)
      failed += r[k] != BYTES || e[k] != 0;
    omp_target_free(d, dev);
  }
  OT_EXPECT(refused == 0, "%d threads x %d pairs: tasks created", threads,
            pairs);
  OT_EXPECT(failed == 0, "%d threads x %d pairs: every transfer done",
            threads, pairs);
  unsigned char *back = malloc(total);
  long bad = pread(out, back, total, 0) == (ssize_t)total ? 0 : -1;
  for (size_t i = 0; bad >= 0 && i < total; ++i)
    bad += back[i] != (unsigned char)(pattern(i) + 1);
  OT_EXPECT(bad == 0, "%d threads x %d pairs: file written (%ld bad)",
            threads, pairs, bad);
  free(back);
  free(h);
  close(in);
  close(out);
  unlink(in_path);
  unlink(out_path);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: files
// CHECK: PASS: {{[0-9]+}} threads x {{[0-9]+}} pairs: tasks created
// CHECK: PASS: {{[0-9]+}} threads x {{[0-9]+}} pairs: every transfer done
// CHECK: PASS: {{[0-9]+}} threads x {{[0-9]+}} pairs: file written (0 bad)
// CHECK-NOT: FAIL
// CHECK: failures: 0

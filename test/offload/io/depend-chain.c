// ompx_target_pread_depend / ompx_target_pwrite_depend ordered with OpenMP
// dependences, no host wait in between: read a file into device memory ->
// a target nowait kernel that depends on it -> write the result to a second
// file -> read that file back into a second buffer, every step a task
// created at once, joined by one taskwait. Run outside any parallel region
// (a serial team), inside parallel/single, several independent chains at
// once from the threads of a parallel region, and with device_num the
// initial device (host memory, transferred in the task).
//
// REQUIRES: ompx-io
// The order these tasks run in is libomp's, which TSan cannot see (libomp
// is not instrumented): every hand-off between the program's thread and a
// task reads as a race. Our side of it, the engine's completion
// notification, runs under TSan in IORequestNotifyTest and IOBatchTest.
// UNSUPPORTED: thread-sanitizer
// The HSA emulation runs no kernels; the GPU round runs this on amdgcn.
// UNSUPPORTED: hsa-emulation
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic %t.dat | %fcheck-generic
// RUN: env OMPX_IO_PATH=staged OMPX_IO_CHUNK_SIZE=64K \
// RUN:   %libomptarget-run-generic %t.dat | %fcheck-generic

#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "offload_test.h"
#include "ompx_io_depend.h"

#define N (1 << 18) // ints per chain: 1 MiB
#define CHAINS 4

static unsigned value(size_t i, unsigned seed) {
  return (unsigned)(i * 2654435761u + seed);
}

/// One chain's files, buffers and results.
struct chain {
  int in, out;       // the input file and the file the result goes to
  unsigned *d, *back; // device buffers: the input, and the result read back
  ssize_t r[3];
  int e[3];
};

static int open_file(const char *base, const char *what, int k, unsigned seed) {
  char path[4096];
  snprintf(path, sizeof path, "%s.%s%d", base, what, k);
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  unlink(path);
  if (fd >= 0 && seed) {
    unsigned *h = malloc(N * sizeof *h);
    for (size_t i = 0; i < N; ++i)
      h[i] = value(i, seed);
    if (pwrite(fd, h, N * sizeof *h, 0) != (ssize_t)(N * sizeof *h))
      fd = -1;
    free(h);
  }
  return fd;
}

/// Create the chain's four tasks; returns at once, with the number of
/// depend calls that failed.
static int start_chain(struct chain *c, int dev) {
  unsigned *d = c->d, *back = c->back;
  int out = c->out;
  omp_depend_t d_out, d_in, file_out, file_in, back_out;
#pragma omp depobj(d_out) depend(out: d[0])
#pragma omp depobj(d_in) depend(in: d[0])
#pragma omp depobj(file_out) depend(out: c->out)
#pragma omp depobj(file_in) depend(in: c->out)
#pragma omp depobj(back_out) depend(out: back[0])
  omp_depend_t read_deps[1] = {d_out};
  omp_depend_t write_deps[2] = {d_in, file_out};
  omp_depend_t back_deps[2] = {file_in, back_out};
  int failed = ompx_target_pread_depend(c->in, d, N * sizeof *d, 0, dev,
                                        &c->r[0], &c->e[0], 1, read_deps) != 0;
  if (dev == omp_get_initial_device()) {
#pragma omp task depend(inout: d[0])
    for (size_t i = 0; i < N; ++i)
      d[i] = d[i] * 3 + 1;
  } else {
#pragma omp target teams distribute parallel for device(dev) is_device_ptr(d) \
    depend(inout: d[0]) nowait
    for (size_t i = 0; i < N; ++i)
      d[i] = d[i] * 3 + 1;
  }
  failed += ompx_target_pwrite_depend(out, d, N * sizeof *d, 0, dev, &c->r[1],
                                      &c->e[1], 2, write_deps) != 0;
  failed += ompx_target_pread_depend(out, back, N * sizeof *back, 0, dev,
                                     &c->r[2], &c->e[2], 2, back_deps) != 0;
#pragma omp depobj(d_out) destroy
#pragma omp depobj(d_in) destroy
#pragma omp depobj(file_out) destroy
#pragma omp depobj(file_in) destroy
#pragma omp depobj(back_out) destroy
  return failed;
}

/// Check a chain after taskwait: results, and both files' bytes.
static void check_chain(struct chain *c, int dev, unsigned seed,
                        const char *label) {
  size_t bytes = N * sizeof(unsigned);
  OT_EXPECT(c->r[0] == (ssize_t)bytes && c->r[1] == (ssize_t)bytes &&
                c->r[2] == (ssize_t)bytes && !c->e[0] && !c->e[1] && !c->e[2],
            "%s: results", label);
  unsigned *h = malloc(bytes);
  long bad = 0;
  if (pread(c->out, h, bytes, 0) != (ssize_t)bytes)
    bad = -1;
  for (size_t i = 0; bad >= 0 && i < N; ++i)
    bad += h[i] != value(i, seed) * 3 + 1;
  OT_EXPECT(bad == 0, "%s: file written after the kernel (%ld bad)", label,
            bad);
  memset(h, 0, bytes);
  omp_target_memcpy(h, c->back, bytes, 0, 0, omp_get_initial_device(), dev);
  bad = 0;
  for (size_t i = 0; i < N; ++i)
    bad += h[i] != value(i, seed) * 3 + 1;
  OT_EXPECT(bad == 0, "%s: read back after the write (%ld bad)", label, bad);
  free(h);
}

static void setup(struct chain *c, const char *base, int k, int dev,
                  unsigned seed) {
  c->in = open_file(base, "in", k, seed);
  c->out = open_file(base, "out", k, 0);
  c->d = omp_target_alloc(N * sizeof(unsigned), dev);
  c->back = omp_target_alloc(N * sizeof(unsigned), dev);
  for (int i = 0; i < 3; ++i)
    c->r[i] = -2, c->e[i] = -2;
}

static void teardown(struct chain *c, int dev) {
  close(c->in);
  close(c->out);
  omp_target_free(c->d, dev);
  omp_target_free(c->back, dev);
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  setvbuf(stdout, NULL, _IONBF, 0);
  int dev = omp_get_default_device();
  struct chain c[CHAINS];

  // Outside any parallel region.
  setup(&c[0], argv[1], 0, dev, 11);
  OT_EXPECT(start_chain(&c[0], dev) == 0, "serial: tasks created");
#pragma omp taskwait
  check_chain(&c[0], dev, 11, "serial");
  teardown(&c[0], dev);

  // Inside parallel/single: the other threads run the tasks.
#pragma omp parallel num_threads(4)
#pragma omp single
  {
    setup(&c[0], argv[1], 0, dev, 22);
    OT_EXPECT(start_chain(&c[0], dev) == 0, "single: tasks created");
#pragma omp taskwait
    check_chain(&c[0], dev, 22, "single");
    teardown(&c[0], dev);
  }

  // Independent chains from every thread at once, joined by the barrier.
  for (int k = 0; k < CHAINS; ++k)
    setup(&c[k], argv[1], k, dev, 100 + k);
  int failed = 0;
#pragma omp parallel for num_threads(CHAINS) reduction(+ : failed)
  for (int k = 0; k < CHAINS; ++k)
    failed += start_chain(&c[k], dev);
  OT_EXPECT(failed == 0, "chains: tasks created");
  for (int k = 0; k < CHAINS; ++k) {
    char label[32];
    snprintf(label, sizeof label, "chain %d", k);
    check_chain(&c[k], dev, 100 + k, label);
    teardown(&c[k], dev);
  }

  // The initial device: host memory, transferred in the task.
  int host = omp_get_initial_device();
  setup(&c[0], argv[1], 0, host, 33);
  OT_EXPECT(start_chain(&c[0], host) == 0, "initial device: tasks created");
#pragma omp taskwait
  check_chain(&c[0], host, 33, "initial device");
  teardown(&c[0], host);

  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: serial: tasks created
// CHECK: PASS: serial: results
// CHECK: PASS: serial: file written after the kernel (0 bad)
// CHECK: PASS: serial: read back after the write (0 bad)
// CHECK: PASS: single: results
// CHECK: PASS: single: file written after the kernel (0 bad)
// CHECK: PASS: single: read back after the write (0 bad)
// CHECK: PASS: chain 0: results
// CHECK: PASS: chain 3: read back after the write (0 bad)
// CHECK: PASS: initial device: results
// CHECK: PASS: initial device: read back after the write (0 bad)
// CHECK-NOT: FAIL
// CHECK: failures: 0

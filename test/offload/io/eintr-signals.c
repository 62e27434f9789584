// Transfers survive a storm of signals: SIGALRM every 100 us from
// setitimer, with a handler installed without SA_RESTART, while the engine
// reads /dev/zero (whose reads return short counts when a signal arrives,
// or EINTR) and regular files. The main thread blocks SIGALRM during device
// transfers so that the signals land on the engine's threads, and takes them
// itself during transfers on the initial device. Counts and data stay exact.
//
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic %t.dat | %fcheck-generic
// RUN: env OMPX_IO_PATH=staged OMPX_IO_CHUNK_SIZE=1M \
// RUN:   %libomptarget-run-generic %t.dat | %fcheck-generic
// RUN: env OMPX_IO_CHUNK_SIZE=64K OMPX_IO_THREADS=6 \
// RUN:   %libomptarget-run-generic %t.dat | %fcheck-generic

#include <fcntl.h>
#include <omp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>
#include "offload_pattern.h"
#include "offload_test.h"
#include "ompx_io.h"

#define ZERO_SIZE (32 << 20)
#define FILE_SIZE ((16 << 20) + 77)

static atomic_long signals;
static void on_alarm(int sig) {
  (void)sig;
  atomic_fetch_add(&signals, 1);
}

static void block_alarm(int block) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGALRM);
  pthread_sigmask(block ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  unsigned char *h = malloc(ZERO_SIZE);
  for (size_t i = 0; i < FILE_SIZE; ++i)
    h[i] = ot_pattern(i, 1);
  int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || pwrite(fd, h, FILE_SIZE, 0) != FILE_SIZE)
    return 3;
  int zero = open("/dev/zero", O_RDONLY);
  int dev = omp_get_default_device();
  char *dbuf = omp_target_alloc(ZERO_SIZE, dev);

  // Start the engine's threads before any signal is blocked, so that they
  // take SIGALRM.
  OT_EXPECT(ompx_target_pread(fd, dbuf, 4096, 0, dev) == 4096, "warm-up read");

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0; // No SA_RESTART: interrupted calls fail with EINTR.
  sigaction(SIGALRM, &sa, NULL);
  struct itimerval it = {{0, 100}, {0, 100}};
  setitimer(ITIMER_REAL, &it, NULL);
  block_alarm(1);

  int zeros_ok = 1;
  for (int rep = 0; rep < 8; ++rep) {
    memset(h, 0xAB, ZERO_SIZE);
    omp_target_memcpy(dbuf, h, ZERO_SIZE, 0, 0, dev, omp_get_initial_device());
    ssize_t n = ompx_target_pread(zero, dbuf, ZERO_SIZE, 0, dev);
    omp_target_memcpy(h, dbuf, ZERO_SIZE, 0, 0, omp_get_initial_device(), dev);
    size_t bad = 0;
    for (size_t i = 0; i < ZERO_SIZE; ++i)
      bad += h[i] != 0;
    zeros_ok &= n == ZERO_SIZE && bad == 0;
  }
  OT_EXPECT(zeros_ok, "/dev/zero read fully into the device 8 times");

  int file_ok = 1;
  for (int rep = 0; rep < 4; ++rep) {
    ssize_t n = ompx_target_pread(fd, dbuf, ZERO_SIZE, 0, dev);
    ssize_t m = ompx_target_pwrite(fd, dbuf, FILE_SIZE, FILE_SIZE, dev);
    memset(h, 0, FILE_SIZE);
    size_t bad = pread(fd, h, FILE_SIZE, FILE_SIZE) != FILE_SIZE;
    for (size_t i = 0; i < FILE_SIZE; ++i)
      bad += h[i] != ot_pattern(i, 1);
    file_ok &= n == FILE_SIZE && m == FILE_SIZE && bad == 0;
    if (ftruncate(fd, FILE_SIZE) != 0)
      return 4;
  }
  OT_EXPECT(file_ok, "file read and written exactly 4 times");

  // Async requests in flight while signals arrive.
  ompx_io_request_t reqs[8];
  int rc = 0;
  for (int i = 0; i < 8; ++i)
    rc |= ompx_target_pread_async(zero, dbuf + (size_t)i * (ZERO_SIZE / 8),
                                  ZERO_SIZE / 8, 0, dev, &reqs[i]);
  ssize_t total = 0;
  for (int i = 0; i < 8; ++i)
    total += ompx_io_wait(reqs[i]);
  OT_EXPECT(rc == 0 && total == ZERO_SIZE, "8 async /dev/zero reads");

  // The initial device: the calling thread takes the signals.
  block_alarm(0);
  int host_ok = 1;
  for (int rep = 0; rep < 8; ++rep) {
    memset(h, 0xAB, ZERO_SIZE);
    ssize_t n = ompx_target_pread(zero, h, ZERO_SIZE, 0,
                                  omp_get_initial_device());
    size_t bad = 0;
    for (size_t i = 0; i < ZERO_SIZE; ++i)
      bad += h[i] != 0;
    host_ok &= n == ZERO_SIZE && bad == 0;
  }
  OT_EXPECT(host_ok, "/dev/zero read fully into host memory 8 times");

  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  long got = atomic_load(&signals);
  OT_EXPECT(got > 100, "signals were delivered during the transfers");

  omp_target_free(dbuf, dev);
  close(fd);
  close(zero);
  free(h);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: warm-up read
// CHECK: PASS: /dev/zero read fully into the device 8 times
// CHECK: PASS: file read and written exactly 4 times
// CHECK: PASS: 8 async /dev/zero reads
// CHECK: PASS: /dev/zero read fully into host memory 8 times
// CHECK: PASS: signals were delivered during the transfers
// CHECK-NOT: FAIL
// CHECK: failures: 0

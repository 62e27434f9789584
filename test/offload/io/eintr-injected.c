// EINTR and short counts at every step, injected: the program defines
// pread and pwrite itself (exported with -rdynamic, so the plugin's and
// libompx_io's calls reach them) and, while a transfer runs, fails every
// third call with EINTR and cuts every other one short. Reads and writes of
// device and host memory still move exact data, and a read across end of
// file still stops exactly at the end.
//
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic -rdynamic -ldl
// RUN: env OMPX_IO_PATH=staged %libomptarget-run-generic %t.dat \
// RUN:   | %fcheck-generic
// RUN: env OMPX_IO_PATH=staged OMPX_IO_CHUNK_SIZE=64K OMPX_IO_THREADS=4 \
// RUN:   %libomptarget-run-generic %t.dat | %fcheck-generic
// RUN: %if host-plugin %{ env OMPX_IO_PATH=direct %libomptarget-run-generic \
// RUN:   %t.dat | %fcheck-generic %}
// RUN: %if host-plugin %{ env OMPX_IO_PATH=direct OMPX_IO_CHUNK_SIZE=64K \
// RUN:   %libomptarget-run-generic %t.dat | %fcheck-generic %}

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "offload_pattern.h"
#include "offload_test.h"
#include "ompx_io.h"

static atomic_int inject;
static atomic_long calls, eintrs, shorts;

typedef ssize_t (*pread_fn)(int, void *, size_t, off_t);
typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);

// 0: fail with EINTR; 1: cut to half (at least 1 byte); 2: pass through.
static int decide(size_t *count) {
  if (!atomic_load(&inject))
    return 2;
  long c = atomic_fetch_add(&calls, 1);
  if (c % 3 == 0) {
    atomic_fetch_add(&eintrs, 1);
    return 0;
  }
  if (c % 3 == 1 && *count > 1) {
    atomic_fetch_add(&shorts, 1);
    *count = *count / 2;
  }
  return 1;
}

ssize_t pread(int fd, void *buf, size_t count, off_t offset) {
  static pread_fn real;
  if (!real)
    real = (pread_fn)dlsym(RTLD_NEXT, "pread");
  if (decide(&count) == 0) {
    errno = EINTR;
    return -1;
  }
  return real(fd, buf, count, offset);
}
ssize_t pread64(int fd, void *buf, size_t count, off_t offset) {
  return pread(fd, buf, count, offset);
}

ssize_t pwrite(int fd, const void *buf, size_t count, off_t offset) {
  static pwrite_fn real;
  if (!real)
    real = (pwrite_fn)dlsym(RTLD_NEXT, "pwrite");
  if (decide(&count) == 0) {
    errno = EINTR;
    return -1;
  }
  return real(fd, buf, count, offset);
}
ssize_t pwrite64(int fd, const void *buf, size_t count, off_t offset) {
  return pwrite(fd, buf, count, offset);
}

#define SIZE ((3 << 20) + 4321)

static size_t bad_file(int fd, size_t off, int seed) {
  unsigned char *h = malloc(SIZE);
  size_t bad = pread(fd, h, SIZE, off) != SIZE;
  for (size_t i = 0; i < SIZE; ++i)
    bad += h[i] != ot_pattern(i, seed);
  free(h);
  return bad;
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  unsigned char *h = malloc(SIZE);
  for (size_t i = 0; i < SIZE; ++i)
    h[i] = ot_pattern(i, 1);
  int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || pwrite(fd, h, SIZE, 0) != SIZE)
    return 3;
  int dev = omp_get_default_device();
  int host = omp_get_initial_device();
  char *dbuf = omp_target_alloc(SIZE, dev);

  atomic_store(&inject, 1);
  ssize_t n = ompx_target_pread(fd, dbuf, SIZE, 0, dev);
  atomic_store(&inject, 0);
  memset(h, 0, SIZE);
  omp_target_memcpy(h, dbuf, SIZE, 0, 0, host, dev);
  size_t bad = 0;
  for (size_t i = 0; i < SIZE; ++i)
    bad += h[i] != ot_pattern(i, 1);
  OT_EXPECT(n == SIZE && bad == 0, "device read exact");

  for (size_t i = 0; i < SIZE; ++i)
    h[i] = ot_pattern(i, 9);
  omp_target_memcpy(dbuf, h, SIZE, 0, 0, dev, host);
  atomic_store(&inject, 1);
  n = ompx_target_pwrite(fd, dbuf, SIZE, SIZE, dev);
  atomic_store(&inject, 0);
  OT_EXPECT(n == SIZE && bad_file(fd, SIZE, 9) == 0, "device write exact");

  // Across end of file: short reads near the end must not be taken for it,
  // nor may the end be missed.
  atomic_store(&inject, 1);
  n = ompx_target_pread(fd, dbuf, SIZE, SIZE + 1000, dev);
  atomic_store(&inject, 0);
  OT_EXPECT(n == SIZE - 1000, "device read across end of file: %zd", n);

  // Async, several in flight.
  ompx_io_request_t r[4];
  int rc = 0;
  atomic_store(&inject, 1);
  for (int i = 0; i < 4; ++i)
    rc |= ompx_target_pread_async(fd, dbuf + i * (SIZE / 4), SIZE / 4,
                                  i * (SIZE / 4), dev, &r[i]);
  ssize_t total = 0;
  for (int i = 0; i < 4; ++i)
    total += ompx_io_wait(r[i]);
  atomic_store(&inject, 0);
  OT_EXPECT(rc == 0 && total == 4 * (SIZE / 4), "async device reads");

  // Host memory.
  memset(h, 0, SIZE);
  atomic_store(&inject, 1);
  n = ompx_target_pread(fd, h, SIZE, 0, host);
  ssize_t m = ompx_target_pwrite(fd, h, SIZE, 2 * SIZE, host);
  atomic_store(&inject, 0);
  bad = 0;
  for (size_t i = 0; i < SIZE; ++i)
    bad += h[i] != ot_pattern(i, 1);
  OT_EXPECT(n == SIZE && m == SIZE && bad == 0 && bad_file(fd, 2 * SIZE, 1) == 0,
            "host read and write exact");

  // Every third call failed and every third was cut: the phases above make
  // at least 9 calls in all.
  fprintf(stderr, "calls %ld EINTR %ld short %ld\n", atomic_load(&calls),
          atomic_load(&eintrs), atomic_load(&shorts));
  printf("injected: EINTR %s, short %s\n",
         atomic_load(&eintrs) >= 3 ? "yes" : "no",
         atomic_load(&shorts) >= 3 ? "yes" : "no");
  omp_target_free(dbuf, dev);
  close(fd);
  free(h);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: device read exact
// CHECK: PASS: device write exact
// CHECK: PASS: device read across end of file: 3149049
// CHECK: PASS: async device reads
// CHECK: PASS: host read and write exact
// CHECK: injected: EINTR yes, short yes
// CHECK-NOT: FAIL
// CHECK: failures: 0

// The file engine's pinned bounce buffers refused: the program defines
// aligned_alloc itself (exported with -rdynamic, so the host plugin's
// allocations reach it) and refuses allocations of at least 64 KiB while
// armed, after letting a given number through. A staged read or write whose
// ring cannot be allocated at first use fails with ENOMEM, as does one whose
// ring is refused partway (one worker, ring of two: the first buffer is
// allocated, the second refused); async requests report it at ompx_io_wait.
// With OFFLOADIO_INFO the plugin prints the reason, naming the size and
// the device. Once memory is back the same engine moves exact data. Run
// under LeakSanitizer where available.
//
// REQUIRES: host-plugin, ompx-io
// RUN: %libomptarget-compile-generic -rdynamic -ldl
// RUN: env OMPX_IO_PATH=staged OMPX_IO_CHUNK_SIZE=64K OMPX_IO_THREADS=1 \
// RUN:   OMPX_IO_RING_DEPTH=2 OFFLOADIO_INFO=1 \
// RUN:   %libomptarget-run-generic %t.dat 2>&1 | %fcheck-generic
// RUN: %if lsan %{ %lsan-env OMPX_IO_PATH=staged OMPX_IO_CHUNK_SIZE=64K \
// RUN:   OMPX_IO_THREADS=1 OMPX_IO_RING_DEPTH=2 OFFLOADIO_INFO=1 \
// RUN:   %t %t.dat 2>&1 | %fcheck-generic %}

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "offload_io_test.h"
#include "offload_pattern.h"
#include "ompx_io.h"

static atomic_int armed, allow;

void *aligned_alloc(size_t alignment, size_t size) {
  static void *(*real)(size_t, size_t);
  if (!real)
    real = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "aligned_alloc");
  if (atomic_load(&armed) && size >= (64 << 10) &&
      atomic_fetch_sub(&allow, 1) <= 0) {
    errno = ENOMEM;
    return NULL;
  }
  return real(alignment, size);
}

#define SIZE (1 << 20)

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  setvbuf(stdout, NULL, _IONBF, 0);
  unsigned char *h = malloc(SIZE);
  for (size_t i = 0; i < SIZE; ++i)
    h[i] = ot_pattern(i, 1);
  int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || pwrite(fd, h, SIZE, 0) != SIZE)
    return 3;
  int dev = omp_get_default_device();
  int host = omp_get_initial_device();
  char *dbuf = omp_target_alloc(SIZE, dev);

  // First use: no bounce buffer at all.
  atomic_store(&allow, 0);
  atomic_store(&armed, 1);
  printf("first use\n");
  EXPECT_ERRNO(ompx_target_pread(fd, dbuf, SIZE, 0, dev), ENOMEM,
               "staged read, ring refused at first use: ENOMEM");
  EXPECT_ERRNO(ompx_target_pwrite(fd, dbuf, SIZE, SIZE, dev), ENOMEM,
               "staged write, ring refused at first use: ENOMEM");
  ompx_io_request_t req;
  int rc = ompx_target_pread_async(fd, dbuf, SIZE, 0, dev, &req);
  OT_EXPECT(rc == 0, "async read submitted");
  EXPECT_ERRNO(ompx_io_wait(req), ENOMEM, "async read: ENOMEM at wait");

  // Partway: the first buffer of the ring, then refusals.
  atomic_store(&allow, 1);
  printf("partway\n");
  EXPECT_ERRNO(ompx_target_pread(fd, dbuf, SIZE, 0, dev), ENOMEM,
               "staged read, ring refused partway: ENOMEM");
  atomic_store(&armed, 0);

  // Memory is back: the same engine completes its ring and is exact.
  printf("memory back\n");
  ssize_t n = ompx_target_pread(fd, dbuf, SIZE, 0, dev);
  memset(h, 0, SIZE);
  omp_target_memcpy(h, dbuf, SIZE, 0, 0, host, dev);
  size_t bad = 0;
  for (size_t i = 0; i < SIZE; ++i)
    bad += h[i] != ot_pattern(i, 1);
  OT_EXPECT(n == SIZE && bad == 0, "read exact");
  n = ompx_target_pwrite(fd, dbuf, SIZE, SIZE, dev);
  bad = pread(fd, h, SIZE, SIZE) != SIZE;
  for (size_t i = 0; i < SIZE; ++i)
    bad += h[i] != ot_pattern(i, 1);
  OT_EXPECT(n == SIZE && bad == 0, "write exact");

  omp_target_free(dbuf, dev);
  free(h);
  close(fd);
  OT_SUMMARY();
  return 0;
}

// CHECK: first use
// CHECK: offload-io(x86_64)[{{[0-9]+}}]: aligned_alloc of 69632 bytes of host memory on device 0 failed: Cannot allocate memory
// CHECK: PASS: staged read, ring refused at first use: ENOMEM
// CHECK: PASS: staged write, ring refused at first use: ENOMEM
// CHECK: PASS: async read submitted
// CHECK: PASS: async read: ENOMEM at wait
// CHECK: partway
// CHECK: PASS: staged read, ring refused partway: ENOMEM
// CHECK: memory back
// CHECK: PASS: read exact
// CHECK: PASS: write exact
// CHECK-NOT: FAIL
// CHECK: failures: 0

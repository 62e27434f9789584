// OMPX_IO_PATH=fastpath on the amdgpu plugin with AIS (HSA_EMU_AIS=on):
// requests AIS accepts (O_DIRECT descriptor, device memory, file offset,
// size and buffer 4 KiB aligned) run on the fastpath with exact data; every
// other request fails at submission with ENOTSUP (a misaligned offset, size
// or buffer, a descriptor without O_DIRECT, host memory), asynchronous ones
// leaving the request NULL, and nothing is counted for them.
//
// Under HSA_EMU_AIS=enodev the first forced request is accepted, fails in
// AIS with ENODEV and is completed on the staged path (the engine's
// fallback applies to forced requests too); the plugin then knows the
// storage device has no P2P path, so later forced requests fail with
// ENOTSUP at submission.
//
// REQUIRES: amdgcn-amd-amdhsa, hsa-emulation, ompx-io
// RUN: %libomptarget-compile-generic
// RUN: env HSA_EMU_AIS=on OMPX_IO_PATH=fastpath %libomptarget-run-generic %t.dat \
// RUN:   | %fcheck-generic
// RUN: env HSA_EMU_AIS=enodev OMPX_IO_PATH=fastpath %libomptarget-run-generic %t.dat \
// RUN:   | %fcheck-generic --check-prefix=ENODEV

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
// The device pass pre-includes system headers before _GNU_SOURCE takes
// effect; its code never opens files.
#if !defined(O_DIRECT) && defined(__AMDGCN__)
#define O_DIRECT 0
#endif
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "offload_test.h"
#include "ompx_io.h"

extern void *llvm_omp_target_alloc_host(size_t size, int device_num);
extern void llvm_omp_target_free_host(void *ptr, int device_num);

#define SIZE (1 << 20)

static int dev;

static unsigned char pat(size_t o) { return (unsigned char)(o * 29 + 7); }

static void show(const char *what, ssize_t n) {
  printf("%s: %zd %s\n", what, n,
         n >= 0 ? "" : errno == ENOTSUP ? "ENOTSUP" : strerror(errno));
}

static int exact(const char *d, size_t n, size_t off) {
  unsigned char *h = malloc(n);
  omp_target_memcpy(h, d, n, 0, 0, omp_get_initial_device(), dev);
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i)
    bad += h[i] != pat(off + i);
  free(h);
  return bad == 0;
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  dev = omp_get_default_device();
  unsigned char *h = malloc(2 * SIZE);
  for (size_t i = 0; i < 2 * SIZE; ++i)
    h[i] = pat(i);
  int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || pwrite(fd, h, 2 * SIZE, 0) != 2 * SIZE || fsync(fd))
    return 3;
  int dfd = open(argv[1], O_RDWR | O_DIRECT);
  if (dfd < 0) {
    printf("O_DIRECT: open of %s failed: %s (this test needs a filesystem "
           "with direct IO)\n",
           argv[1], strerror(errno));
    return 0;
  }
  char *d = omp_target_alloc(2 * SIZE, dev);
  char *hm = llvm_omp_target_alloc_host(SIZE, dev);
  ompx_io_stats_t s0, s1;
  ompx_io_get_stats(dev, &s0);

  errno = 0;
  ssize_t n = ompx_target_pread(dfd, d, SIZE, 0, dev);
  show("aligned read", n);
  if (n == SIZE)
    OT_EXPECT(exact(d, SIZE, 0), "data exact");

  errno = 0;
  show("offset 512", ompx_target_pread(dfd, d, SIZE, 512, dev));
  errno = 0;
  show("size 1 MiB + 512", ompx_target_pread(dfd, d, SIZE + 512, 0, dev));
  errno = 0;
  show("buffer + 512", ompx_target_pread(dfd, d + 512, SIZE, 0, dev));
  errno = 0;
  show("no O_DIRECT", ompx_target_pread(fd, d, SIZE, 0, dev));
  errno = 0;
  show("host memory", ompx_target_pread(dfd, hm, SIZE, 0, dev));

  errno = 0;
  n = ompx_target_pwrite(dfd, d, SIZE, SIZE, dev);
  show("aligned write", n);
  errno = 0;
  show("write at offset 4096 + 512",
       ompx_target_pwrite(dfd, d, SIZE, 4096 + 512, dev));

  ompx_io_request_t req = NULL;
  errno = 0;
  int rc = ompx_target_pread_async(dfd, d, SIZE, 100, dev, &req);
  printf("async offset 100: %d %s request %s\n", rc,
         rc && errno == ENOTSUP ? "ENOTSUP" : "", req ? "set" : "NULL");
  if (req)
    ompx_io_wait(req);

  ompx_io_get_stats(dev, &s1);
  for (int p = 0; p < 3; ++p)
    printf("%s: read %llu written %llu reads %llu writes %llu\n",
           ompx_io_path_name(p),
           (unsigned long long)(s1.bytes_read[p] - s0.bytes_read[p]),
           (unsigned long long)(s1.bytes_written[p] - s0.bytes_written[p]),
           (unsigned long long)(s1.reads[p] - s0.reads[p]),
           (unsigned long long)(s1.writes[p] - s0.writes[p]));
  printf("fallbacks: %llu\n", (unsigned long long)(s1.fallbacks - s0.fallbacks));

  llvm_omp_target_free_host(hm, dev);
  omp_target_free(d, dev);
  close(dfd);
  close(fd);
  free(h);
  OT_SUMMARY();
  return 0;
}

// CHECK: aligned read: 1048576
// CHECK-NEXT: PASS: data exact
// CHECK-NEXT: offset 512: -1 ENOTSUP
// CHECK-NEXT: size 1 MiB + 512: -1 ENOTSUP
// CHECK-NEXT: buffer + 512: -1 ENOTSUP
// CHECK-NEXT: no O_DIRECT: -1 ENOTSUP
// CHECK-NEXT: host memory: -1 ENOTSUP
// CHECK-NEXT: aligned write: 1048576
// CHECK-NEXT: write at offset 4096 + 512: -1 ENOTSUP
// CHECK-NEXT: async offset 100: -1 ENOTSUP request NULL
// CHECK-NEXT: direct: read 0 written 0 reads 0 writes 0
// CHECK-NEXT: fastpath: read 1048576 written 1048576 reads 1 writes 1
// CHECK-NEXT: staged: read 0 written 0 reads 0 writes 0
// CHECK-NEXT: fallbacks: 0
// CHECK-NEXT: failures: 0

// ENODEV: aligned read: 1048576
// ENODEV-NEXT: PASS: data exact
// ENODEV-NEXT: offset 512: -1 ENOTSUP
// ENODEV-NEXT: size 1 MiB + 512: -1 ENOTSUP
// ENODEV-NEXT: buffer + 512: -1 ENOTSUP
// ENODEV-NEXT: no O_DIRECT: -1 ENOTSUP
// ENODEV-NEXT: host memory: -1 ENOTSUP
// ENODEV-NEXT: aligned write: -1 ENOTSUP
// ENODEV-NEXT: write at offset 4096 + 512: -1 ENOTSUP
// ENODEV-NEXT: async offset 100: -1 ENOTSUP request NULL
// ENODEV-NEXT: direct: read 0 written 0 reads 0 writes 0
// ENODEV-NEXT: fastpath: read 0 written 0 reads 1 writes 0
// ENODEV-NEXT: staged: read 1048576 written 0 reads 0 writes 0
// ENODEV-NEXT: fallbacks: 1
// ENODEV-NEXT: failures: 0

// AIS present but unusable: with HSA_EMU_AIS=enodev every
// hsa_amd_ais_file_read/write fails with ENODEV, as KFD does when AIS is not
// initialised (a kernel without P2PDMA) or there is no peer-to-peer path
// between the storage device and the GPU. The first fastpath request falls
// back to the staged path and still succeeds with exact data;
// ompx_io_get_stats counts one fallback and last_fallback names the failing
// call and the error. The plugin remembers the storage device: the next
// request (a write) goes staged from the start, with that as the reason, and
// is no fallback. With 64 KiB chunks on four workers several chunks fail at
// once, and the request still falls back exactly once.
//
// HSA_EMU_AIS=eremoteio (the block layer refuses peer-to-peer pages) behaves
// the same. HSA_EMU_AIS=enotty models a kernel driver without the AIS ioctl
// (errno ENOTTY, status untouched): the fallback names it, and the plugin
// turns AIS off for the device, which the later request gives as the reason.
//
// REQUIRES: amdgcn-amd-amdhsa, hsa-emulation, ompx-io
// RUN: %libomptarget-compile-generic
// RUN: env HSA_EMU_AIS=enodev OMPX_IO_INFO=1 %libomptarget-run-generic %t.dat 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,NODEV
// RUN: env HSA_EMU_AIS=enodev OMPX_IO_INFO=1 OMPX_IO_CHUNK_SIZE=64K OMPX_IO_THREADS=4 \
// RUN:   %libomptarget-run-generic %t.dat 2>&1 | %fcheck-generic --check-prefixes=CHECK,NODEV
// RUN: env HSA_EMU_AIS=eremoteio OMPX_IO_INFO=1 %libomptarget-run-generic %t.dat 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,REMOTE
// RUN: env HSA_EMU_AIS=enotty OMPX_IO_INFO=1 OMPX_IO_CHUNK_SIZE=64K OMPX_IO_THREADS=4 \
// RUN:   %libomptarget-run-generic %t.dat 2>&1 | %fcheck-generic --check-prefixes=CHECK,NOTTY

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

#define MIB (1 << 20)
#define SIZE (2 * MIB)

static unsigned char pat(size_t o) {
  return (unsigned char)(o * 11 + (o >> 10) * 5 + 3);
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  setvbuf(stdout, NULL, _IONBF, 0);
  int dev = omp_get_default_device(), host = omp_get_initial_device();
  unsigned char *h = malloc(SIZE);
  for (size_t i = 0; i < SIZE; ++i)
    h[i] = pat(i);
  int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || pwrite(fd, h, SIZE, 0) != SIZE || fsync(fd))
    return 3;
  int dfd = open(argv[1], O_RDWR | O_DIRECT);
  if (dfd < 0) {
    printf("O_DIRECT: open of %s failed: %s (this test needs a filesystem "
           "with direct IO)\n",
           argv[1], strerror(errno));
    return 0;
  }
  printf("O_DIRECT: ok\n");

  unsigned mask = 0;
  ompx_io_paths(dev, &mask, NULL, 0);
  printf("paths: %#x\n", mask);

  char *d = omp_target_alloc(SIZE, dev);
  ompx_io_stats_t s0, s1, s2;
  ompx_io_get_stats(dev, &s0);

  ssize_t n = ompx_target_pread(dfd, d, SIZE, 0, dev);
  printf("read: %zd\n", n);
  memset(h, 0, SIZE);
  omp_target_memcpy(h, d, SIZE, 0, 0, host, dev);
  size_t bad = 0;
  for (size_t i = 0; i < SIZE; ++i)
    bad += h[i] != pat(i);
  OT_EXPECT(n == SIZE && bad == 0, "read data exact");

  ompx_io_get_stats(dev, &s1);
  printf("reads: fastpath %llu staged %llu\n",
         (unsigned long long)(s1.reads[1] - s0.reads[1]),
         (unsigned long long)(s1.reads[2] - s0.reads[2]));
  printf("bytes read: fastpath %llu staged %llu\n",
         (unsigned long long)(s1.bytes_read[1] - s0.bytes_read[1]),
         (unsigned long long)(s1.bytes_read[2] - s0.bytes_read[2]));
  printf("fallbacks: %llu\n", (unsigned long long)(s1.fallbacks - s0.fallbacks));
  printf("last_fallback: %s\n", s1.last_fallback);

  // The device now holds the pattern: write it at 2 MiB.
  n = ompx_target_pwrite(dfd, d, SIZE, SIZE, dev);
  printf("write: %zd\n", n);
  bad = pread(fd, h, SIZE, SIZE) != SIZE;
  for (size_t i = 0; i < SIZE; ++i)
    bad += h[i] != pat(i);
  OT_EXPECT(n == SIZE && bad == 0, "written data exact");

  ompx_io_get_stats(dev, &s2);
  printf("writes: fastpath %llu staged %llu\n",
         (unsigned long long)(s2.writes[1] - s1.writes[1]),
         (unsigned long long)(s2.writes[2] - s1.writes[2]));
  printf("bytes written: fastpath %llu staged %llu\n",
         (unsigned long long)(s2.bytes_written[1] - s1.bytes_written[1]),
         (unsigned long long)(s2.bytes_written[2] - s1.bytes_written[2]));
  printf("fallbacks: %llu\n", (unsigned long long)(s2.fallbacks - s0.fallbacks));

  omp_target_free(d, dev);
  close(dfd);
  close(fd);
  free(h);
  OT_SUMMARY();
  return 0;
}

// CHECK: O_DIRECT: ok
// CHECK-NEXT: paths: 0x6
// CHECK-NEXT: offload-io(amdgpu)[{{[0-9]+}}] device 0: read 2097152 bytes, fd {{[0-9]+}} offset 0, {{.*}}: fastpath path (vendor storage DMA accepts the file and buffer)
// NODEV-NEXT: offload-io(amdgpu)[{{[0-9]+}}] device 0: fastpath failed ([[CALL:hsa_amd_ais_file_read\(fd [0-9]+, [0-9]+ bytes, offset [0-9]+\) on device 0]]: No such device); retried on the staged path
// REMOTE-NEXT: offload-io(amdgpu)[{{[0-9]+}}] device 0: fastpath failed ([[CALL:hsa_amd_ais_file_read\(fd [0-9]+, [0-9]+ bytes, offset [0-9]+\) on device 0]]: Remote I/O error); retried on the staged path
// NOTTY-NEXT: offload-io(amdgpu)[{{[0-9]+}}] device 0: fastpath failed ([[CALL:hsa_amd_ais_file_read\(fd [0-9]+, [0-9]+ bytes, offset [0-9]+\) on device 0]]: ENOTTY: Operation not supported); retried on the staged path
// CHECK-NOT: fastpath failed
// CHECK: read: 2097152
// CHECK-NEXT: PASS: read data exact
// CHECK-NEXT: reads: fastpath 1 staged 0
// CHECK-NEXT: bytes read: fastpath 0 staged 2097152
// CHECK-NEXT: fallbacks: 1
// NODEV-NEXT: last_fallback: fastpath failed ([[CALL]]: No such device); retried on the staged path
// REMOTE-NEXT: last_fallback: fastpath failed ([[CALL]]: Remote I/O error); retried on the staged path
// NOTTY-NEXT: last_fallback: fastpath failed ([[CALL]]: ENOTTY: Operation not supported); retried on the staged path
// NODEV-NEXT: offload-io(amdgpu)[{{[0-9]+}}] device 0: write 2097152 bytes, fd {{[0-9]+}} offset 2097152, {{.*}}: staged path (fastpath: AIS failed with ENODEV for storage device {{[0-9]+}}:{{[0-9]+}} before; direct: device memory is not addressable by the host)
// REMOTE-NEXT: offload-io(amdgpu)[{{[0-9]+}}] device 0: write 2097152 bytes, fd {{[0-9]+}} offset 2097152, {{.*}}: staged path (fastpath: AIS failed with EREMOTEIO for storage device {{[0-9]+}}:{{[0-9]+}} before; direct: device memory is not addressable by the host)
// NOTTY-NEXT: offload-io(amdgpu)[{{[0-9]+}}] device 0: write 2097152 bytes, fd {{[0-9]+}} offset 2097152, {{.*}}: staged path (fastpath: the amdgpu kernel driver has no AIS ioctl (ENOTTY; hipFile asks for amdgpu-dkms 30.20.1 or later); direct: device memory is not addressable by the host)
// CHECK-NEXT: write: 2097152
// CHECK-NEXT: PASS: written data exact
// CHECK-NEXT: writes: fastpath 0 staged 1
// CHECK-NEXT: bytes written: fastpath 0 staged 2097152
// CHECK-NEXT: fallbacks: 1
// CHECK-NEXT: failures: 0

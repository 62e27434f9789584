// A runtime without AIS (HSA_EMU_AIS=off, the emulation's default, like the
// ROCm 5.2 runtime: dlsym finds no hsa_amd_ais_file_read/write). The amdgpu
// plugin then has no fastpath: ompx_io_paths reports only the staged path
// and says why the others are missing, an O_DIRECT, aligned read into device
// memory is staged (and exact), OMPX_IO_PATH=fastpath fails with ENOTSUP,
// and print_device_info (llvm-omp-device-info) names the missing call. An
// unknown HSA_EMU_AIS value is reported and means off. With HSA_EMU_AIS=on
// the fastpath is listed and described.
//
// REQUIRES: amdgcn-amd-amdhsa, hsa-emulation, ompx-io
// RUN: %libomptarget-compile-generic
// RUN: env -u HSA_EMU_AIS OMPX_IO_INFO=1 %libomptarget-run-generic %t.dat 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,OFF
// RUN: env HSA_EMU_AIS=off OMPX_IO_INFO=1 %libomptarget-run-generic %t.dat 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,OFF
// RUN: env HSA_EMU_AIS=maybe OMPX_IO_INFO=1 %libomptarget-run-generic %t.dat 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,OFF,BAD
// RUN: env HSA_EMU_AIS=off OMPX_IO_PATH=fastpath %libomptarget-run-generic %t.dat 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=FORCED
// RUN: env HSA_EMU_AIS=on OMPX_IO_INFO=1 %libomptarget-run-generic %t.dat 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,ON
// RUN: env HSA_EMU_AIS=off HSA_EMU_NUM_GPUS=1 %llvm-tools-dir/llvm-omp-device-info \
// RUN:   | %fcheck-generic --check-prefixes=INFO-OFF
// RUN: env HSA_EMU_AIS=on HSA_EMU_NUM_GPUS=1 %llvm-tools-dir/llvm-omp-device-info \
// RUN:   | %fcheck-generic --check-prefixes=INFO-ON

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

#define SIZE (1 << 20)

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  setvbuf(stdout, NULL, _IONBF, 0);
  int dev = omp_get_default_device(), host = omp_get_initial_device();
  unsigned char *h = malloc(SIZE);
  for (size_t i = 0; i < SIZE; ++i)
    h[i] = (unsigned char)(i * 3 + 1);
  int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || pwrite(fd, h, SIZE, 0) != SIZE || fsync(fd))
    return 3;
  int dfd = open(argv[1], O_RDONLY | O_DIRECT);
  if (dfd < 0) {
    printf("O_DIRECT: open of %s failed: %s (this test needs a filesystem "
           "with direct IO)\n",
           argv[1], strerror(errno));
    return 0;
  }

  unsigned mask = 0;
  char why[512] = "";
  int rc = ompx_io_paths(dev, &mask, why, sizeof why);
  printf("paths: rc %d mask %#x\n%s", rc, mask, why);

  char *d = omp_target_alloc(SIZE, dev);
  ompx_io_stats_t s0, s1;
  ompx_io_get_stats(dev, &s0);
  errno = 0;
  ssize_t n = ompx_target_pread(dfd, d, SIZE, 0, dev);
  printf("read: %zd %s\n", n, n < 0 && errno == ENOTSUP ? "ENOTSUP" : "");
  if (n == SIZE) {
    memset(h, 0, SIZE);
    omp_target_memcpy(h, d, SIZE, 0, 0, host, dev);
    size_t bad = 0;
    for (size_t i = 0; i < SIZE; ++i)
      bad += h[i] != (unsigned char)(i * 3 + 1);
    OT_EXPECT(bad == 0, "data exact");
  }
  ompx_io_get_stats(dev, &s1);
  printf("bytes read: fastpath %llu staged %llu fallbacks %llu\n",
         (unsigned long long)(s1.bytes_read[1] - s0.bytes_read[1]),
         (unsigned long long)(s1.bytes_read[2] - s0.bytes_read[2]),
         (unsigned long long)(s1.fallbacks - s0.fallbacks));

  omp_target_free(d, dev);
  close(dfd);
  close(fd);
  free(h);
  OT_SUMMARY();
  return 0;
}

// BAD: hsa-emu: ignoring HSA_EMU_AIS='maybe': expected off, on, enodev, eremoteio or enotty
// OFF: paths: rc 0 mask 0x4
// OFF-NEXT: direct: device memory is not addressable by the host
// OFF-NEXT: fastpath: the amdgpu plugin has no vendor storage DMA
// OFF-NEXT: offload-io(amdgpu)[{{[0-9]+}}] device 0: read 1048576 bytes, fd {{[0-9]+}} offset 0, {{.*}}: staged path (fastpath: the amdgpu plugin has no vendor storage DMA; direct: device memory is not addressable by the host)
// OFF-NEXT: read: 1048576
// OFF-NEXT: PASS: data exact
// OFF-NEXT: bytes read: fastpath 0 staged 1048576 fallbacks 0
// ON: paths: rc 0 mask 0x6
// ON-NEXT: direct: device memory is not addressable by the host
// ON-NEXT: offload-io(amdgpu)[{{[0-9]+}}] device 0: read 1048576 bytes, fd {{[0-9]+}} offset 0, {{.*}}: fastpath path (vendor storage DMA accepts the file and buffer)
// ON-NEXT: read: 1048576
// ON-NEXT: PASS: data exact
// ON-NEXT: bytes read: fastpath 1048576 staged 0 fallbacks 0
// CHECK-NEXT: failures: 0

// FORCED: paths: rc 0 mask 0x4
// FORCED: read: -1 ENOTSUP
// FORCED-NEXT: bytes read: fastpath 0 staged 0 fallbacks 0
// FORCED-NEXT: failures: 0

// INFO-OFF: HSA runtime:{{.*}}libhsa-runtime64.so.1
// INFO-OFF: File fastpath (AIS): unavailable: hsa_amd_ais_file_read is not in this HSA runtime ({{.*}}libhsa-runtime64.so.1; ROCm >= 7 needed)
// INFO-ON: HSA runtime:{{.*}}libhsa-runtime64.so.1
// INFO-ON: File fastpath (AIS): hsa_amd_ais_file_read/write (O_DIRECT files, 4 KiB aligned, device memory)

// The file engine's AIS fastpath (hsa_amd_ais_file_read/write) on the HSA
// emulation with HSA_EMU_AIS=on. A file opened with O_DIRECT and 4 KiB
// aligned requests into omp_target_alloc memory go by the fastpath: the
// OMPX_IO_INFO line names it, ompx_io_get_stats counts the bytes on path 1,
// and the data read back with omp_target_memcpy (or from the file) is exact.
// A read that runs past end of file returns the bytes up to it (whole pages
// by AIS, the partial last page bounced). Requests the fastpath refuses take
// the staged path, and the info line says why: a misaligned device buffer,
// a descriptor without O_DIRECT, host memory. No fallback happens. The
// second run splits requests into 64 KiB chunks served by four workers.
//
// The file lives next to %t, under the build tree: O_DIRECT needs a
// filesystem with direct IO (tmpfs before Linux 6.6 refuses it with
// EINVAL; the program then says so and the checks fail).
//
// REQUIRES: amdgcn-amd-amdhsa, hsa-emulation, ompx-io
// RUN: %libomptarget-compile-generic
// RUN: env HSA_EMU_AIS=on OMPX_IO_INFO=1 %libomptarget-run-generic %t.dat 2>&1 \
// RUN:   | %fcheck-generic
// RUN: env HSA_EMU_AIS=on OMPX_IO_INFO=1 OMPX_IO_CHUNK_SIZE=64K OMPX_IO_THREADS=4 \
// RUN:   %libomptarget-run-generic %t.dat 2>&1 | %fcheck-generic

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

#define MIB (1 << 20)
// Not a whole number of pages: the last page is partial.
#define FILE_SIZE (2 * MIB + 3 * 4096 + 100)
#define BUF_SIZE (4 * MIB)

static unsigned char pat(size_t o) {
  return (unsigned char)(o * 13 + (o >> 9) * 7 + (o >> 17) * 3 + 5);
}

static ompx_io_stats_t s0;
static int dev;

static void delta(const char *what) {
  ompx_io_stats_t s;
  ompx_io_get_stats(dev, &s);
  printf("%s:", what);
  for (int p = 0; p < OMPX_IO_NUM_PATHS; ++p)
    if (s.bytes_read[p] != s0.bytes_read[p] ||
        s.bytes_written[p] != s0.bytes_written[p])
      printf(" %s read %llu written %llu", ompx_io_path_name(p),
             (unsigned long long)(s.bytes_read[p] - s0.bytes_read[p]),
             (unsigned long long)(s.bytes_written[p] - s0.bytes_written[p]));
  printf(" fallbacks %llu\n", (unsigned long long)(s.fallbacks - s0.fallbacks));
  s0 = s;
}

/// Compare n device bytes at d with the file pattern from offset off.
static size_t bad_device(const char *d, size_t n, size_t off) {
  unsigned char *h = malloc(n ? n : 1);
  omp_target_memcpy(h, d, n, 0, 0, omp_get_initial_device(), dev);
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i)
    bad += h[i] != pat(off + i);
  free(h);
  return bad;
}

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  setvbuf(stdout, NULL, _IONBF, 0);
  dev = omp_get_default_device();
  const char *path = argv[1];

  unsigned char *h = malloc(BUF_SIZE);
  for (size_t i = 0; i < FILE_SIZE; ++i)
    h[i] = pat(i);
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || pwrite(fd, h, FILE_SIZE, 0) != FILE_SIZE || fsync(fd))
    return 3;
  int dfd = open(path, O_RDWR | O_DIRECT);
  if (dfd < 0) {
    printf("O_DIRECT: open of %s failed: %s (this test needs a filesystem "
           "with direct IO)\n",
           path, strerror(errno));
    return 0;
  }
  printf("O_DIRECT: ok\n");

  unsigned mask = 0;
  char why[512] = "";
  ompx_io_paths(dev, &mask, why, sizeof why);
  printf("paths: %#x\nwhy: %s", mask, why);

  char *d = omp_target_alloc(BUF_SIZE, dev);
  OT_EXPECT(((uintptr_t)d & 4095) == 0, "omp_target_alloc memory is page aligned");
  ompx_io_get_stats(dev, &s0);

  // Whole pages, inside the file.
  ssize_t n = ompx_target_pread(dfd, d, 2 * MIB, 0, dev);
  printf("read 2 MiB at 0: %zd\n", n);
  OT_EXPECT(n == 2 * MIB && bad_device(d, 2 * MIB, 0) == 0, "data exact");
  delta("aligned read");

  // 4 KiB-aligned request running past end of file: short, exact.
  size_t want = 2 * MIB;
  n = ompx_target_pread(dfd, d, want, MIB, dev);
  printf("read 2 MiB at 1 MiB: %zd\n", n);
  OT_EXPECT(n == FILE_SIZE - MIB && bad_device(d, (size_t)n, MIB) == 0,
            "read up to end of file, data exact");
  delta("read past end of file");

  // At end of file: nothing.
  n = ompx_target_pread(dfd, d, 4096, 4 * MIB, dev);
  printf("read at 4 MiB: %zd\n", n);

  // Misaligned device buffer: staged.
  n = ompx_target_pread(dfd, d + 512, MIB, 4096, dev);
  printf("read into buffer + 512: %zd\n", n);
  OT_EXPECT(n == MIB && bad_device(d + 512, MIB, 4096) == 0, "data exact");
  delta("misaligned buffer");

  // No O_DIRECT: staged.
  n = ompx_target_pread(fd, d, MIB, 0, dev);
  printf("read without O_DIRECT: %zd\n", n);
  OT_EXPECT(n == MIB && bad_device(d, MIB, 0) == 0, "data exact");
  delta("buffered descriptor");

  // Host memory the device can reach: the direct path.
  char *hm = llvm_omp_target_alloc_host(MIB, dev);
  n = ompx_target_pread(dfd, hm, MIB, 0, dev);
  size_t bad = 0;
  for (size_t i = 0; i < MIB; ++i)
    bad += (unsigned char)hm[i] != pat(i);
  printf("read into host memory: %zd\n", n);
  OT_EXPECT(n == MIB && bad == 0, "data exact");
  llvm_omp_target_free_host(hm, dev);
  delta("host memory");

  // Writes: device memory holding the pattern of [0, 2 MiB) goes to 3 MiB.
  omp_target_memcpy(d, h, 2 * MIB, 0, 0, dev, omp_get_initial_device());
  n = ompx_target_pwrite(dfd, d, 2 * MIB, 3 * MIB, dev);
  printf("write 2 MiB at 3 MiB: %zd\n", n);
  memset(h, 0, BUF_SIZE);
  bad = pread(fd, h, 2 * MIB, 3 * MIB) != 2 * MIB;
  for (size_t i = 0; i < 2 * MIB; ++i)
    bad += h[i] != pat(i);
  OT_EXPECT(n == 2 * MIB && bad == 0, "written data exact");
  delta("aligned write");

  // A misaligned device buffer is written through staging.
  n = ompx_target_pwrite(dfd, d + 512, MIB, 5 * MIB, dev);
  printf("write from buffer + 512: %zd\n", n);
  bad = pread(fd, h, MIB, 5 * MIB) != MIB;
  for (size_t i = 0; i < MIB; ++i)
    bad += h[i] != pat(512 + i);
  OT_EXPECT(n == MIB && bad == 0, "written data exact");
  delta("misaligned write");

  // Asynchronous: the same choice.
  ompx_io_request_t req = NULL;
  int rc = ompx_target_pread_async(dfd, d, MIB, 3 * MIB, dev, &req);
  n = rc ? -1 : ompx_io_wait(req);
  printf("async read: %zd\n", n);
  OT_EXPECT(n == MIB && bad_device(d, MIB, 0) == 0, "data exact");
  delta("async read");

  omp_target_free(d, dev);
  close(dfd);
  close(fd);
  free(h);
  OT_SUMMARY();
  return 0;
}

// CHECK: O_DIRECT: ok
// CHECK-NEXT: paths: 0x6
// CHECK-NEXT: why: direct: device memory is not addressable by the host
// CHECK-NEXT: PASS: omp_target_alloc memory is page aligned
// CHECK-NEXT: offload-io(amdgpu)[{{[0-9]+}}] device 0: read 2097152 bytes, fd {{[0-9]+}} offset 0, 0x{{[0-9a-f]+}}: fastpath path (vendor storage DMA accepts the file and buffer)
// CHECK-NEXT: read 2 MiB at 0: 2097152
// CHECK-NEXT: PASS: data exact
// CHECK-NEXT: aligned read: fastpath read 2097152 written 0 fallbacks 0
// CHECK-NEXT: offload-io(amdgpu)[{{[0-9]+}}] device 0: read 2097152 bytes, fd {{[0-9]+}} offset 1048576, {{.*}}: fastpath path
// CHECK-NEXT: read 2 MiB at 1 MiB: 1060964
// CHECK-NEXT: PASS: read up to end of file, data exact
// CHECK-NEXT: read past end of file: fastpath read 1060964 written 0 fallbacks 0
// CHECK-NEXT: offload-io(amdgpu)[{{[0-9]+}}] device 0: read 4096 bytes, fd {{[0-9]+}} offset 4194304, {{.*}}: fastpath path
// CHECK-NEXT: read at 4 MiB: 0
// CHECK-NEXT: offload-io(amdgpu)[{{[0-9]+}}] device 0: read 1048576 bytes, fd {{[0-9]+}} offset 4096, 0x{{[0-9a-f]+}}: staged path (fastpath: AIS needs 4096-byte alignment; not aligned: buffer 0x{{[0-9a-f]+}}200; direct: device memory is not addressable by the host)
// CHECK-NEXT: read into buffer + 512: 1048576
// CHECK-NEXT: PASS: data exact
// CHECK-NEXT: misaligned buffer: staged read 1048576 written 0 fallbacks 0
// CHECK-NEXT: offload-io(amdgpu)[{{[0-9]+}}] device 0: read 1048576 bytes, fd {{[0-9]+}} offset 0, {{.*}}: staged path (fastpath: fd {{[0-9]+}} is not open with O_DIRECT; direct: device memory is not addressable by the host)
// CHECK-NEXT: read without O_DIRECT: 1048576
// CHECK-NEXT: PASS: data exact
// CHECK-NEXT: buffered descriptor: staged read 1048576 written 0 fallbacks 0
// CHECK-NEXT: offload-io(amdgpu)[{{[0-9]+}}] device 0: read 1048576 bytes, fd {{[0-9]+}} offset 0, {{.*}}: direct path (the host can address the device buffer)
// CHECK-NEXT: read into host memory: 1048576
// CHECK-NEXT: PASS: data exact
// CHECK-NEXT: host memory: direct read 1048576 written 0 fallbacks 0
// CHECK-NEXT: offload-io(amdgpu)[{{[0-9]+}}] device 0: write 2097152 bytes, fd {{[0-9]+}} offset 3145728, {{.*}}: fastpath path (vendor storage DMA accepts the file and buffer)
// CHECK-NEXT: write 2 MiB at 3 MiB: 2097152
// CHECK-NEXT: PASS: written data exact
// CHECK-NEXT: aligned write: fastpath read 0 written 2097152 fallbacks 0
// CHECK-NEXT: offload-io(amdgpu)[{{[0-9]+}}] device 0: write 1048576 bytes, fd {{[0-9]+}} offset 5242880, {{.*}}: staged path (fastpath: AIS needs 4096-byte alignment; not aligned: buffer {{.*}})
// CHECK-NEXT: write from buffer + 512: 1048576
// CHECK-NEXT: PASS: written data exact
// CHECK-NEXT: misaligned write: staged read 0 written 1048576 fallbacks 0
// CHECK-NEXT: offload-io(amdgpu)[{{[0-9]+}}] device 0: read 1048576 bytes, fd {{[0-9]+}} offset 3145728, {{.*}}: fastpath path
// CHECK-NEXT: async read: 1048576
// CHECK-NEXT: PASS: data exact
// CHECK-NEXT: async read: fastpath read 1048576 written 0 fallbacks 0
// CHECK-NEXT: failures: 0

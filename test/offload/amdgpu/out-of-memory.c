// Device and pinned host memory running out, on the HSA emulation's
// enforced pool sizes (HSA_EMU_GPU_MEMORY, HSA_EMU_HOST_MEMORY). Device
// memory: omp_target_alloc beyond what is left returns NULL with one error
// line naming the HSA call, the size and the device. Pinned host memory,
// nearly all held by the program through llvm_omp_target_alloc_host: the
// bounce buffers of a staged omp_target_memcpy and the ring of a staged
// ompx_target_pread are refused at their first use, with an error and
// ENOMEM. Once the program frees what it held, the same calls succeed and
// move exact data.
//
// REQUIRES: amdgcn-amd-amdhsa, hsa-emulation, ompx-io
// RUN: %libomptarget-compile-generic
// RUN: env HSA_EMU_GPU_MEMORY=64M HSA_EMU_HOST_MEMORY=8M \
// RUN:   OFFLOADIO_STAGING_BUFFER_SIZE=1M OMPX_IO_PATH=staged \
// RUN:   OMPX_IO_CHUNK_SIZE=1M OMPX_IO_THREADS=1 OFFLOADIO_INFO=1 \
// RUN:   %libomptarget-run-generic %t.dat 2>&1 | %fcheck-generic

#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "offload_io_test.h"
#include "ompx_io.h"

extern void *llvm_omp_target_alloc_host(size_t size, int device_num);
extern void llvm_omp_target_free_host(void *ptr, int device_num);

int Anchor[4];
#pragma omp declare target(Anchor)

#define SIZE (512 << 10)

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  setvbuf(stdout, NULL, _IONBF, 0);
  int host = omp_get_initial_device();
  unsigned char *h = malloc(SIZE), *back = malloc(SIZE);
  for (int i = 0; i < SIZE; ++i)
    h[i] = (unsigned char)(i * 13 + 5);
  int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || pwrite(fd, h, SIZE, 0) != SIZE)
    return 3;

  // Device memory.
  printf("device memory\n");
  void *huge = omp_target_alloc(128 << 20, 0);
  OT_EXPECT(huge == NULL, "128 MiB of a 64 MiB device -> NULL");
  unsigned char *dbuf = omp_target_alloc(SIZE, 0);
  OT_EXPECT(dbuf != NULL, "a small allocation still works");

  // Pinned host memory: hold all but about 0.4 MiB of the pool, less than a
  // bounce buffer (1 MiB) or this transfer's ring chunk (its 0.5 MiB), but
  // room for what the plugin itself pins (kernel arguments, signals).
  void *held = NULL;
  for (size_t mb = 8; mb > 0 && !held; --mb)
    held = llvm_omp_target_alloc_host((mb << 20) - (384 << 10), 0);
  OT_EXPECT(held != NULL, "most pinned host memory held");
  printf("pinned memory held\n");
  int rc = omp_target_memcpy(dbuf, h, SIZE, 0, 0, 0, host);
  OT_EXPECT(rc != 0, "staged memcpy without bounce buffers fails");
  EXPECT_ERRNO(ompx_target_pread(fd, dbuf, SIZE, 0, 0), ENOMEM,
               "staged file read without a ring: ENOMEM");

  llvm_omp_target_free_host(held, 0);
  printf("pinned memory freed\n");
  rc = omp_target_memcpy(dbuf, h, SIZE, 0, 0, 0, host);
  rc |= omp_target_memcpy(back, dbuf, SIZE, 0, 0, host, 0);
  OT_EXPECT(rc == 0 && memcmp(h, back, SIZE) == 0, "staged memcpy exact");
  memset(back, 0, SIZE);
  omp_target_memcpy(dbuf, back, SIZE, 0, 0, 0, host);
  ssize_t n = ompx_target_pread(fd, dbuf, SIZE, 0, 0);
  omp_target_memcpy(back, dbuf, SIZE, 0, 0, host, 0);
  OT_EXPECT(n == SIZE && memcmp(h, back, SIZE) == 0, "staged file read exact");

  omp_target_free(dbuf, 0);
  free(h);
  free(back);
  close(fd);
  OT_SUMMARY();
  return 0;
}

// CHECK: device memory
// CHECK: offload-io(amdgpu)[{{[0-9]+}}] device 0: error: data_alloc: {{.*}}hsa_amd_memory_pool_allocate{{.*}}134217728 bytes of {{default|device}} memory on device 0
// CHECK: PASS: 128 MiB of a 64 MiB device -> NULL
// CHECK: PASS: a small allocation still works
// CHECK: PASS: most pinned host memory held
// CHECK: pinned memory held
// CHECK: offload-io(amdgpu)[{{[0-9]+}}] device 0: error: data_submit{{.*}}hsa_amd_memory_pool_allocate{{.*}}1048576 bytes of host memory on device 0
// CHECK: PASS: staged memcpy without bounce buffers fails
// CHECK: hsa_amd_memory_pool_allocate{{.*}}bytes of host memory on device 0
// CHECK: PASS: staged file read without a ring: ENOMEM
// CHECK: pinned memory freed
// CHECK: PASS: staged memcpy exact
// CHECK: PASS: staged file read exact
// CHECK-NOT: FAIL
// CHECK: failures: 0

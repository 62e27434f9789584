// Device and pinned host memory refused: the program defines aligned_alloc
// itself (exported with -rdynamic, so the host plugin's allocations reach it)
// and, while armed, refuses every allocation of at least 64 KiB. Then
// omp_target_alloc and llvm_omp_target_alloc_host return NULL, and a staged
// omp_target_memcpy from malloc'd memory (its bounce buffers refused) fails,
// each with one error line naming the size and the device; nothing else
// breaks, and once memory is back every one of them works and moves exact
// data. Run under LeakSanitizer where available.
//
// REQUIRES: host-plugin
// RUN: %libomptarget-compile-generic -rdynamic -ldl
// RUN: env OFFLOADIO_STAGING_BUFFER_SIZE=64K %libomptarget-run-generic 2>&1 \
// RUN:   | %fcheck-generic
// RUN: %if lsan %{ %lsan-env OFFLOADIO_STAGING_BUFFER_SIZE=64K %t 2>&1 \
// RUN:   | %fcheck-generic %}

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "offload_test.h"

extern void *llvm_omp_target_alloc_host(size_t size, int device_num);
extern void llvm_omp_target_free_host(void *ptr, int device_num);

static atomic_int armed;
static atomic_long refused;

void *aligned_alloc(size_t alignment, size_t size) {
  static void *(*real)(size_t, size_t);
  if (!real)
    real = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "aligned_alloc");
  if (atomic_load(&armed) && size >= (64 << 10)) {
    atomic_fetch_add(&refused, 1);
    errno = ENOMEM;
    return NULL;
  }
  return real(alignment, size);
}

#define SIZE (256 << 10)

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0);
  int dev = omp_get_default_device();
  int host = omp_get_initial_device();
  char *dbuf = omp_target_alloc(SIZE, dev);
  char *h = malloc(SIZE), *back = malloc(SIZE);
  for (int i = 0; i < SIZE; ++i)
    h[i] = (char)(i * 7 + 1);
  OT_EXPECT(dbuf != NULL, "device buffer allocated before the fault");

  atomic_store(&armed, 1);
  printf("armed\n");
  void *p = omp_target_alloc(1 << 20, dev);
  OT_EXPECT(p == NULL, "omp_target_alloc of 1 MiB -> NULL");
  void *ph = llvm_omp_target_alloc_host(1 << 20, dev);
  OT_EXPECT(ph == NULL, "llvm_omp_target_alloc_host of 1 MiB -> NULL");
  int rc = omp_target_memcpy(dbuf, h, SIZE, 0, 0, dev, host);
  OT_EXPECT(rc != 0, "staged omp_target_memcpy without bounce buffers fails");
  atomic_store(&armed, 0);
  printf("disarmed\n");
  OT_EXPECT(atomic_load(&refused) >= 3, "allocations were refused");

  p = omp_target_alloc(1 << 20, dev);
  ph = llvm_omp_target_alloc_host(1 << 20, dev);
  OT_EXPECT(p != NULL && ph != NULL, "both allocate once memory is back");
  rc = omp_target_memcpy(dbuf, h, SIZE, 0, 0, dev, host);
  rc |= omp_target_memcpy(back, dbuf, SIZE, 0, 0, host, dev);
  OT_EXPECT(rc == 0 && memcmp(h, back, SIZE) == 0,
            "staged copies both ways are exact");
  omp_target_free(p, dev);
  llvm_omp_target_free_host(ph, dev);
  omp_target_free(dbuf, dev);
  free(h);
  free(back);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: device buffer allocated before the fault
// CHECK: armed
// CHECK: offload-io(x86_64)[{{[0-9]+}}] device 0: error: data_alloc: aligned_alloc of 1048576 bytes of default memory on device 0 failed
// CHECK: PASS: omp_target_alloc of 1 MiB -> NULL
// CHECK: offload-io(x86_64)[{{[0-9]+}}] device 0: error: data_alloc: aligned_alloc of 1048576 bytes of host memory on device 0 failed
// CHECK: PASS: llvm_omp_target_alloc_host of 1 MiB -> NULL
// CHECK: offload-io(x86_64)[{{[0-9]+}}] device 0: error: data_submit{{.*}}: aligned_alloc of 65536 bytes of host memory on device 0 failed
// CHECK: PASS: staged omp_target_memcpy without bounce buffers fails
// CHECK: disarmed
// CHECK: PASS: allocations were refused
// CHECK: PASS: both allocate once memory is back
// CHECK: PASS: staged copies both ways are exact
// CHECK-NOT: FAIL
// CHECK-NOT: error
// CHECK: failures: 0

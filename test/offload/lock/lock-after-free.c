// A lock must be released before its memory is freed: the plugin cannot
// see free(). When a later lock lands inside a region still locked (here:
// the freed address handed out again), OFFLOADIO_INFO names that
// region, the hint that the program freed locked memory. The memory is
// unmapped and mapped again at the same address, as malloc reuses a freed
// block: malloc itself need not (the sanitizer runtimes' allocators hold
// freed blocks back). LIBOMPTARGET_INFO, the stock plugins' setting, prints
// none of it.
//
// libomptarget 18.1.8's llvm_omp_target_lock_mem never reaches the plugin
// (it returns NULL; unlock does nothing), so this test of locking through
// that API cannot run there.
// UNSUPPORTED: llvm-18
// RUN: %libomptarget-compile-generic
// RUN: env OFFLOADIO_INFO=1 %libomptarget-run-generic 2>&1 | %fcheck-generic
// RUN: env -u OFFLOADIO_INFO %libomptarget-run-generic 2>&1 \
// RUN:   | %fcheck-generic --check-prefix=QUIET
// RUN: env -u OFFLOADIO_INFO LIBOMPTARGET_INFO=1 %libomptarget-run-generic \
// RUN:   2>&1 | %fcheck-generic --check-prefix=QUIET

#include <omp.h>
#include <stdio.h>
#include <sys/mman.h>

#include "ompx_lock.h"

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0);
  int dev = omp_get_default_device();
  const size_t Page = 4096;
  char *p = mmap(NULL, Page, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return 2;
  if (!llvm_omp_target_lock_mem(p, 256, dev))
    return 2;
  printf("locked %p\n", (void *)p);
  munmap(p, Page); // The bug: the lock is still held.
  char *q = mmap(p, Page, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (q != p) {
    printf("not reused\n");
    return 3;
  }
  printf("relocking\n");
  if (!llvm_omp_target_lock_mem(q + 16, 100, dev))
    return 4;
  printf("done\n");
  llvm_omp_target_unlock_mem(q + 16, dev);
  llvm_omp_target_unlock_mem(p, dev);
  munmap(q, Page);
  return 0;
}

// CHECK: locked [[ADDR:0x[0-9a-f]+]]
// CHECK-NEXT: relocking
// CHECK-NEXT: offload-io({{.*}})[{{[0-9]+}}] device {{[0-9]+}}: the lock of [{{.*}}) (100 bytes) lands inside the locked region [[[ADDR]], {{.*}}) (256 bytes, 1 references){{.*}}unlocked before it is freed
// CHECK-NEXT: done

// QUIET-NOT: lands inside
// QUIET: done

// llvm_omp_target_lock_mem on memory that is not mapped, readable and
// writable is refused, as a GPU driver refuses to pin it: the host plugin
// checks the range against the process's mappings, and the error line says
// which part of the range is wrong and why.
//
// libomptarget 18.1.8's llvm_omp_target_lock_mem never reaches the plugin
// (it returns NULL; unlock does nothing), so this test of locking through
// that API cannot run there.
// UNSUPPORTED: llvm-18
// REQUIRES: host-plugin
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic 2>%t.err | %fcheck-generic
// RUN: FileCheck --check-prefix=ERR %s < %t.err

#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>
#include "offload_test.h"

#include "ompx_lock.h"

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0);
  int dev = omp_get_default_device();
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  char *m = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED)
    return 2;
  // Page 1: PROT_NONE, page 2: read-only. Unmapped memory is the second
  // page of the address space, which Linux never maps (vm.mmap_min_addr): a
  // hole made with munmap could be mapped again by anything in the process
  // (the sanitizer runtimes' allocators, thread stacks) before the lock.
  if (mprotect(m + page, page, PROT_NONE) ||
      mprotect(m + 2 * page, page, PROT_READ))
    return 3;
  char *unmapped = (char *)(uintptr_t)page;

  fprintf(stderr, "case prot_none\n");
  OT_EXPECT(llvm_omp_target_lock_mem(m + page + 8, 64, dev) == NULL,
            "PROT_NONE memory refused");
  fprintf(stderr, "case read_only\n");
  OT_EXPECT(llvm_omp_target_lock_mem(m + 2 * page, page, dev) == NULL,
            "read-only memory refused");
  fprintf(stderr, "case unmapped\n");
  OT_EXPECT(llvm_omp_target_lock_mem(unmapped, 16, dev) == NULL,
            "unmapped memory refused");
  fprintf(stderr, "case straddling\n");
  OT_EXPECT(llvm_omp_target_lock_mem(m + page - 8, 16, dev) == NULL,
            "a range running into PROT_NONE memory refused");
  fprintf(stderr, "case valid\n");
  char *ok = llvm_omp_target_lock_mem(m, page, dev);
  OT_EXPECT(ok == m, "read-write memory locks");
  llvm_omp_target_unlock_mem(m, dev);
  munmap(m, 4 * page);
  OT_SUMMARY();
  return 0;
}

// CHECK-NOT: FAIL
// CHECK: PASS: PROT_NONE memory refused
// CHECK: PASS: read-only memory refused
// CHECK: PASS: unmapped memory refused
// CHECK: PASS: a range running into PROT_NONE memory refused
// CHECK: PASS: read-write memory locks
// CHECK: failures: 0

// ERR-LABEL: case prot_none
// ERR-NEXT: data_lock: cannot lock [{{.*}}) (64 bytes): {{.*}}is mapped without read and write access (---p)
// ERR-LABEL: case read_only
// ERR-NEXT: data_lock: cannot lock [{{.*}}): {{.*}}is mapped without write access (r--p)
// ERR-LABEL: case unmapped
// ERR-NEXT: data_lock: cannot lock [{{.*}}) (16 bytes): {{.*}}is not mapped
// ERR-LABEL: case straddling
// ERR-NEXT: data_lock: cannot lock [{{.*}}) (16 bytes): {{.*}}is mapped without read and write access (---p)
// ERR-LABEL: case valid
// ERR-NOT: data_lock

// 16 threads lock, copy through and unlock private buffers while sharing
// sub-buffers of one locked region; every byte is checked.
//
// libomptarget 18.1.8's llvm_omp_target_lock_mem never reaches the plugin
// (it returns NULL; unlock does nothing), so this test of locking through
// that API cannot run there.
// UNSUPPORTED: llvm-18
// RUN: %libomptarget-compile-run-and-check-generic

#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include "offload_test.h"

#include "ompx_lock.h"

int main(void) {
  int dev = omp_get_default_device(), host = omp_get_initial_device();
  enum { Threads = 16, Iters = 300, Bytes = 4096 };
  char *shared = malloc(Threads * Bytes);
  char *sharedBase = llvm_omp_target_lock_mem(shared, Threads * Bytes, dev);
  int errors = 0;
#pragma omp parallel num_threads(Threads) reduction(+ : errors)
  {
    int t = omp_get_thread_num();
    char *mine = malloc(Bytes), *back = malloc(Bytes);
    char *d = omp_target_alloc(Bytes, dev);
    for (int it = 0; it < Iters; ++it) {
      memset(mine, (t * 31 + it) & 0xff, Bytes);
      if (!llvm_omp_target_lock_mem(mine, Bytes, dev))
        ++errors;
      char *sub = llvm_omp_target_lock_mem(shared + t * Bytes + it % 64, 64, dev);
      if (sub != sharedBase + t * Bytes + it % 64)
        ++errors;
      omp_target_memcpy(d, mine, Bytes, 0, 0, dev, host);
      omp_target_memcpy(back, d, Bytes, 0, 0, host, dev);
      if (memcmp(back, mine, Bytes))
        ++errors;
      llvm_omp_target_unlock_mem(shared + t * Bytes + it % 64, dev);
      llvm_omp_target_unlock_mem(mine, dev);
    }
    omp_target_free(d, dev);
    free(mine);
    free(back);
  }
  OT_EXPECT(errors == 0, "16 threads: locks, sub-locks and copies all right");
  llvm_omp_target_unlock_mem(shared, dev);
  free(shared);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: 16 threads: locks, sub-locks and copies all right
// CHECK: failures: 0

// llvm_omp_target_lock_mem / llvm_omp_target_unlock_mem on the amdgpu
// plugin.  The locked pointer is the agent (device-accessible) address HSA
// returns, which differs from the host address (the HSA emulation always
// returns a distinct, CPU-inaccessible alias; ROCr does on discrete GPUs).
// Copies from and to locked memory are exact; a contained sub-range shares
// the lock at base + offset; identical locks are counted; memory the runtime
// already made device-accessible (llvm_omp_target_alloc_host) is returned as
// it is, and so is host memory another runtime locked through HSA directly
// (which our unlock must leave locked).  The HSA emulation aborts on DMA of
// anything but agent-accessible addresses (HSA_EMU_STRICT, its default), so
// copies of locked memory must use the agent address; the second run stages
// every copy of unlocked memory.
//
// REQUIRES: amdgcn-amd-amdhsa
// libomptarget 18.1.8 never passes llvm_omp_target_lock_mem on to a plugin
// (it tests the entry point the wrong way round and answers NULL), so
// neither plugin can lock through it there.
// UNSUPPORTED: llvm-18
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic | %fcheck-generic
// RUN: env OFFLOADIO_PAGEABLE_PATH=staged %libomptarget-run-generic | %fcheck-generic
//
// LLVM 16's own amdgpu plugin (test/hsa-emu/README.md, "The stock plugin on
// the emulation"): it translates only the first byte of a copy into a
// locked range, so the copy straddling the end of the locked range runs
// off the agent mapping, a GPU memory fault, on which its event handler
// aborts. Without that copy, it differs from ours in two places: it passes
// device memory to hsa_amd_memory_lock, which refuses it, and it locks a
// range inside another runtime's lock anew instead of reusing that lock.
// RUN: %not --crash %run-stock-generic 2>&1 | %fcheck-generic --check-prefix=STOCK-FAULT
// RUN: env SKIP_STRADDLE=1 %not %run-stock-generic 2>/dev/null | %fcheck-generic --check-prefix=STOCK

#include <dlfcn.h>
#include <omp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "offload_test.h"

#include "ompx_lock.h"
extern void *llvm_omp_target_alloc_host(size_t size, int device_num);
extern void llvm_omp_target_free_host(void *ptr, int device_num);

int Anchor[4];
#pragma omp declare target(Anchor)

int main(void) {
  int dev = 0, host = omp_get_initial_device();
  OT_EXPECT(omp_get_num_devices() > 0, "devices");

  // An odd-sized buffer at an odd address, so page rounding would show.
  size_t n = (2 << 20) + 123;
  char *raw = malloc(n + 16);
  char *buf = raw + 5;
  for (size_t i = 0; i < n; ++i)
    buf[i] = (char)(i * 7);

  char *locked = llvm_omp_target_lock_mem(buf, n, dev);
  OT_EXPECT(locked != NULL, "lock returns a pointer");
  OT_EXPECT(locked != buf, "the agent address differs from the host address");
  OT_EXPECT(((uintptr_t)locked & 4095) == ((uintptr_t)buf & 4095),
            "the agent address keeps the page offset");

  // The same range again: one more reference, same address.
  char *again = llvm_omp_target_lock_mem(buf, n, dev);
  OT_EXPECT(again == locked, "locking the same range again shares the lock");
  // A contained sub-range: base + offset.
  char *sub = llvm_omp_target_lock_mem(buf + 1000, 5000, dev);
  OT_EXPECT(sub == locked + 1000, "a contained range is base + offset");

  // Copies from and to locked memory (named by its host address).
  char *d = omp_target_alloc(n, dev);
  int rc = omp_target_memcpy(d, buf, n, 0, 0, dev, host);
  memset(buf, 0, n);
  rc |= omp_target_memcpy(buf, d, n, 0, 0, host, dev);
  int ok = rc == 0;
  for (size_t i = 0; i < n; ++i)
    ok &= buf[i] == (char)(i * 7);
  OT_EXPECT(ok, "%zu bytes round trip through locked memory", n);
  // A copy that starts in locked memory and runs past its end (skipped
  // with SKIP_STRADDLE set, for the stock plugin's run of everything else).
  if (!getenv("SKIP_STRADDLE")) {
    fflush(stdout);
    rc = omp_target_memcpy(d, buf + n - 100, 116, 0, 0, dev, host);
    char tail[116];
    rc |= omp_target_memcpy(tail, d, 116, 0, 0, host, dev);
    OT_EXPECT(rc == 0 && memcmp(tail, buf + n - 100, 116) == 0,
              "a copy straddling the end of the locked range");
  }

  llvm_omp_target_unlock_mem(buf + 1000, dev);
  llvm_omp_target_unlock_mem(buf, dev);
  llvm_omp_target_unlock_mem(buf, dev);

  // Locked again after the last unlock: a fresh lock works.
  char *relocked = llvm_omp_target_lock_mem(buf, 4096, dev);
  OT_EXPECT(relocked != NULL && relocked != buf, "lock after unlock");
  llvm_omp_target_unlock_mem(buf, dev);

  // Runtime-allocated pinned memory is already device-accessible.
  char *h = llvm_omp_target_alloc_host(8192, dev);
  char *hl = llvm_omp_target_lock_mem(h + 64, 1024, dev);
  OT_EXPECT(hl == h + 64, "host-kind memory is returned as it is");
  llvm_omp_target_unlock_mem(h + 64, dev);
  llvm_omp_target_free_host(h, dev);

  // Device memory is already device-accessible.
  char *dl = llvm_omp_target_lock_mem(d + 16, 64, dev);
  OT_EXPECT(dl == d + 16, "device memory is returned as it is");
  llvm_omp_target_unlock_mem(d + 16, dev);

  // Memory another runtime locked through HSA: the plugin uses that lock.
  typedef int (*LockFn)(void *, size_t, void *, int, void **);
  typedef int (*UnlockFn)(void *);
  void *hsa = dlopen("libhsa-runtime64.so.1", RTLD_NOW | RTLD_NOLOAD);
  LockFn hsa_lock = hsa ? (LockFn)dlsym(hsa, "hsa_amd_memory_lock") : NULL;
  UnlockFn hsa_unlock =
      hsa ? (UnlockFn)dlsym(hsa, "hsa_amd_memory_unlock") : NULL;
  void *ext_agent = NULL;
  int st = hsa_lock ? hsa_lock(buf, 65536, NULL, 0, &ext_agent) : -1;
  OT_EXPECT(st == 0 && ext_agent != NULL, "another runtime locks memory");
  char *ours = llvm_omp_target_lock_mem(buf + 100, 200, dev);
  OT_EXPECT(ours == (char *)ext_agent + 100,
            "the plugin reuses the external lock (agent base + offset)");
  llvm_omp_target_unlock_mem(buf + 100, dev);
  OT_EXPECT(hsa_unlock && hsa_unlock(buf) == 0,
            "the external lock survives our unlock");

  omp_target_free(d, dev);
  free(raw);
  OT_SUMMARY();
  return ot_failures != 0;
}

// CHECK: PASS: devices
// CHECK: PASS: lock returns a pointer
// CHECK: PASS: the agent address differs from the host address
// CHECK: PASS: the agent address keeps the page offset
// CHECK: PASS: locking the same range again shares the lock
// CHECK: PASS: a contained range is base + offset
// CHECK: PASS: 2097275 bytes round trip through locked memory
// CHECK: PASS: a copy straddling the end of the locked range
// CHECK: PASS: lock after unlock
// CHECK: PASS: host-kind memory is returned as it is
// CHECK: PASS: device memory is returned as it is
// CHECK: PASS: another runtime locks memory
// CHECK: PASS: the plugin reuses the external lock (agent base + offset)
// CHECK: PASS: the external lock survives our unlock
// CHECK-NOT: FAIL
// CHECK: failures: 0

// STOCK-FAULT: PASS: 2097275 bytes round trip through locked memory
// STOCK-FAULT: hsa-emu: GPU memory fault at {{.*}}: hsa_amd_memory_async_copy: copy of 116 bytes from {{.*}}: source 116 bytes at agent address {{.*}} run past the end of the 2097275-byte locked region
// STOCK-FAULT: AMDGPU fatal error 1:Found HSA_AMD_GPU_MEMORY_FAULT_EVENT in agent {{[0-9]+}} at virtual address {{.*}} and reasons: HSA_AMD_MEMORY_FAULT_PAGE_NOT_PRESENT

// STOCK: PASS: devices
// STOCK: PASS: lock returns a pointer
// STOCK: PASS: the agent address differs from the host address
// STOCK: PASS: the agent address keeps the page offset
// STOCK: PASS: locking the same range again shares the lock
// STOCK: PASS: a contained range is base + offset
// STOCK: PASS: 2097275 bytes round trip through locked memory
// STOCK-NOT: straddling
// STOCK: PASS: lock after unlock
// STOCK: PASS: host-kind memory is returned as it is
// STOCK: FAIL: device memory is returned as it is
// STOCK: PASS: another runtime locks memory
// STOCK: FAIL: the plugin reuses the external lock (agent base + offset)
// STOCK: PASS: the external lock survives our unlock
// STOCK: failures: 2

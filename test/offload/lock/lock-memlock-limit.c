// The host plugin's lock pins its pages with mlock(2), so RLIMIT_MEMLOCK
// applies as it would to a GPU driver pinning them: a lock beyond the limit
// fails (and says why), one within it succeeds and shows in VmLck, and the
// last unlock releases the pages. Regions that share pages keep them locked
// until the last of them is unlocked.
//
// libomptarget 18.1.8's llvm_omp_target_lock_mem never reaches the plugin
// (it returns NULL; unlock does nothing), so this test of locking through
// that API cannot run there.
// UNSUPPORTED: llvm-18
// REQUIRES: host-plugin
// The sanitizer runtimes (preloaded into the test programs of sanitizer
// builds) replace mlock with a function that locks nothing and never fails.
// UNSUPPORTED: address-sanitizer, thread-sanitizer
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic 2>%t.err | %fcheck-generic
// RUN: FileCheck --check-prefix=ERR %s < %t.err

#include <linux/capability.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "offload_test.h"

#include "ompx_lock.h"

/// Locked memory of this process in KiB (VmLck of /proc/self/status).
static long lockedKiB(void) {
  FILE *F = fopen("/proc/self/status", "r");
  char Line[256];
  long K = -1;
  while (F && fgets(Line, sizeof Line, F))
    if (sscanf(Line, "VmLck: %ld kB", &K) == 1)
      break;
  if (F)
    fclose(F);
  return K;
}

/// Root (CAP_IPC_LOCK) may lock past RLIMIT_MEMLOCK: drop the capability
/// from the effective set so that the limit applies as to any user.
static int dropIpcLock(void) {
  struct __user_cap_header_struct Hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct Data[2];
  if (syscall(SYS_capget, &Hdr, Data))
    return -1;
  Data[CAP_TO_INDEX(CAP_IPC_LOCK)].effective &= ~CAP_TO_MASK(CAP_IPC_LOCK);
  return (int)syscall(SYS_capset, &Hdr, Data);
}

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0);
  int dev = omp_get_default_device();
  long page = sysconf(_SC_PAGESIZE);
  struct rlimit Limit = {1 << 20, 1 << 20};
  if (dropIpcLock() || setrlimit(RLIMIT_MEMLOCK, &Limit))
    return 2;
  long Before = lockedKiB();

  char *big = aligned_alloc(page, 4 << 20);
  memset(big, 1, 4 << 20);
  fprintf(stderr, "case beyond\n");
  OT_EXPECT(llvm_omp_target_lock_mem(big, 4 << 20, dev) == NULL,
            "a lock beyond RLIMIT_MEMLOCK fails");
  OT_EXPECT(lockedKiB() == Before, "nothing stays locked after the failure");

  fprintf(stderr, "case within\n");
  char *a = llvm_omp_target_lock_mem(big, 256 << 10, dev);
  OT_EXPECT(a == big, "a lock within RLIMIT_MEMLOCK succeeds");
  OT_EXPECT(lockedKiB() == Before + 256, "its pages are locked");

  // Two byte-exact regions in one page: the page stays locked until both
  // are unlocked.
  char *p = big + (1 << 20);
  char *r1 = llvm_omp_target_lock_mem(p, 100, dev);
  char *r2 = llvm_omp_target_lock_mem(p + 200, 100, dev);
  OT_EXPECT(r1 && r2, "two regions in one page lock");
  OT_EXPECT(lockedKiB() == Before + 256 + page / 1024,
            "a shared page is locked once");
  llvm_omp_target_unlock_mem(p, dev);
  OT_EXPECT(lockedKiB() == Before + 256 + page / 1024,
            "the shared page stays locked while a region uses it");
  llvm_omp_target_unlock_mem(p + 200, dev);
  llvm_omp_target_unlock_mem(big, dev);
  OT_EXPECT(lockedKiB() == Before, "the last unlock releases every page");

  // With the memory released, the limit allows the next lock again.
  OT_EXPECT(llvm_omp_target_lock_mem(big + (2 << 20), 512 << 10, dev) != NULL,
            "released pages count no more against the limit");
  llvm_omp_target_unlock_mem(big + (2 << 20), dev);
  free(big);
  OT_SUMMARY();
  return 0;
}

// CHECK-NOT: FAIL
// CHECK: PASS: a lock beyond RLIMIT_MEMLOCK fails
// CHECK: PASS: nothing stays locked after the failure
// CHECK: PASS: a lock within RLIMIT_MEMLOCK succeeds
// CHECK: PASS: its pages are locked
// CHECK: PASS: two regions in one page lock
// CHECK: PASS: a shared page is locked once
// CHECK: PASS: the shared page stays locked while a region uses it
// CHECK: PASS: the last unlock releases every page
// CHECK: PASS: released pages count no more against the limit
// CHECK: failures: 0

// ERR-LABEL: case beyond
// ERR-NEXT: data_lock: cannot lock [{{.*}}) (4194304 bytes): pinning failed: mlock of 4194304 bytes at 0x{{[0-9a-f]+}} failed: {{.*}}RLIMIT_MEMLOCK
// ERR-LABEL: case within
// ERR-NOT: error

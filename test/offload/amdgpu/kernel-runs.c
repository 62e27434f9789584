// Kernels on a real AMD GPU: a combined teams loop, a reduction, a declare
// target function and global, firstprivate scalars, dynamic teams/threads,
// and a kernel reading host memory through the agent address of a lock.
// The HSA emulation cannot run GPU code, so this needs hardware.
//
// REQUIRES: amdgcn-amd-amdhsa, amdgpu-hardware
// RUN: %libomptarget-compile-run-and-check-generic

#include <omp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include "offload_test.h"

#include "ompx_lock.h"

#pragma omp declare target
int Scale = 3;
static int twice(int v) { return 2 * v; }
#pragma omp end declare target

#define N 100000

int main(void) {
  static float x[N], y[N];
  for (int i = 0; i < N; ++i) {
    x[i] = (float)i;
    y[i] = 1.0f;
  }
  float a = 0.5f;
  int on_device = 0;
#pragma omp target teams distribute parallel for map(to : x) map(tofrom : y) \
    firstprivate(a) map(from : on_device)
  for (int i = 0; i < N; ++i) {
    y[i] += a * x[i];
    if (i == 0)
      on_device = !omp_is_initial_device();
  }
  int ok = on_device;
  for (int i = 0; i < N; ++i)
    ok &= y[i] == 1.0f + 0.5f * (float)i;
  OT_EXPECT(ok, "saxpy on the device");

  long sum = 0;
#pragma omp target teams distribute parallel for reduction(+ : sum) \
    num_teams(7) thread_limit(128)
  for (int i = 0; i < N; ++i)
    sum += twice(i) * Scale;
  OT_EXPECT(sum == 6L * ((long)N * (N - 1) / 2), "reduction with a declare "
                                                  "target function and global");

  // A locked host buffer read by a kernel through its agent address.
  int *buf = malloc(1024 * sizeof(int));
  for (int i = 0; i < 1024; ++i)
    buf[i] = i;
  int *agent = llvm_omp_target_lock_mem(buf, 1024 * sizeof(int), 0);
  long total = 0;
#pragma omp target is_device_ptr(agent) map(tofrom : total)
  for (int i = 0; i < 1024; ++i)
    total += agent[i];
  OT_EXPECT(agent && total == 1023L * 1024 / 2,
            "kernel reads locked memory at its agent address");
  llvm_omp_target_unlock_mem(buf, 0);
  free(buf);
  OT_SUMMARY();
  return ot_failures != 0;
}

// CHECK: PASS: saxpy on the device
// CHECK: PASS: reduction with a declare target function and global
// CHECK: PASS: kernel reads locked memory at its agent address
// CHECK-NOT: FAIL
// CHECK: failures: 0

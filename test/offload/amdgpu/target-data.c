// Mapping without kernels: target enter/exit data, target update (also with
// nowait and depend), and a target data region, on two GPUs.  These load the
// image on first use (load_binary: code object reader, executable, the
// DeviceRTL environment global) and move data through streams and events.
//
// REQUIRES: amdgcn-amd-amdhsa
// RUN: %libomptarget-compile-run-and-check-generic
// The same program on LLVM 16's own amdgpu plugin prints the same
// (test/hsa-emu/README.md, "The stock plugin on the emulation").
// RUN: %run-stock-generic | %fcheck-generic

#include <omp.h>
#include <stdio.h>
#include "offload_test.h"

#define N 5000

int main(void) {
  static int a[N], b[N];
  int ndev = omp_get_num_devices();
  OT_EXPECT(ndev > 0, "devices");

  for (int dev = 0; dev < ndev && dev < 2; ++dev) {
    for (int i = 0; i < N; ++i)
      a[i] = i + dev;
#pragma omp target enter data map(to : a[0 : N]) device(dev)
    OT_EXPECT(omp_target_is_present(a, dev), "device %d: a is present", dev);
    int *da = omp_get_mapped_ptr(a, dev);
    OT_EXPECT(da != NULL && da != a, "device %d: a has a device copy", dev);

    for (int i = 0; i < N; ++i)
      a[i] = -1;
#pragma omp target update from(a[0 : N]) device(dev)
    int ok = 1;
    for (int i = 0; i < N; ++i)
      ok &= a[i] == i + dev;
    OT_EXPECT(ok, "device %d: update from", dev);

    for (int i = 0; i < N; ++i)
      a[i] = 3 * i;
#pragma omp target update to(a[10 : 100]) device(dev)
    for (int i = 0; i < N; ++i)
      a[i] = 0;
#pragma omp target exit data map(from : a[0 : N]) device(dev)
    ok = 1;
    for (int i = 0; i < N; ++i)
      ok &= a[i] == ((i >= 10 && i < 110) ? 3 * i : i + dev);
    OT_EXPECT(ok, "device %d: partial update to, exit data from", dev);
    OT_EXPECT(!omp_target_is_present(a, dev), "device %d: a is unmapped", dev);
  }

  // Asynchronous updates ordered by dependences.
  for (int i = 0; i < N; ++i)
    b[i] = i;
#pragma omp target enter data map(alloc : b[0 : N])
#pragma omp target update to(b[0 : N]) nowait depend(out : b)
#pragma omp task depend(inout : b)
  {
    for (int i = 0; i < N; ++i)
      b[i] = 0;
  }
#pragma omp target update from(b[0 : N]) nowait depend(inout : b)
#pragma omp taskwait
  int ok = 1;
  for (int i = 0; i < N; ++i)
    ok &= b[i] == i;
  OT_EXPECT(ok, "nowait updates in dependence order");
#pragma omp target exit data map(delete : b[0 : N])

  // A target data region: copied back at its end.
  for (int i = 0; i < N; ++i)
    a[i] = 7;
#pragma omp target data map(tofrom : a[0 : N])
  {
    for (int i = 0; i < N; ++i)
      a[i] = 8;
#pragma omp target update to(a[0 : N / 2])
    for (int i = 0; i < N; ++i)
      a[i] = 9;
  }
  ok = 1;
  for (int i = 0; i < N; ++i)
    ok &= a[i] == (i < N / 2 ? 8 : 7);
  OT_EXPECT(ok, "target data region copies back");
  OT_SUMMARY();
  return ot_failures != 0;
}

// CHECK: PASS: devices
// CHECK: PASS: device 0: a is present
// CHECK: PASS: device 0: a has a device copy
// CHECK: PASS: device 0: update from
// CHECK: PASS: device 0: partial update to, exit data from
// CHECK: PASS: device 0: a is unmapped
// CHECK: PASS: nowait updates in dependence order
// CHECK: PASS: target data region copies back
// CHECK-NOT: FAIL
// CHECK: failures: 0

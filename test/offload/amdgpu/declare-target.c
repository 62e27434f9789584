// Globals of the device image (declare target): load_binary finds them in
// the HSA executable and libomptarget maps the host globals to them.  Each
// device starts with the image's initial values (.data and .bss), has its
// own copy, and target update moves data in both directions.
//
// REQUIRES: amdgcn-amd-amdhsa
// RUN: %libomptarget-compile-run-and-check-generic
// The same program on LLVM 16's own amdgpu plugin prints the same
// (test/hsa-emu/README.md, "The stock plugin on the emulation").
// RUN: %run-stock-generic | %fcheck-generic

#include <omp.h>
#include <stdio.h>
#include "offload_test.h"

struct Pair {
  int first;
  double second;
};

int Initialised[6] = {1, 2, 3, 4, 5, 6};
long Zeroed[1000];
struct Pair P = {11, 2.5};
#pragma omp declare target(Initialised, Zeroed, P)

int main(void) {
  int ndev = omp_get_num_devices();
  OT_EXPECT(ndev > 0, "devices");
  int other = ndev > 1 ? 1 : 0;

  // Change the host copies first: the device copies keep the image values.
  for (int i = 0; i < 6; ++i)
    Initialised[i] = -1;
  Zeroed[999] = 42;
  P.first = 0;
#pragma omp target update from(Initialised, Zeroed, P)
  OT_EXPECT(Initialised[0] == 1 && Initialised[5] == 6,
            "initialised global holds the image's values");
  OT_EXPECT(Zeroed[999] == 0, "zero-initialised global is zero");
  OT_EXPECT(P.first == 11 && P.second == 2.5, "struct global");

  Initialised[2] = 33;
  P.second = -1.0;
#pragma omp target update to(Initialised[2 : 1], P)
  Initialised[2] = 0;
  P.second = 0;
#pragma omp target update from(Initialised, P)
  OT_EXPECT(Initialised[2] == 33 && P.second == -1.0, "update to then from");

  // The device copy is where omp_get_mapped_ptr says.
  int *dev_ptr = omp_get_mapped_ptr(Initialised, 0);
  int copy[6] = {0};
  omp_target_memcpy(copy, dev_ptr, sizeof(copy), 0, 0,
                    omp_get_initial_device(), 0);
  OT_EXPECT(copy[2] == 33, "mapped pointer addresses the device copy");

  // Another device has its own copy, untouched.
#pragma omp target update from(Initialised) device(other)
  OT_EXPECT(Initialised[2] == (other ? 3 : 33), "per-device copies");
  OT_SUMMARY();
  return ot_failures != 0;
}

// CHECK: PASS: devices
// CHECK: PASS: initialised global holds the image's values
// CHECK: PASS: zero-initialised global is zero
// CHECK: PASS: struct global
// CHECK: PASS: update to then from
// CHECK: PASS: mapped pointer addresses the device copy
// CHECK: PASS: per-device copies
// CHECK-NOT: FAIL
// CHECK: failures: 0

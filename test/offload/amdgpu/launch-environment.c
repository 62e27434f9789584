// The launch environment under libomptarget 18, on the HSA emulation with
// dispatches completed unexecuted (HSA_EMU_DISPATCH=noop): every kernel's
// first argument (clang 18's dyn_ptr) is the all-ones sentinel, except for
// a kernel with a teams reduction, which gets device memory of its launch
// (the environment, pointing to a reduction buffer of ReductionDataSize x
// ReductionBufferLength bytes). OFFLOADIO_INFO=0x20 names both; the
// emulation's trace shows the argument each dispatch got. Both launches of
// the reduction get their own zeroed environment (the plugin frees it once
// the launch's stream is complete), and nothing is left over at the end.
//
// REQUIRES: amdgcn-amd-amdhsa, hsa-emulation, llvm-18
// RUN: %libomptarget-compile-generic
// RUN: env HSA_EMU_DISPATCH=noop HSA_EMU_TRACE=1 OFFLOADIO_INFO=32 \
// RUN:   %libomptarget-run-generic 2>&1 | %fcheck-generic

#include <stdio.h>

#define N 4096
static int A[N];

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0);
  long Sum = 0;
#pragma omp target data map(tofrom : A)
  {
#pragma omp target teams distribute parallel for
    for (int I = 0; I < N; ++I)
      A[I] = I;
    for (int Round = 0; Round < 2; ++Round) {
#pragma omp target teams distribute parallel for reduction(+ : Sum)
      for (int I = 0; I < N; ++I)
        Sum += A[I];
    }
  }
  printf("done\n");
  return 0;
}

// The plain kernel: the sentinel, nothing allocated.
// CHECK: hsa-emu: dispatch __omp_offloading_{{.*}}_main_l{{[0-9]+}} on GPU
// CHECK: hsa-emu:   arg 0 global_buffer offset 0 size 8 = 0xffffffffffffffff
// The reduction, twice: environment and buffer named, the argument a
// device address, never the sentinel.
// CHECK-NOT: = 0xffffffffffffffff
// CHECK: launch environment of 16 bytes at 0x{{[0-9A-F]+}}, reduction buffer of {{[0-9]+}} x {{[0-9]+}} bytes at 0x{{[0-9A-F]+}}
// CHECK-NOT: = 0xffffffffffffffff
// CHECK: hsa-emu:   arg 0 global_buffer offset 0 size 8 = 0x
// CHECK-NOT: = 0xffffffffffffffff
// CHECK: launch environment of 16 bytes at 0x{{[0-9A-F]+}}, reduction buffer
// CHECK-NOT: = 0xffffffffffffffff
// CHECK: hsa-emu:   arg 0 global_buffer offset 0 size 8 = 0x
// CHECK-NOT: = 0xffffffffffffffff
// CHECK: done

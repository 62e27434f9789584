// A program built with -fopenmp-target-jit carries its device code as LLVM
// bitcode: the plugin accepts the image (is_valid_binary), compiles it at
// load for the GPU's processor, links it with lld and loads the code object
// (the emulation checks it is an AMDGPU shared object for gfx90a; the
// kernel cannot run there, so HSA_EMU_DISPATCH=noop completes it unrun).
// The stock JIT's settings: the module before optimisation, and after,
// written where LIBOMPTARGET_JIT_{PRE,POST}_OPT_IR_MODULE say; a
// replacement module that cannot be read fails the load by its name.
//
// REQUIRES: amdgcn-amd-amdhsa, hsa-emulation
// RUN: %libomptarget-compile-generic -fopenmp-target-jit
// RUN: env HSA_EMU_DISPATCH=noop OFFLOADIO_INFO=0x10 \
// RUN:   LIBOMPTARGET_JIT_PRE_OPT_IR_MODULE=%t.pre.ll \
// RUN:   LIBOMPTARGET_JIT_SKIP_OPT=true %libomptarget-run-generic 2>&1 \
// RUN:   | %fcheck-generic --check-prefix=LOAD
// RUN: %fcheck-generic --input-file %t.pre.ll --check-prefix=IR
// RUN: env HSA_EMU_DISPATCH=noop LIBOMPTARGET_JIT_OPT_LEVEL=2 \
// RUN:   LIBOMPTARGET_JIT_POST_OPT_IR_MODULE=%t.post.ll \
// RUN:   %libomptarget-run-generic 2>&1 | %fcheck-generic --check-prefix=DONE
// RUN: %fcheck-generic --input-file %t.post.ll --check-prefix=IR
// RUN: env LIBOMPTARGET_JIT_REPLACEMENT_MODULE=%t.missing.ll \
// RUN:   %libomptarget-run-fail-generic 2>&1 | %fcheck-generic --check-prefix=MISSING

#include <stdio.h>

int main(void) {
  int X = 1;
#pragma omp target map(tofrom : X)
  { X += 1; }
  // The kernel did not run (noop dispatch): X is what it was.
  printf("done %d\n", X);
  return 0;
}

// LOAD: bitcode image at 0x{{[0-9A-Fa-f]+}} compiled for gfx90a: {{[0-9]+}} bytes
// LOAD: loaded image 0
// LOAD: done 1

// DONE: done 1

// IR: target triple = "amdgcn-amd-amdhsa"
// IR: define {{.*}}amdgpu_kernel void @__omp_offloading_{{.*}}_main_l{{[0-9]+}}(

// MISSING: cannot compile the bitcode image at 0x{{[0-9A-Fa-f]+}} ({{[0-9]+}} bytes) for gfx90a on device 0: cannot read LIBOMPTARGET_JIT_REPLACEMENT_MODULE={{.*}}missing.ll

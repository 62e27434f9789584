// Global constructors and destructors of device code under libomptarget 18,
// on the HSA emulation with dispatches completed unexecuted
// (HSA_EMU_DISPATCH=noop): clang 18 lowers them into the image's
// amdgcn.device.init and amdgcn.device.fini kernels, which the plugin
// launches on one work-item, the first right after loading the image and
// the second at exit; LLVM 18's own plugin does the same. Both give these
// kernels, whose stack the compiler cannot bound, 16 KiB of private segment
// per work-item (LIBOMPTARGET_STACK_SIZE unset), and 4 KiB when it is set so.
//
// REQUIRES: amdgcn-amd-amdhsa, hsa-emulation, llvm-18
// RUN: %libomptarget-compilexx-generic
// RUN: env HSA_EMU_DISPATCH=noop HSA_EMU_TRACE=1 OFFLOADIO_INFO=16 \
// RUN:   %libomptarget-run-generic 2>&1 | %fcheck-generic
// RUN: env HSA_EMU_DISPATCH=noop HSA_EMU_TRACE=1 %run-stock-generic 2>&1 \
// RUN:   | %fcheck-generic --check-prefix=STOCK
// RUN: env HSA_EMU_DISPATCH=noop HSA_EMU_TRACE=1 LIBOMPTARGET_STACK_SIZE=4096 \
// RUN:   %libomptarget-run-generic 2>&1 | %fcheck-generic --check-prefix=STACK4K
// RUN: env HSA_EMU_DISPATCH=noop HSA_EMU_TRACE=1 LIBOMPTARGET_STACK_SIZE=4096 \
// RUN:   %run-stock-generic 2>&1 | %fcheck-generic --check-prefix=STACK4K

#include <cstdio>

struct CounterTy {
  int Value;
  CounterTy() : Value(42) {}
  ~CounterTy() { Value = 0; }
};

#pragma omp declare target
CounterTy Counter;
#pragma omp end declare target

int main() {
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  int X = 0;
#pragma omp target map(from : X)
  X = Counter.Value;
  std::printf("done\n");
  return 0;
}

// CHECK: image 0: running its global constructors (amdgcn.device.init)
// CHECK: hsa-emu: dispatch amdgcn.device.init on GPU 0: dims {{[0-9]}} grid [1,1,1] workgroup [1,1,1] group_segment {{[0-9]+}} private_segment 16384 kernarg
// CHECK: hsa-emu: dispatch __omp_offloading_{{.*}}_main_l{{[0-9]+}} on GPU
// CHECK: done
// CHECK: image 0: running its global destructors (amdgcn.device.fini)
// CHECK: hsa-emu: dispatch amdgcn.device.fini on GPU 0: dims {{[0-9]}} grid [1,1,1] workgroup [1,1,1]

// STOCK: hsa-emu: dispatch amdgcn.device.init on GPU 0: dims {{[0-9]}} grid [1,1,1] workgroup [1,1,1] group_segment {{[0-9]+}} private_segment 16384 kernarg
// STOCK: hsa-emu: dispatch __omp_offloading_{{.*}}_main_l{{[0-9]+}} on GPU
// STOCK: done
// STOCK: hsa-emu: dispatch amdgcn.device.fini on GPU 0: dims {{[0-9]}} grid [1,1,1] workgroup [1,1,1]

// STACK4K: hsa-emu: dispatch amdgcn.device.init on GPU 0: {{.*}} private_segment 4096 kernarg
// STACK4K: hsa-emu: dispatch amdgcn.device.fini on GPU 0: {{.*}} private_segment 4096 kernarg

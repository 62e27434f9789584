// Without GPU agents the amdgpu plugin loads, reports zero devices and says
// nothing unless OFFLOADIO_INFO asks; libomptarget then moves on and the
// target region runs on the host.  (libomptarget also tries the stock
// libomptarget.rtl.amdgpu.so next, so the "only our plugin" check is off.)
//
// REQUIRES: hsa-emulation
// RUN: %libomptarget-compile-generic
// RUN: env -u OFFLOADIO_EXPECT_PLUGIN HSA_EMU_NUM_GPUS=0 %libomptarget-run-generic 2>&1 | %fcheck-generic
// RUN: env -u OFFLOADIO_EXPECT_PLUGIN HSA_EMU_NUM_GPUS=0 OFFLOADIO_INFO=1 %libomptarget-run-generic 2>&1 | %fcheck-generic --check-prefix=INFO
// LLVM 16's own amdgpu plugin also finds no device and the region runs on
// the host (test/hsa-emu/README.md, "The stock plugin on the emulation").
// RUN: env -u OFFLOADIO_EXPECT_PLUGIN HSA_EMU_NUM_GPUS=0 %run-stock-generic 2>&1 | %fcheck-generic

#include <omp.h>
#include <stdio.h>

int main(void) {
  int x = 1, on_host = 0;
#pragma omp target map(tofrom : x, on_host)
  {
    x += 1;
    on_host = omp_is_initial_device();
  }
  printf("x = %d, ran on the host: %d, devices: %d\n", x, on_host,
         omp_get_num_devices());
  return 0;
}

// CHECK-NOT: offload-io(amdgpu)
// CHECK-NOT: error
// CHECK: x = 2, ran on the host: 1, devices: 0

// INFO: offload-io(amdgpu)[{{[0-9]+}}]: no devices: the HSA runtime {{.*}}libhsa-runtime64.so.1 has no GPU
// INFO: x = 2, ran on the host: 1, devices: 0

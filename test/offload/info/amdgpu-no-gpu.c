// On a machine without an AMD GPU the amdgpu plugin (loaded in every run,
// with Debian's real libhsa-runtime64) finds no device. Under
// OFFLOADIO_INFO it says so plainly first, and keeps the HSA runtime's
// raw status in the same line for diagnosis. LIBOMPTARGET_INFO, the stock
// plugins' setting, does not ask for it.
//
// REQUIRES: host-plugin, hsa-runtime
// UNSUPPORTED: amd-kfd
// RUN: %libomptarget-compile-generic
// RUN: env OFFLOADIO_INFO=1 %libomptarget-run-generic 2>&1 | %fcheck-generic
// RUN: env -u OFFLOADIO_INFO %libomptarget-run-generic 2>&1 \
// RUN:   | %fcheck-generic --check-prefix=QUIET
// RUN: env -u OFFLOADIO_INFO LIBOMPTARGET_INFO=1 %libomptarget-run-generic \
// RUN:   2>&1 | %fcheck-generic --check-prefix=QUIET

#include <omp.h>
#include <stdio.h>

int main(void) {
  printf("devices: %d\n", omp_get_num_devices());
  return 0;
}

// CHECK: offload-io(amdgpu)[{{[0-9]+}}]: no devices: no AMD GPU found: /dev/kfd does not exist (hsa_init failed: runtime {{.*}}libhsa-runtime64.so.1: HSA_STATUS_{{.*}})
// CHECK: devices:

// QUIET-NOT: offload-io(amdgpu)
// QUIET: devices:

// SPDX-License-Identifier: Apache-2.0
//
// libompx_io_devices: an offload image for each target offload-io was built
// for, and one call. A process with no offload code of its own (a Python
// interpreter) loads it so that libomptarget registers the image and brings
// up the devices of every plugin that accepts it; until an image is
// registered, libomptarget reports no device.
#include <omp.h>

/// 1 when an empty target region ran on device_num itself, 0 when it ran on
/// the host instead.
__attribute__((visibility("default"))) int ompx_io_devices_check(int device_num) {
  int OnDevice = 0;
#pragma omp target map(from : OnDevice) device(device_num)
  OnDevice = !omp_is_initial_device();
  return OnDevice;
}

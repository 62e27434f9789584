// SPDX-License-Identifier: Apache-2.0
//
// The example's only OpenMP offload source: compiled for every offload
// target of the program (the rest is host C++), it carries the device image
// that makes libomptarget bring up the target's devices.
#include <omp.h>

#include "Pattern.h"

int ckptFillDevice(void *Buf, uint64_t Bytes, uint64_t Seed, uint64_t Key,
                   int Device) {
  if (Bytes == 0)
    return 0;
  if (Device < 0 || Device > omp_get_num_devices())
    return -1;
  unsigned char *Data = (unsigned char *)Buf;
  // The region falls back to the host when Device has no image; that would
  // write device memory from the host, so the device is checked above and
  // the result of omp_is_initial_device compared below.
  int OnHost = 1;
#pragma omp target teams distribute parallel for is_device_ptr(Data)          \
    device(Device) map(from : OnHost)
  for (uint64_t I = 0; I < Bytes; ++I) {
    Data[I] = ckptPatternByte(Seed, Key, I);
    if (I == 0)
      OnHost = omp_is_initial_device();
  }
  return OnHost && Device != omp_get_initial_device() ? -1 : 0;
}

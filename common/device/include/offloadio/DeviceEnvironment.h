// SPDX-License-Identifier: Apache-2.0
//
// The environment the LLVM 16 device runtime reads from its image global
// (__omp_rtl_device_environment; omptarget_device_environment in older
// runtimes): filled once per device by the framework at init, written into
// every image the device loads by the backend.
#ifndef OFFLOADIO_DEVICEENVIRONMENT_H
#define OFFLOADIO_DEVICEENVIRONMENT_H

#include <cstdint>

namespace offloadio {

/// Layout of DeviceEnvironmentTy in openmp/libomptarget/DeviceRTL (LLVM 16,
/// checked against Debian's libomptarget-{nvptx,amdgpu}-*.bc): four 32-bit
/// fields.
struct DeviceEnvironmentTy {
  uint32_t DebugKind = 0;      ///< LIBOMPTARGET_DEVICE_RTL_DEBUG bits.
  uint32_t NumDevices = 0;     ///< Devices of the plugin.
  uint32_t DeviceNum = 0;      ///< This device's plugin-local number.
  /// LIBOMPTARGET_SHARED_MEMORY_SIZE: dynamic shared (group) memory of
  /// each launch.
  uint32_t DynamicMemSize = 0;
};
static_assert(sizeof(DeviceEnvironmentTy) == 16, "LLVM 16 device runtime");

/// The image globals the device runtime reads its environment from, newest
/// name first.
inline constexpr const char *DeviceEnvironmentSymbols[] = {
    "__omp_rtl_device_environment", "omptarget_device_environment"};

} // namespace offloadio

#endif // OFFLOADIO_DEVICEENVIRONMENT_H

// SPDX-License-Identifier: Apache-2.0
//
// The environment the device runtime reads from its image global
// (__omp_rtl_device_environment; omptarget_device_environment in older
// runtimes): filled once per device by the framework at init, encoded in
// the layout of the libomptarget version served (DeviceRuntimeABI.h) and
// written into every image the device loads by the backend.
#ifndef OFFLOADIO_DEVICEENVIRONMENT_H
#define OFFLOADIO_DEVICEENVIRONMENT_H

#include <cstdint>

namespace offloadio {

/// Every field any supported device runtime reads; each version's layout
/// holds a prefix of them (16: the four 32-bit fields; 17: and
/// ClockFrequency; 18: all).
struct DeviceEnvironmentTy {
  uint32_t DebugKind = 0;      ///< LIBOMPTARGET_DEVICE_RTL_DEBUG bits.
  uint32_t NumDevices = 0;     ///< Devices of the plugin.
  uint32_t DeviceNum = 0;      ///< This device's plugin-local number.
  /// LIBOMPTARGET_SHARED_MEMORY_SIZE: dynamic shared (group) memory of
  /// each launch.
  uint32_t DynamicMemSize = 0;
  /// Ticks per second of the device clock omp_get_wtime reads; the
  /// backend's, else CLOCKS_PER_SEC.
  uint64_t ClockFrequency = 1000000;
  /// Device address and pairs of the image's table of indirectly callable
  /// functions (declare target indirect; DeviceImageTy::IndirectCallTable).
  uint64_t IndirectCallTable = 0;
  uint64_t IndirectCallTableSize = 0;
  /// Threads the device runs at once; 0 if the backend does not say.
  uint64_t HardwareParallelism = 0;
};

/// The image globals the device runtime reads its environment from, newest
/// name first.
inline constexpr const char *DeviceEnvironmentSymbols[] = {
    "__omp_rtl_device_environment", "omptarget_device_environment"};

} // namespace offloadio

#endif // OFFLOADIO_DEVICEENVIRONMENT_H

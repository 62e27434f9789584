// SPDX-License-Identifier: Apache-2.0
//
// Which device each tensor of a sharded load goes to: the even split over a
// list of devices (largest tensor first, each to the device with the fewest
// bytes so far), and the checks of a device list and of an explicit map
// against the device numbers of the program. No device is touched here.
#ifndef OMPX_IO_SAFETENSORSSPLIT_H
#define OMPX_IO_SAFETENSORSSPLIT_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ompxio {
namespace safetensors {

/// The OpenMP device numbers of the program: 0 to NumDevices - 1 and the
/// initial device (the host, whose memory the initial device's is).
struct DeviceNumbersTy {
  int NumDevices = 0;
  int Initial = 0;

  /// Whether \p Device is one of them.
  bool exists(int Device) const {
    return Device == Initial || (Device >= 0 && Device < NumDevices);
  }
  /// "device D does not exist (N devices; the initial device is I)".
  std::string missing(int Device) const;
};

/// Why the device list \p Devices (\p Count entries) of an even split
/// cannot be used, or std::nullopt when it can: it is empty, names a device
/// that does not exist, or names one device twice.
std::optional<std::string> checkDeviceList(const int *Devices, size_t Count,
                                           const DeviceNumbersTy &Numbers);

/// The first entry of the map \p Map (\p Count entries) whose device does
/// not exist, or std::nullopt when all do.
std::optional<size_t> firstMissingDevice(const int *Map, size_t Count,
                                         const DeviceNumbersTy &Numbers);

/// The device of each tensor of \p Bytes (by position) in an even split
/// over \p Devices (\p NumDevices entries, at least one): the tensors are
/// taken largest first, tensors of equal size in their order, and each
/// goes to the device with the fewest bytes so far, the earlier in
/// \p Devices on a tie. Deterministic; the bytes of any two devices differ
/// by at most the largest tensor.
std::vector<int> splitEvenly(const std::vector<uint64_t> &Bytes,
                             const int *Devices, size_t NumDevices);

} // namespace safetensors
} // namespace ompxio

#endif // OMPX_IO_SAFETENSORSSPLIT_H

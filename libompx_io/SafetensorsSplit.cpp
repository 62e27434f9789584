// SPDX-License-Identifier: Apache-2.0
#include "SafetensorsSplit.h"

#include <algorithm>
#include <numeric>
#include <set>

using namespace ompxio::safetensors;

std::string DeviceNumbersTy::missing(int Device) const {
  return "device " + std::to_string(Device) + " does not exist (" +
         std::to_string(NumDevices) + " devices; the initial device is " +
         std::to_string(Initial) + ")";
}

std::optional<std::string>
ompxio::safetensors::checkDeviceList(const int *Devices, size_t Count,
                                     const DeviceNumbersTy &Numbers) {
  if (!Devices || Count == 0)
    return std::string("the list of devices is empty");
  std::set<int> Seen;
  for (size_t I = 0; I < Count; ++I) {
    if (!Numbers.exists(Devices[I]))
      return "devices[" + std::to_string(I) +
             "]: " + Numbers.missing(Devices[I]);
    if (!Seen.insert(Devices[I]).second)
      return "devices[" + std::to_string(I) + "]: device " +
             std::to_string(Devices[I]) + " is in the list twice";
  }
  return std::nullopt;
}

std::optional<size_t>
ompxio::safetensors::firstMissingDevice(const int *Map, size_t Count,
                                        const DeviceNumbersTy &Numbers) {
  for (size_t I = 0; I < Count; ++I)
    if (!Numbers.exists(Map[I]))
      return I;
  return std::nullopt;
}

std::vector<int>
ompxio::safetensors::splitEvenly(const std::vector<uint64_t> &Bytes,
                                 const int *Devices, size_t NumDevices) {
  std::vector<size_t> Order(Bytes.size());
  std::iota(Order.begin(), Order.end(), size_t(0));
  // Stable: tensors of equal size keep their order, so the split depends on
  // the request alone.
  std::stable_sort(Order.begin(), Order.end(),
                   [&](size_t A, size_t B) { return Bytes[A] > Bytes[B]; });
  std::vector<uint64_t> Load(NumDevices, 0);
  std::vector<int> DeviceOf(Bytes.size(), NumDevices ? Devices[0] : 0);
  // A scan per tensor: the devices of one node are few.
  for (size_t T : Order) {
    size_t Least = 0;
    for (size_t D = 1; D < NumDevices; ++D)
      if (Load[D] < Load[Least])
        Least = D;
    Load[Least] += Bytes[T];
    DeviceOf[T] = Devices[Least];
  }
  return DeviceOf;
}

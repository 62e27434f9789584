// SPDX-License-Identifier: Apache-2.0
//
// GenericDeviceTy as the file engine's device (IODeviceTy): forwards to the
// device's pools and allocations; the busy-memory map is the device's file
// service's (DeviceIOTy).
#ifndef OFFLOADIO_DEVICEIOADAPTER_H
#define OFFLOADIO_DEVICEIOADAPTER_H

#include "offloadio/io/IODevice.h"

namespace offloadio {

class GenericDeviceTy;

/// The IODeviceTy of a GenericDeviceTy.
class DeviceIOAdapterTy final : public IODeviceTy {
public:
  /// \p Busy: the memory the device's file transfers use.
  DeviceIOAdapterTy(GenericDeviceTy &Device, IOBusyMemoryTy &Busy)
      : Device(Device), Busy(Busy) {}

  int32_t getDeviceId() const override;
  std::string getPluginName() const override;
  bool hostCanAccessDeviceMemory() const override;
  std::optional<AllocationInfoTy>
  findAllocation(const void *Ptr) const override;
  size_t bytesAvailableFrom(const void *Ptr) const override;
  Expected<ForeignMemoryTy> queryForeignMemory(const void *Ptr) override;
  IOBusyMemoryTy &getIOBusyMemory() override;
  PinnedPoolTy &getPinnedPool() override;
  Expected<StreamTy *> acquireStream() override;
  void releaseStream(StreamTy *Stream) override;
  Expected<EventTy *> acquireEvent() override;
  void releaseEvent(EventTy *Event) override;
  TimeProfileTy *getProfile() override;
  DevicePlacementTy *getHostPlacement() override;

private:
  GenericDeviceTy &Device;
  IOBusyMemoryTy &Busy;
};

} // namespace offloadio

#endif // OFFLOADIO_DEVICEIOADAPTER_H

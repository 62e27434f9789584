// SPDX-License-Identifier: Apache-2.0
#include "offloadio/DeviceIOAdapter.h"
#include "offloadio/Device.h"
#include "offloadio/Plugin.h"

using namespace offloadio;

int32_t DeviceIOAdapterTy::getDeviceId() const { return Device.getDeviceId(); }

std::string DeviceIOAdapterTy::getPluginName() const {
  return Device.getServices().PluginName;
}

bool DeviceIOAdapterTy::hostCanAccessDeviceMemory() const {
  return Device.getLimits().HostCanAccessDeviceMemory;
}

std::optional<AllocationInfoTy>
DeviceIOAdapterTy::findAllocation(const void *Ptr) const {
  return Device.findAllocation(Ptr);
}

size_t DeviceIOAdapterTy::bytesAvailableFrom(const void *Ptr) const {
  return Device.bytesAvailableFrom(Ptr);
}

Expected<ForeignMemoryTy>
DeviceIOAdapterTy::queryForeignMemory(const void *Ptr) {
  return Device.queryForeignMemory(Ptr);
}

IOBusyMemoryTy &DeviceIOAdapterTy::getIOBusyMemory() { return Busy; }

PinnedPoolTy &DeviceIOAdapterTy::getPinnedPool() {
  return Device.getPinnedPool();
}

Expected<StreamTy *> DeviceIOAdapterTy::acquireStream() {
  return Device.acquireStream();
}

void DeviceIOAdapterTy::releaseStream(StreamTy *Stream) {
  Device.releaseStream(Stream);
}

Expected<EventTy *> DeviceIOAdapterTy::acquireEvent() {
  return Device.acquireEvent();
}

void DeviceIOAdapterTy::releaseEvent(EventTy *Event) {
  Device.releaseEvent(Event);
}

TimeProfileTy *DeviceIOAdapterTy::getProfile() {
  return &Device.getServices().Profile;
}

DevicePlacementTy *DeviceIOAdapterTy::getHostPlacement() {
  return &Device.getHostPlacement();
}

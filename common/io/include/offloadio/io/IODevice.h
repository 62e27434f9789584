// SPDX-License-Identifier: Apache-2.0
//
// What the file engine needs of a device, and nothing more: the engine
// depends on this interface, GenericDeviceTy provides it through
// DeviceIOAdapterTy (offloadio/DeviceIOAdapter.h), and tests substitute
// their own.
#ifndef OFFLOADIO_IO_IODEVICE_H
#define OFFLOADIO_IO_IODEVICE_H

#include "offloadio/ABI.h"
#include "offloadio/AllocationRegistry.h"
#include "offloadio/Error.h"
#include "offloadio/ForeignMemory.h"
#include "offloadio/Stream.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace offloadio {

class DevicePlacementTy;
class IOBusyMemoryTy;
class PinnedPoolTy;
class TimeProfileTy;

/// The device side of the file engine.
class IODeviceTy {
public:
  virtual ~IODeviceTy();

  /// The plugin-local device number, for messages.
  virtual int32_t getDeviceId() const = 0;
  /// The plugin's name, for messages.
  virtual std::string getPluginName() const = 0;
  /// Whether every device pointer is a host address (the host-addressable
  /// path, OMPX_IO_PATH=direct).
  virtual bool hostCanAccessDeviceMemory() const = 0;

  /// The live program allocation of the device that contains \p Ptr, with
  /// its kind, if any.
  virtual std::optional<AllocationInfoTy>
  findAllocation(const void *Ptr) const = 0;
  /// Bytes from \p Ptr to the end of its allocation; SIZE_MAX if unknown.
  virtual size_t bytesAvailableFrom(const void *Ptr) const = 0;
  /// What the vendor says of \p Ptr, memory findAllocation does not know
  /// (allocated outside OpenMP): ForeignMemory.h.
  virtual Expected<ForeignMemoryTy> queryForeignMemory(const void *Ptr) {
    (void)Ptr;
    return ForeignMemoryTy();
  }
  /// Memory that transfers in flight use; frees wait for it.
  virtual IOBusyMemoryTy &getIOBusyMemory() = 0;

  /// Where staging buffers come from: pinned host memory, reserved in the
  /// pinned budget before it is allocated.
  virtual PinnedPoolTy &getPinnedPool() = 0;
  /// A stream of the device's pool.
  virtual Expected<StreamTy *> acquireStream() = 0;
  /// Give back a stream from acquireStream.
  virtual void releaseStream(StreamTy *Stream) = 0;
  /// An event of the device's pool.
  virtual Expected<EventTy *> acquireEvent() = 0;
  /// Give back an event from acquireEvent.
  virtual void releaseEvent(EventTy *Event) = 0;
  /// Where the engine's stages are timed (OFFLOADIO_PROFILE); null for
  /// nowhere.
  virtual TimeProfileTy *getProfile() { return nullptr; }
  /// Where the workers serving the device run (ThreadAffinity.h); null:
  /// on their own mask.
  virtual DevicePlacementTy *getHostPlacement() { return nullptr; }
};

} // namespace offloadio

#endif // OFFLOADIO_IO_IODEVICE_H

// SPDX-License-Identifier: Apache-2.0
//
// DeviceIOServiceTy: the file transfers of one device, as the device
// framework sees them. GenericDeviceTy depends on this interface only; the
// plugin installs the implementation (DeviceIOTy, DeviceIO.h), which owns
// the file engine.
#ifndef OFFLOADIO_DEVICEIOSERVICE_H
#define OFFLOADIO_DEVICEIOSERVICE_H

#include <cstddef>

namespace offloadio {

/// What a device asks of its file transfers.
class DeviceIOServiceTy {
public:
  virtual ~DeviceIOServiceTy();

  /// Begin freeing [Ptr, Ptr + Size): wait until no file transfer in flight
  /// uses it, and hold transfers submitted meanwhile until endFree. Returns
  /// whether it had to wait.
  virtual bool beginFree(const void *Ptr, size_t Size) = 0;
  /// End the free that beginFree(\p Ptr, \p Size) began.
  virtual void endFree(const void *Ptr, size_t Size) = 0;
  /// Stop the file transfers and their workers, which hold the device's
  /// streams and buffers: before the device releases those. Later transfers
  /// start them again.
  virtual void stop() = 0;
};

} // namespace offloadio

#endif // OFFLOADIO_DEVICEIOSERVICE_H

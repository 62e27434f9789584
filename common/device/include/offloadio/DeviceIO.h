// SPDX-License-Identifier: Apache-2.0
//
// DeviceIOTy: the file service of one device (DeviceIOServiceTy). It owns
// what the file engine keeps of the device: the memory transfers in flight
// use (which a free waits for), the device as the engine sees it, and the
// engine, built on first use.
#ifndef OFFLOADIO_DEVICEIO_H
#define OFFLOADIO_DEVICEIO_H

#include "offloadio/DeviceIOAdapter.h"
#include "offloadio/DeviceIOService.h"
#include "offloadio/Error.h"
#include "offloadio/io/IOBusyMemory.h"
#include "offloadio/io/IOConfig.h"

#include "llvm/ADT/FunctionExtras.h"

#include <memory>
#include <mutex>

namespace offloadio {

class GenericDeviceTy;
class IOEngineTy;
class IOWorkerPoolTy;
class SysTy;

/// The file engine of a device, with the bookkeeping it shares with the
/// device.
class DeviceIOTy final : public DeviceIOServiceTy {
public:
  /// The file workers for an engine that asks for a number of them.
  using WorkerPoolFnTy =
      llvm::unique_function<IOWorkerPoolTy &(const IOConfigTy &)>;

  /// Engines of \p Device make their syscalls through \p Sys and run on
  /// the workers \p Workers gives.
  DeviceIOTy(GenericDeviceTy &Device, SysTy &Sys, WorkerPoolFnTy Workers);
  ~DeviceIOTy() override;

  bool beginFree(const void *Ptr, size_t Size) override {
    return Busy.beginFree(Ptr, Size);
  }
  void endFree(const void *Ptr, size_t Size) override {
    Busy.endFree(Ptr, Size);
  }
  void stop() override;

  /// The device's file engine, created on first use (with the backend's
  /// fastpath, if it has one).
  Expected<IOEngineTy &> getEngine();
  /// Memory that file transfers in flight use.
  IOBusyMemoryTy &getBusyMemory() { return Busy; }
  /// The device as the file engine sees it.
  DeviceIOAdapterTy &getAdapter() { return Adapter; }

private:
  GenericDeviceTy &Device;
  SysTy &Sys;
  WorkerPoolFnTy Workers;
  /// Declared before the engine, whose requests hold markings in it.
  IOBusyMemoryTy Busy;
  /// The device as the engine sees it; outlives the engine.
  DeviceIOAdapterTy Adapter;
  std::mutex EngineLock;
  std::unique_ptr<IOEngineTy> Engine;
};

} // namespace offloadio

#endif // OFFLOADIO_DEVICEIO_H

// SPDX-License-Identifier: Apache-2.0
#include "offloadio/DeviceIO.h"
#include "offloadio/Device.h"
#include "offloadio/io/IOEngine.h"

using namespace offloadio;

DeviceIOServiceTy::~DeviceIOServiceTy() = default;

DeviceIOTy::DeviceIOTy(GenericDeviceTy &Device, SysTy &Sys,
                       WorkerPoolFnTy Workers)
    : Device(Device), Sys(Sys), Workers(std::move(Workers)),
      Adapter(Device, Busy) {}

DeviceIOTy::~DeviceIOTy() = default;

Expected<IOEngineTy &> DeviceIOTy::getEngine() {
  std::lock_guard<std::mutex> Guard(EngineLock);
  if (!Engine) {
    IOConfigTy Config = IOConfigTy::fromEnv();
    Engine = std::make_unique<IOEngineTy>(Adapter, Sys, Device.getIOFastpath(),
                                          Config, Workers(Config));
  }
  return *Engine;
}

void DeviceIOTy::stop() {
  std::lock_guard<std::mutex> Guard(EngineLock);
  Engine.reset();
}

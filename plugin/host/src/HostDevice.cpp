// SPDX-License-Identifier: Apache-2.0
#include "HostDevice.h"
#include "HostImage.h"
#include "HostKernel.h"
#include "HostStream.h"

#include "offloadio/Plugin.h"

#include "llvm/Support/Format.h"

#include <cstdlib>
#include <thread>

using namespace offloadio;
using namespace offloadio::host;

HostDeviceTy::~HostDeviceTy() {
  // Freeing host memory cannot fail.
  llvm::consumeError(freeLeakedMemory());
}

Error HostDeviceTy::initImpl(DeviceLimitsTy &L) {
  // A host kernel is one call on one thread; its teams and threads are
  // libomp's business inside the image. One team of one thread is what
  // the plugin launches, and what the stock x86_64 plugin reports.
  L.MaxTeams = 1;
  L.MaxThreads = 1;
  L.DefaultTeams = 1;
  L.DefaultThreads = 1;
  L.HostCanAccessDeviceMemory = true;
  return Error::success();
}

Error HostDeviceTy::deinitImpl() { return Error::success(); }

Expected<std::unique_ptr<DeviceImageTy>>
HostDeviceTy::loadImageImpl(const __tgt_device_image &TgtImage,
                            int32_t ImageId) {
  auto Image = HostImageTy::load(TgtImage, ImageId, DeviceId);
  if (!Image)
    return Image.takeError();
  return std::unique_ptr<DeviceImageTy>(std::move(*Image));
}

Expected<std::unique_ptr<GenericKernelTy>>
HostDeviceTy::constructKernelImpl(DeviceImageTy &Image, llvm::StringRef Name) {
  auto Fn = static_cast<HostImageTy &>(Image).lookup(Name);
  if (!Fn)
    return Fn.takeError();
  auto Config = readKernelConfig(Image, Name);
  if (!Config)
    return Config.takeError();
  // Host images record no mode. The stock x86_64 plugin of every version
  // calls each kernel Generic, and so does its launch line; within this
  // device's one team of one thread the mode changes no geometry, and
  // under libomptarget 18 a bare kernel's clauses are taken in any mode.
  Config->ExecMode = ExecModeTy::Generic;
  return std::make_unique<HostKernelTy>(Image, Name.str(), *Fn, *Config);
}

Expected<void *> HostDeviceTy::getGlobalAddressImpl(DeviceImageTy &Image,
                                                    llvm::StringRef Name,
                                                    size_t Size) {
  return static_cast<HostImageTy &>(Image).lookup(Name);
}

Expected<bool> HostDeviceTy::writeImageGlobalImpl(DeviceImageTy &,
                                                  llvm::StringRef, const void *,
                                                  size_t) {
  // Host images are built without the OpenMP device runtime: there is no
  // environment global to fill.
  return false;
}

Expected<void *> HostDeviceTy::allocateImpl(size_t Size, AllocKindTy Kind) {
  // 64-byte alignment: device allocators hand out at least cache-line
  // aligned memory and vectorised kernels rely on it.
  size_t Rounded = (Size + 63) & ~size_t(63);
  void *Ptr = std::aligned_alloc(64, Rounded);
  if (!Ptr)
    return makeError(ErrorCode::OutOfResources,
                     "aligned_alloc of {0} bytes of {1} memory on device {2} "
                     "failed",
                     Size, allocKindName(Kind), DeviceId);
  return Ptr;
}

Error HostDeviceTy::freeImpl(void *Ptr, size_t, AllocKindTy) {
  std::free(Ptr);
  return Error::success();
}

Expected<std::unique_ptr<StreamTy>> HostDeviceTy::createStreamImpl() {
  return std::make_unique<HostStreamTy>(&getPinnedPool(),
                                        unsigned(getDeviceId()));
}

Expected<std::unique_ptr<EventTy>> HostDeviceTy::createEventImpl() {
  return std::make_unique<HostEventTy>();
}

Error HostDeviceTy::initDeviceInfoImpl(__tgt_device_info &DeviceInfo) {
  // No vendor context exists; interop users get the device object itself.
  DeviceInfo.Context = nullptr;
  DeviceInfo.Device = this;
  return Error::success();
}

void HostDeviceTy::printInfoImpl(llvm::raw_ostream &OS) {
  auto [Live, Bytes] = getAllocationUsage();
  printInfoLine(OS, "Device type:", "host CPU (offload-io reference backend)");
  printInfoLine(OS, "Hardware threads:",
                llvm::Twine(std::thread::hardware_concurrency()));
  printInfoLine(OS, "Live allocations:",
                llvm::Twine(Live) + " (" + llvm::Twine(Bytes) + " bytes)");
}

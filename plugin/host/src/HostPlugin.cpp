// SPDX-License-Identifier: Apache-2.0
//
// The x86_64 host plugin: libomptarget.rtl.x86_64.nextgen.so.
#include "HostDevice.h"
#include "HostImage.h"

#include "offloadio/Envar.h"
#include "offloadio/Plugin.h"

using namespace offloadio;
using namespace offloadio::host;

namespace {

class HostPluginTy final : public GenericPluginTy {
public:
  HostPluginTy() : GenericPluginTy("x86_64") {}

protected:
  Expected<int32_t> initImpl() override {
    // Four devices like the stock plugin; more or fewer for tests.
    return int32_t(readIntEnv("OFFLOADIO_HOST_NUM_DEVICES", 4, 1, 64));
  }

  Expected<std::unique_ptr<GenericDeviceTy>>
  createDeviceImpl(int32_t DeviceId) override {
    return std::make_unique<HostDeviceTy>(*this, DeviceId);
  }

  // Host memory is already accessible to a CPU "device". mlock would only
  // add RLIMIT_MEMLOCK failures (8 MiB by default for users) without making
  // any copy faster, so locking is bookkeeping in the map.
  Expected<void *> pinHostMemoryImpl(void *HstPtr, size_t Size) override {
    return HstPtr;
  }
  Error unpinHostMemoryImpl(void *HstPtr, void *DevAccessiblePtr,
                            size_t Size) override {
    return Error::success();
  }

  bool isImageCompatibleImpl(const __tgt_device_image &Image,
                             llvm::StringRef Arch) override {
    llvm::StringRef Bytes(static_cast<const char *>(Image.ImageStart),
                          static_cast<const char *>(Image.ImageEnd) -
                              static_cast<const char *>(Image.ImageStart));
    return isHostImage(Bytes);
  }
};

} // namespace

std::unique_ptr<GenericPluginTy> offloadio::createPlugin() {
  return std::make_unique<HostPluginTy>();
}

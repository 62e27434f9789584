// SPDX-License-Identifier: Apache-2.0
//
// The x86_64 host plugin: libomptarget.rtl.x86_64.nextgen.so.
#include "HostDevice.h"
#include "HostImage.h"
#include "HostPinning.h"
#include "HostSettings.h"

#include "offloadio/Plugin.h"

#include <unistd.h>

using namespace offloadio;
using namespace offloadio::host;

namespace {

class HostPluginTy final : public GenericPluginTy {
public:
  HostPluginTy()
      : GenericPluginTy("x86_64"), Pinning(hostPageSize(), PinningSys) {}
  ~HostPluginTy() override {
    // The map's own destructor would run after Pinning is gone.
    llvm::consumeError(getPinnedMap().releaseAll());
  }

protected:
  Expected<int32_t> initImpl() override {
    return int32_t(HostSettingsTy::fromEnv().NumDevices);
  }

  Expected<std::unique_ptr<GenericDeviceTy>>
  createDeviceImpl(int32_t DeviceId) override {
    return std::make_unique<HostDeviceTy>(*this, DeviceId);
  }

  // Host memory is already accessible to a CPU "device", but a lock must
  // fail where a GPU's would: the range must be mapped read-write memory,
  // and its pages are mlocked, so RLIMIT_MEMLOCK applies as it does to a
  // driver's pinning.
  Expected<void *> pinHostMemoryImpl(void *HstPtr, size_t Size) override {
    if (auto Err = Pinning.pin(HstPtr, Size))
      return std::move(Err);
    return HstPtr;
  }
  Error unpinHostMemoryImpl(void *HstPtr, void *DevAccessiblePtr,
                            size_t Size) override {
    return Pinning.unpin(HstPtr, Size);
  }

  bool isImageCompatibleImpl(const __tgt_device_image &Image,
                             llvm::StringRef Arch) override {
    llvm::StringRef Bytes(static_cast<const char *>(Image.ImageStart),
                          static_cast<const char *>(Image.ImageEnd) -
                              static_cast<const char *>(Image.ImageStart));
    return isHostImage(Bytes);
  }

private:
  /// The page size, for page-granular locking; 4 KiB if the system cannot
  /// say (sysconf does not fail for _SC_PAGESIZE on Linux).
  static size_t hostPageSize() {
    long Size = sysconf(_SC_PAGESIZE);
    return Size > 0 ? size_t(Size) : 4096;
  }

  /// The system calls of Pinning; declared first, so that it outlives it.
  HostPinningSysTy PinningSys;
  HostPinningTy Pinning;
};

} // namespace

std::unique_ptr<GenericPluginTy> offloadio::createPlugin() {
  return std::make_unique<HostPluginTy>();
}

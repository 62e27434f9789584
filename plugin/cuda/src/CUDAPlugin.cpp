// SPDX-License-Identifier: Apache-2.0
//
// The CUDA plugin: libomptarget.rtl.cuda.nextgen.so. Discovers devices
// through the driver API, accepts cubin images the devices can run, and pins
// host memory for all of its devices.
#include "CUDAApi.h"
#include "CUDADevice.h"
#include "CUDAHostRegistry.h"
#include "CUDAImage.h"

#include "offloadio/Plugin.h"

#include <unistd.h>

#include <mutex>
#include <vector>

using namespace offloadio;
using namespace offloadio::cuda;

namespace {

class CUDAPluginTy final : public GenericPluginTy {
public:
  CUDAPluginTy() : GenericPluginTy("cuda") {}
  ~CUDAPluginTy() override {
    // The base's pinned map would unpin what is left through our hooks
    // after this class is gone; do it while the registry still exists.
    llvm::consumeError(getPinnedMap().releaseAll());
  }

protected:
  Expected<int32_t> initImpl() override;
  Expected<std::unique_ptr<GenericDeviceTy>>
  createDeviceImpl(int32_t DeviceId) override;
  bool isImageCompatibleImpl(const __tgt_device_image &Image,
                             llvm::StringRef Arch) override;
  llvm::StringRef getJITTripleImpl() const override {
    return "nvptx64-nvidia-cuda";
  }
  bool isBitcodeCompatibleImpl(llvm::StringRef CPU,
                               llvm::StringRef Arch) override;
  Expected<void *> pinHostMemoryImpl(void *HstPtr, size_t Size) override;
  Error unpinHostMemoryImpl(void *HstPtr, void *DevAccessiblePtr,
                            size_t Size) override;
  bool isDataExchangableImpl(int32_t SrcId, int32_t DstId) override;
  /// cuInit: a child forked afterwards cannot use the driver.
  bool vendorRuntimeStartsAtInit() const override { return true; }

private:
  /// Report why the plugin has no devices; the plugin then loads quietly
  /// with 0 devices and libomptarget moves on.
  int32_t noDevices(Error Why);

  /// The context host registrations are made in (they are PORTABLE, so
  /// valid for every context): device 0's primary context, retained on
  /// first use and kept for the plugin's lifetime.
  Error activatePinningContext();

  std::unique_ptr<CUDAApiTy> Api;
  /// Driver handles of the devices, by plugin-local number.
  std::vector<CUdevice> CUDevices;
  /// Compute capability of each device, for the image check.
  std::vector<std::pair<int, int>> ComputeCapabilities;

  /// Host memory registrations shared by every device (null without a
  /// driver).
  std::unique_ptr<CUDAHostRegistryTy> Registry;
  /// Guards the lazy retain of PinContext.
  std::mutex PinContextLock;
  CUcontext PinContext = nullptr;
};

int32_t CUDAPluginTy::noDevices(Error Why) {
  getInfo().print(~0u, -1, "no CUDA devices available: {0}",
                  takeErrorMessage(std::move(Why)));
  Registry.reset();
  Api.reset();
  return 0;
}

Expected<int32_t> CUDAPluginTy::initImpl() {
  auto Loaded = CUDAApiTy::load();
  if (!Loaded)
    return noDevices(Loaded.takeError());
  Api = std::move(*Loaded);
  long Page = sysconf(_SC_PAGESIZE);
  Registry = std::make_unique<CUDAHostRegistryTy>(
      *Api, Page > 0 ? size_t(Page) : size_t(4096));

  // A driver without a usable GPU (none installed, none visible through
  // CUDA_VISIBLE_DEVICES, a driver/kernel mismatch) is no error for an
  // OpenMP program: it just has no cuda devices.
  if (auto Err = checkCU(*Api, Api->cuInit(0), "cuInit", "flags 0"))
    return noDevices(std::move(Err));
  int Count = 0;
  if (auto Err = checkCU(*Api, Api->cuDeviceGetCount(&Count),
                         "cuDeviceGetCount", "after cuInit"))
    return noDevices(std::move(Err));
  if (Count <= 0)
    return noDevices(
        makeError(ErrorCode::NotFound, "the driver reports no CUDA devices"));

  for (int I = 0; I < Count; ++I) {
    CUdevice Device;
    if (auto Err = checkCU(*Api, Api->cuDeviceGet(&Device, I), "cuDeviceGet",
                           "ordinal {0} of {1}", I, Count))
      return std::move(Err);
    int Major = 0, Minor = 0;
    if (auto Err = checkCU(
            *Api,
            Api->cuDeviceGetAttribute(
                &Major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, Device),
            "cuDeviceGetAttribute", "COMPUTE_CAPABILITY_MAJOR of device {0}",
            I))
      return std::move(Err);
    if (auto Err = checkCU(
            *Api,
            Api->cuDeviceGetAttribute(
                &Minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, Device),
            "cuDeviceGetAttribute", "COMPUTE_CAPABILITY_MINOR of device {0}",
            I))
      return std::move(Err);
    CUDevices.push_back(Device);
    ComputeCapabilities.emplace_back(Major, Minor);
  }
  return int32_t(Count);
}

Expected<std::unique_ptr<GenericDeviceTy>>
CUDAPluginTy::createDeviceImpl(int32_t DeviceId) {
  return std::make_unique<CUDADeviceTy>(*this, DeviceId, *Api, *Registry,
                                        CUDevices[DeviceId]);
}

bool CUDAPluginTy::isImageCompatibleImpl(const __tgt_device_image &Image,
                                         llvm::StringRef Arch) {
  if (!Api || CUDevices.empty())
    return false;
  llvm::StringRef Bytes(static_cast<const char *>(Image.ImageStart),
                        static_cast<const char *>(Image.ImageEnd) -
                            static_cast<const char *>(Image.ImageStart));
  if (!isCubin(Bytes))
    return false;
  // clang 16 records the target in the OffloadBinary ("sm_90"); without it
  // (or with something that is no CUDA architecture) the cubin's ELF flags
  // tell.
  std::optional<CUDAArchTy> Target = parseCUDAArch(Arch);
  if (!Target)
    Target = readCubinArch(Bytes);
  if (!Target) {
    getInfo().print(InfoPluginKernel, -1,
                    "image at {0}: cannot tell its architecture ('{1}'), "
                    "leaving the check to the driver",
                    Image.ImageStart, Arch);
    return true;
  }
  // v16 asks once per plugin, not per device: accept only what every
  // device can run, so that no device fails to load an accepted image.
  for (size_t I = 0; I < ComputeCapabilities.size(); ++I) {
    auto [Major, Minor] = ComputeCapabilities[I];
    if (!isArchCompatible(*Target, Major, Minor)) {
      getInfo().print(InfoPluginKernel, int32_t(I),
                      "image for sm_{0}{1}{2} cannot run on compute "
                      "capability {3}.{4}",
                      Target->Major, Target->Minor,
                      Target->ArchSpecific ? "a" : "", Major, Minor);
      return false;
    }
  }
  return true;
}

bool CUDAPluginTy::isBitcodeCompatibleImpl(llvm::StringRef CPU,
                                           llvm::StringRef Arch) {
  if (!Api || CUDevices.empty())
    return false;
  // The module is compiled for each device's own architecture, so any
  // earlier one's runs; one made for a later architecture (or for an
  // architecture-specific one) may use what the device lacks.
  std::optional<CUDAArchTy> Target = parseCUDAArch(Arch);
  if (!Target)
    Target = parseCUDAArch(CPU);
  if (!Target)
    return true;
  for (size_t I = 0; I < ComputeCapabilities.size(); ++I) {
    auto [Major, Minor] = ComputeCapabilities[I];
    bool Runs = Target->ArchSpecific
                    ? Target->Major == Major && Target->Minor == Minor
                    : std::make_pair(Target->Major, Target->Minor) <=
                          std::make_pair(Major, Minor);
    if (!Runs) {
      getInfo().print(InfoPluginKernel, int32_t(I),
                      "bitcode image for sm_{0}{1}{2} cannot run on compute "
                      "capability {3}.{4}",
                      Target->Major, Target->Minor,
                      Target->ArchSpecific ? "a" : "", Major, Minor);
      return false;
    }
  }
  return true;
}

bool CUDAPluginTy::isDataExchangableImpl(int32_t SrcId, int32_t DstId) {
  if (!Api)
    return false;
  CUdevice Src = CUDevices[SrcId], Dst = CUDevices[DstId];
  if (Src == Dst)
    return true;
  int CanAccess = 0;
  if (auto Err = checkCU(*Api, Api->cuDeviceCanAccessPeer(&CanAccess, Src, Dst),
                         "cuDeviceCanAccessPeer", "device {0} to device {1}",
                         SrcId, DstId)) {
    getInfo().error(SrcId, takeErrorMessage(std::move(Err)));
    return false;
  }
  return CanAccess != 0;
}

Error CUDAPluginTy::activatePinningContext() {
  if (!Api)
    return makeError(ErrorCode::InvalidDevice,
                     "cannot pin host memory: the cuda plugin has no devices");
  CUcontext Context;
  {
    std::lock_guard<std::mutex> Guard(PinContextLock);
    if (!PinContext)
      if (auto Err = checkCU(
              *Api, Api->cuDevicePrimaryCtxRetain(&PinContext, CUDevices[0]),
              "cuDevicePrimaryCtxRetain",
              "device 0, for host memory registration"))
        return Err;
    Context = PinContext;
  }
  return checkCU(*Api, Api->cuCtxSetCurrent(Context), "cuCtxSetCurrent",
                 "primary context {0} of device 0, for host memory "
                 "registration",
                 Context);
}

Expected<void *> CUDAPluginTy::pinHostMemoryImpl(void *HstPtr, size_t Size) {
  // Exact byte ranges here; the registry deals with the driver's pages.
  if (auto Err = activatePinningContext())
    return std::move(Err);
  return Registry->pin(HstPtr, Size);
}

Error CUDAPluginTy::unpinHostMemoryImpl(void *HstPtr, void *DevAccessiblePtr,
                                        size_t Size) {
  if (auto Err = activatePinningContext())
    return Err;
  return Registry->unpin(HstPtr, Size);
}

} // namespace

std::unique_ptr<GenericPluginTy> offloadio::createPlugin() {
  return std::make_unique<CUDAPluginTy>();
}

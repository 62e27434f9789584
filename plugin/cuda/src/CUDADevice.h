// SPDX-License-Identifier: Apache-2.0
//
// One CUDA device: its primary context, its memory and the translation of
// the framework's device hooks to driver calls.
#ifndef OFFLOADIO_CUDA_CUDADEVICE_H
#define OFFLOADIO_CUDA_CUDADEVICE_H

#include "CUDAApi.h"
#include "CUDAJIT.h"
#include "CUDASettings.h"

#include "offloadio/Device.h"

#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>

namespace offloadio {
namespace cuda {

class CUDAFastpathTy;
class CUDAHostRegistryTy;

/// One CUDA device of the plugin.
class CUDADeviceTy final : public GenericDeviceTy {
public:
  CUDADeviceTy(GenericPluginTy &Plugin, int32_t DeviceId, const CUDAApiTy &Api,
               const CUDAHostRegistryTy &Registry, CUdevice Device);
  ~CUDADeviceTy() override;


  /// Make the device's primary context current on the calling thread.
  /// Threads that enter from libomptarget may have no current context, or
  /// another device's, so every entry that calls the driver does this.
  Error setContext() const;

  /// The driver's device handle.
  CUdevice getCUDevice() const { return Device; }
  /// "sm_<major><minor>", from the compute capability read at init.
  std::string getArchName() const {
    return "sm_" + std::to_string(ComputeMajor) + std::to_string(ComputeMinor);
  }
  /// The retained primary context (null before init / after deinit).
  CUcontext getContext() const { return Context; }
  /// Dynamic shared memory given to every launch
  /// (LIBOMPTARGET_SHARED_MEMORY_SIZE).
  uint32_t getDynamicSharedMemory() const {
    return getDeviceEnvironment().DynamicMemSize;
  }

protected:
  /// cuMemcpyAsync from pageable memory returns once the data is captured
  /// in the driver's staging memory; to pageable memory, once it is done.
  /// The framework hands the driver unlocked copies up to this size.
  size_t getPageableCaptureLimit() const override { return 64 << 10; }
  Error initImpl(DeviceLimitsTy &Limits) override;
  Error deinitImpl() override;
  JITTargetTy *getJITTargetImpl() override { return &JITTarget; }
  Expected<std::unique_ptr<DeviceImageTy>>
  loadImageImpl(const __tgt_device_image &TgtImage, int32_t ImageId) override;
  Expected<std::unique_ptr<GenericKernelTy>>
  constructKernelImpl(DeviceImageTy &Image, llvm::StringRef Name) override;
  Expected<void *> getGlobalAddressImpl(DeviceImageTy &Image,
                                        llvm::StringRef Name,
                                        size_t Size) override;
  Expected<bool> writeImageGlobalImpl(DeviceImageTy &Image,
                                      llvm::StringRef Name, const void *Data,
                                      size_t Size) override;
  Expected<void *> allocateImpl(size_t Size, AllocKindTy Kind) override;
  Error freeImpl(void *Ptr, size_t Size, AllocKindTy Kind) override;
  Expected<std::unique_ptr<StreamTy>> createStreamImpl() override;
  Expected<std::unique_ptr<EventTy>> createEventImpl() override;
  Error initDeviceInfoImpl(__tgt_device_info &DeviceInfo) override;
  void printInfoImpl(llvm::raw_ostream &OS) override;
  Error dataExchangeImpl(const void *SrcPtr, GenericDeviceTy &DstDevice,
                         void *DstPtr, size_t Size, StreamTy &Stream) override;
  /// cuDeviceCanAccessPeer, then cuCtxEnablePeerAccess from this device's
  /// context: peer copies then go over the devices' own link (NVLink or
  /// PCIe peer to peer) instead of through host memory.
  Expected<bool> enablePeerAccessImpl(GenericDeviceTy &Peer) override;
  /// cuFile (GPUDirect Storage); whether it is usable is decided per
  /// request, so that its absence costs nothing until a request could use
  /// it.
  IOFastpathTy *getIOFastpathImpl() override;
  /// cuDeviceGetPCIBusId.
  Expected<std::string> getPCIAddressImpl() override;
  /// cuPointerGetAttributes: device or managed memory of this device in
  /// its primary context is ThisDevice, bounded by the driver's
  /// allocation range; memory of another device, or of this device in
  /// another context, is Elsewhere; host memory and pointers the driver
  /// does not know are Unknown.
  Expected<ForeignMemoryTy> queryForeignMemoryImpl(const void *Ptr) override;

private:
  /// Read integer attribute \p Attr of the device.
  Expected<int> getAttribute(CUdevice_attribute Attr, const char *Name) const;
  /// Apply Settings.StackSize / Settings.HeapSize when set.
  Error applyContextLimits();

  const CUDAApiTy &Api;
  /// The plugin's host registrations, which streams consult to split
  /// copies.
  const CUDAHostRegistryTy &Registry;
  const CUdevice Device;
  CUcontext Context = nullptr;

  // Properties read at init.
  std::string Name;
  int ComputeMajor = 0;
  int ComputeMinor = 0;
  int NumSMs = 0;
  size_t TotalMemory = 0;
  /// Kernels launched again on a stream are replayed from graphs
  /// (OFFLOADIO_CUDA_GRAPHS, and the driver has the functions).
  bool GraphLaunches = false;
  /// The device's environment variables, read at init.
  CUDASettingsTy Settings;
  /// The device as the JIT of bitcode images compiles for it.
  CUDAJITTargetTy JITTarget{Api, *this};

  /// The file engine's fastpath, created with the first engine and kept
  /// across deinit/init (it only caches what cuFile refused). deinit() stops
  /// the engine before this goes away.
  std::mutex FastpathLock;
  std::unique_ptr<CUDAFastpathTy> Fastpath;
};

} // namespace cuda
} // namespace offloadio

#endif // OFFLOADIO_CUDA_CUDADEVICE_H

// SPDX-License-Identifier: Apache-2.0
//
// One GPU agent as an offload device: its memory pools and allocations, AQL
// queues, kernel-argument memory, images and properties.
//
// Memory kinds: DEVICE and DEFAULT come from the GPU's coarse-grained global
// pool (device memory), granted to peer GPUs that can reach it so that
// device-to-device copies work; HOST and SHARED come from the CPU's
// fine-grained pool, granted to every GPU, so host and device use the same
// address.
#ifndef OFFLOADIO_AMDGPU_AMDGPUDEVICE_H
#define OFFLOADIO_AMDGPU_AMDGPUDEVICE_H

#include "AMDGPUContext.h"
#include "AMDGPUFastpath.h"
#include "AMDGPUJIT.h"
#include "AMDGPUKernargPool.h"
#include "AMDGPUKernel.h"
#include "AMDGPUQueue.h"
#include "AMDGPUSettings.h"

#include "offloadio/Device.h"

#include <atomic>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

namespace offloadio {
namespace amdgpu {

class AMDGPUImageTy;

/// One GPU.
class AMDGPUDeviceTy final : public GenericDeviceTy {
public:
  /// GPU \p DeviceId of \p Ctx. Its kernel-argument arenas reserve in
  /// \p Budget, and its file fastpath makes its system calls through
  /// \p Sys; both must outlive the device.
  AMDGPUDeviceTy(GenericPluginTy &Plugin, int32_t DeviceId,
                 AMDGPUContextTy &Ctx, PinnedBudgetTy &Budget, SysTy &Sys)
      : GenericDeviceTy(Plugin, DeviceId), Ctx(Ctx), Gpu(Ctx.Gpus[DeviceId]),
        Budget(Budget), Sys(Sys) {}
  ~AMDGPUDeviceTy() override;

  /// The GPU agent.
  hsa_agent_t getAgent() const { return Gpu.Agent; }
  /// Kernel argument memory of this GPU.
  AMDGPUKernargPoolTy &getKernargPool() { return *Kernargs; }
  /// Largest group segment (LDS) a work-group may use.
  uint32_t getMaxGroupSegmentSize() const { return MaxGroupSegmentSize; }
  /// LIBOMPTARGET_STACK_SIZE, 0 when unset (DeviceRuntimeABITy's
  /// privateSegmentSize decides what kernels with dynamic stacks get).
  uint64_t getStackSizeSetting() const { return Settings.DynamicStackSize; }

protected:
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
  /// AIS (AMDGPUFastpath.h) when the runtime has it, else null.
  IOFastpathTy *getIOFastpathImpl() override;
  /// The agent's PCI domain and bus/device/function
  /// (HSA_AMD_AGENT_INFO_DOMAIN, HSA_AMD_AGENT_INFO_BDFID).
  Expected<std::string> getPCIAddressImpl() override;
  /// hsa_amd_pointer_info: pool memory this GPU owns is ThisDevice, bounded
  /// by its allocation; memory another GPU agent owns is Elsewhere; host
  /// memory (the CPU's pools, locked memory) and pointers the runtime does
  /// not know are Unknown.
  Expected<ForeignMemoryTy> queryForeignMemoryImpl(const void *Ptr) override;

private:
  /// Query agent attribute \p Attr (an hsa_agent_info_t or
  /// hsa_amd_agent_info_t value) into \p Value.
  template <typename T>
  Error queryAgent(int Attr, T &Value, const char *What) const {
    // An int, not hsa_agent_info_t: the AMD attributes lie outside that
    // enum's range, and holding one in a variable of the enum type is
    // undefined behaviour (UBSan reports the load).
    return checkHSA(Ctx.Api,
                    Ctx.Api.hsa_agent_get_info(
                        Gpu.Agent, static_cast<hsa_agent_info_t>(Attr), &Value),
                    "hsa_agent_get_info", "{0} of device {1}", What, DeviceId);
  }
  /// Copy \p Size host bytes to device address \p Dst and wait, through a
  /// fine-grained staging buffer (image loading only; not a hot path).
  Error writeDeviceSync(void *Dst, const void *Src, size_t Size);

  AMDGPUContextTy &Ctx;
  const AMDGPUAgentInfoTy &Gpu;
  /// The GPU as the JIT of bitcode images compiles for it.
  AMDGPUJITTargetTy JITTarget{Gpu.Name, getServices().Info, getDeviceId()};
  /// The pinned budget the kernel-argument arenas reserve in.
  PinnedBudgetTy &Budget;
  /// The system calls of the file fastpath.
  SysTy &Sys;

  // Properties read at initialisation.
  std::string ProductName;
  hsa_profile_t Profile = HSA_PROFILE_BASE;
  uint32_t ComputeUnits = 0;
  uint32_t WavefrontSize = 0;
  uint32_t MaxWorkgroupSize = 0;
  uint32_t MaxClockMHz = 0;
  uint64_t DevicePoolSize = 0;
  uint32_t MaxGroupSegmentSize = 64 * 1024;
  /// Packets per queue: Settings.QueueSize as a power of two that the
  /// agent allows.
  uint32_t QueueSize = 0;
  /// The device's environment variables, read at init.
  AMDGPUSettingsTy Settings;

  std::vector<std::unique_ptr<AMDGPUQueueTy>> Queues;
  /// Round-robin assignment of new streams to queues.
  std::atomic<unsigned> NextQueue{0};
  std::unique_ptr<AMDGPUKernargPoolTy> Kernargs;
  /// The file engine's fastpath, made on first use; kept for the device's
  /// life (engines come and go with init/deinit).
  std::unique_ptr<AMDGPUFastpathTy> Fastpath;

};

} // namespace amdgpu
} // namespace offloadio

#endif // OFFLOADIO_AMDGPU_AMDGPUDEVICE_H

// SPDX-License-Identifier: Apache-2.0
//
// The amdgpu plugin: libomptarget.rtl.amdgpu.nextgen.so. Discovers the HSA
// runtime and its GPU agents, accepts AMDGPU images built for one of them,
// and pins host memory for all of them.
#include "AMDGPUContext.h"
#include "AMDGPUDevice.h"
#include "AMDGPUImage.h"

#include "offloadio/Plugin.h"

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <unistd.h>

using namespace offloadio;
using namespace offloadio::amdgpu;

namespace {

/// Collects the agents of hsa_iterate_agents.
struct AgentScanTy {
  const HSAApiTy *Api = nullptr;
  std::vector<hsa_agent_t> Cpus;
  std::vector<hsa_agent_t> Gpus;
  hsa_status_t Status = HSA_STATUS_SUCCESS;
};

/// Collects the global pools of one agent.
struct PoolScanTy {
  const HSAApiTy *Api = nullptr;
  std::vector<std::pair<hsa_amd_memory_pool_t, uint32_t>> Global;
};

hsa_status_t scanPools(hsa_amd_memory_pool_t Pool, void *Data) {
  auto &Scan = *static_cast<PoolScanTy *>(Data);
  hsa_amd_segment_t Segment;
  bool AllocAllowed = false;
  uint32_t Flags = 0;
  if (Scan.Api->hsa_amd_memory_pool_get_info(Pool,
                                             HSA_AMD_MEMORY_POOL_INFO_SEGMENT,
                                             &Segment) != HSA_STATUS_SUCCESS ||
      Segment != HSA_AMD_SEGMENT_GLOBAL)
    return HSA_STATUS_SUCCESS;
  if (Scan.Api->hsa_amd_memory_pool_get_info(
          Pool, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED,
          &AllocAllowed) != HSA_STATUS_SUCCESS ||
      !AllocAllowed)
    return HSA_STATUS_SUCCESS;
  if (Scan.Api->hsa_amd_memory_pool_get_info(
          Pool, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &Flags) !=
      HSA_STATUS_SUCCESS)
    return HSA_STATUS_SUCCESS;
  Scan.Global.emplace_back(Pool, Flags);
  return HSA_STATUS_SUCCESS;
}

/// The first pool of \p Scan with all of \p Flags, if any.
std::optional<hsa_amd_memory_pool_t> findPool(const PoolScanTy &Scan,
                                              uint32_t Flags) {
  for (const auto &[Pool, PoolFlags] : Scan.Global)
    if ((PoolFlags & Flags) == Flags)
      return Pool;
  return std::nullopt;
}

class AMDGPUPluginTy final : public GenericPluginTy {
public:
  AMDGPUPluginTy() : GenericPluginTy("amdgpu") {}

protected:
  Expected<int32_t> initImpl() override;

  Expected<std::unique_ptr<GenericDeviceTy>>
  createDeviceImpl(int32_t DeviceId) override {
    // The plugin owns the services its devices use, and hands each device
    // the ones it needs.
    return std::make_unique<AMDGPUDeviceTy>(*this, DeviceId, *Ctx,
                                            getPinnedBudget(), getSys());
  }

  bool isImageCompatibleImpl(const __tgt_device_image &Image,
                             llvm::StringRef Arch) override;
  llvm::StringRef getJITTripleImpl() const override {
    return "amdgcn-amd-amdhsa";
  }
  bool isBitcodeCompatibleImpl(llvm::StringRef CPU,
                               llvm::StringRef Arch) override;
  Expected<void *> pinHostMemoryImpl(void *HstPtr, size_t Size) override;
  Error unpinHostMemoryImpl(void *HstPtr, void *DevAccessiblePtr,
                            size_t Size) override;
  bool isDataExchangableImpl(int32_t SrcId, int32_t DstId) override;
  /// hsa_init: KFD refuses a forked child the parent's device state.
  bool vendorRuntimeStartsAtInit() const override { return true; }

private:
  /// Set up the context; errors mean "no usable GPU".
  Error discover(std::unique_ptr<HSAApiTy> Api);

  std::unique_ptr<AMDGPUContextTy> Ctx;

  /// Host ranges pinned through pinHostMemoryImpl, by start: true when we
  /// locked them, false when the runtime already had them (allocated or
  /// locked by someone else) and unpinning must leave them alone.
  std::mutex PinsLock;
  std::map<void *, bool> Pins;
};

Expected<int32_t> AMDGPUPluginTy::initImpl() {
  // No runtime, or a runtime without GPUs: zero devices, quietly, so that
  // libomptarget moves on. OFFLOADIO_INFO says why.
  auto Api = HSAApiTy::load();
  if (!Api) {
    getInfo().print(~0u, -1, "no devices: {0}",
                    takeErrorMessage(Api.takeError()));
    return 0;
  }
  if (auto Err = discover(std::move(*Api))) {
    getInfo().print(~0u, -1, "no devices: {0}",
                    takeErrorMessage(std::move(Err)));
    Ctx.reset();
    return 0;
  }
  return int32_t(Ctx->Gpus.size());
}

Error AMDGPUPluginTy::discover(std::unique_ptr<HSAApiTy> Loaded) {
  const HSAApiTy &Api = *Loaded;
  if (auto Err = checkHSA(Api, Api.hsa_init(), "hsa_init", "runtime {0}",
                          Api.LibraryPath)) {
    // ROCr's hsa_init fails, typically with
    // HSA_STATUS_ERROR_OUT_OF_RESOURCES, when it cannot open the KFD device
    // of the amdgpu kernel driver: on a machine without an AMD GPU that
    // status is alarming and says nothing useful, so the plain statement
    // comes first and the raw status stays for diagnosis.
    if (access("/dev/kfd", F_OK) != 0 && errno == ENOENT)
      return makeError(ErrorCode::NotFound,
                       "no AMD GPU found: /dev/kfd does not exist ({0})",
                       takeErrorMessage(std::move(Err)));
    return Err;
  }
  auto Context = std::make_unique<AMDGPUContextTy>(std::move(Loaded));

  AgentScanTy Agents;
  Agents.Api = &Api;
  if (auto Err = checkHSA(Api,
                          Api.hsa_iterate_agents(
                              [](hsa_agent_t Agent, void *Data) {
                                auto &Scan = *static_cast<AgentScanTy *>(Data);
                                hsa_device_type_t Type;
                                Scan.Status = Scan.Api->hsa_agent_get_info(
                                    Agent, HSA_AGENT_INFO_DEVICE, &Type);
                                if (Scan.Status != HSA_STATUS_SUCCESS)
                                  return Scan.Status;
                                if (Type == HSA_DEVICE_TYPE_CPU)
                                  Scan.Cpus.push_back(Agent);
                                else if (Type == HSA_DEVICE_TYPE_GPU)
                                  Scan.Gpus.push_back(Agent);
                                return HSA_STATUS_SUCCESS;
                              },
                              &Agents),
                          "hsa_iterate_agents", "agent discovery"))
    return Err;
  if (Agents.Gpus.empty())
    return makeError(ErrorCode::NotFound, "the HSA runtime {0} has no GPU",
                     Api.LibraryPath);
  if (Agents.Cpus.empty())
    return makeError(ErrorCode::NotFound,
                     "the HSA runtime {0} has no CPU agent", Api.LibraryPath);

  // Host memory comes from the first CPU agent's fine-grained pool; kernel
  // arguments from its KERNARG_INIT pool.
  Context->CpuAgent = Agents.Cpus.front();
  PoolScanTy CpuPools;
  CpuPools.Api = &Api;
  if (auto Err = checkHSA(Api,
                          Api.hsa_amd_agent_iterate_memory_pools(
                              Context->CpuAgent, scanPools, &CpuPools),
                          "hsa_amd_agent_iterate_memory_pools", "CPU agent"))
    return Err;
  auto HostPool =
      findPool(CpuPools, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED);
  auto KernargPool =
      findPool(CpuPools, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT);
  if (!HostPool || !KernargPool)
    return makeError(ErrorCode::NotFound,
                     "the CPU agent has no fine-grained{0} memory pool",
                     HostPool ? " kernel-argument" : "");
  Context->HostPool = *HostPool;
  Context->KernargPool = *KernargPool;

  for (hsa_agent_t Agent : Agents.Gpus) {
    AMDGPUAgentInfoTy Info;
    Info.Agent = Agent;
    char Name[64] = {};
    if (auto Err = checkHSA(
            Api, Api.hsa_agent_get_info(Agent, HSA_AGENT_INFO_NAME, Name),
            "hsa_agent_get_info", "name of GPU agent {0}",
            Context->Gpus.size()))
      return Err;
    Info.Name = Name;
    // The first ISA is the agent's own target id.
    struct IsaScanTy {
      const HSAApiTy *Api;
      std::string Name;
    } Isa{&Api, {}};
    hsa_status_t Status = Api.hsa_agent_iterate_isas(
        Agent,
        [](hsa_isa_t I, void *Data) {
          auto &Scan = *static_cast<IsaScanTy *>(Data);
          uint32_t Length = 0;
          if (Scan.Api->hsa_isa_get_info_alt(I, HSA_ISA_INFO_NAME_LENGTH,
                                             &Length) != HSA_STATUS_SUCCESS)
            return HSA_STATUS_SUCCESS;
          std::string Text(Length + 1, '\0');
          if (Scan.Api->hsa_isa_get_info_alt(I, HSA_ISA_INFO_NAME,
                                             Text.data()) != HSA_STATUS_SUCCESS)
            return HSA_STATUS_SUCCESS;
          Text.resize(std::strlen(Text.c_str()));
          Scan.Name = Text;
          return HSA_STATUS_INFO_BREAK;
        },
        &Isa);
    if (Status != HSA_STATUS_INFO_BREAK)
      if (auto Err =
              checkHSA(Api, Status, "hsa_agent_iterate_isas",
                       "GPU agent {0} ({1})", Context->Gpus.size(), Info.Name))
        return Err;
    Info.Target =
        AMDGPUTargetIdTy::parse(Isa.Name.empty() ? Info.Name : Isa.Name).str();
    PoolScanTy Pools;
    Pools.Api = &Api;
    if (auto Err = checkHSA(
            Api,
            Api.hsa_amd_agent_iterate_memory_pools(Agent, scanPools, &Pools),
            "hsa_amd_agent_iterate_memory_pools", "GPU agent {0} ({1})",
            Context->Gpus.size(), Info.Name))
      return Err;
    auto DevicePool =
        findPool(Pools, HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED);
    if (!DevicePool)
      return makeError(ErrorCode::NotFound,
                       "GPU agent {0} ({1}) has no coarse-grained memory pool",
                       Context->Gpus.size(), Info.Name);
    Info.DevicePool = *DevicePool;
    Context->Gpus.push_back(std::move(Info));
    Context->GpuAgents.push_back(Agent);
  }

  // Which GPUs may be granted access to each other's device memory.
  for (auto &Gpu : Context->Gpus) {
    for (auto &Other : Context->Gpus) {
      if (Other.Agent.handle == Gpu.Agent.handle)
        continue;
      hsa_amd_memory_pool_access_t Access =
          HSA_AMD_MEMORY_POOL_ACCESS_NEVER_ALLOWED;
      if (Api.hsa_amd_agent_memory_pool_get_info(
              Other.Agent, Gpu.DevicePool,
              HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS,
              &Access) == HSA_STATUS_SUCCESS &&
          Access != HSA_AMD_MEMORY_POOL_ACCESS_NEVER_ALLOWED)
        Gpu.Peers.push_back(Other.Agent);
    }
  }

  uint64_t Frequency = 0;
  if (auto Err = checkHSA(Api,
                          Api.hsa_system_get_info(
                              HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY, &Frequency),
                          "hsa_system_get_info", "timestamp frequency"))
    return Err;
  Context->TicksPerMs = std::max<uint64_t>(1, Frequency / 1000);
  Ctx = std::move(Context);
  getInfo().print(~0u, -1, "HSA runtime {0}: {1} GPU agent(s)", Api.LibraryPath,
                  Ctx->Gpus.size());
  return Error::success();
}

bool AMDGPUPluginTy::isImageCompatibleImpl(const __tgt_device_image &Image,
                                           llvm::StringRef Arch) {
  if (!Ctx)
    return false;
  llvm::StringRef Bytes(static_cast<const char *>(Image.ImageStart),
                        static_cast<const char *>(Image.ImageEnd) -
                            static_cast<const char *>(Image.ImageStart));
  // The ELF must be an AMDGPU code object whatever the arch string says.
  auto ElfTarget = readImageTarget(Bytes);
  if (!ElfTarget)
    return false;
  AMDGPUTargetIdTy Target =
      Arch.empty() ? *ElfTarget : AMDGPUTargetIdTy::parse(Arch);
  for (const AMDGPUAgentInfoTy &Gpu : Ctx->Gpus)
    if (AMDGPUTargetIdTy::isCompatible(Target,
                                       AMDGPUTargetIdTy::parse(Gpu.Target)))
      return true;
  getInfo().print(~0u, -1, "image for {0} runs on none of the GPUs",
                  Target.str());
  return false;
}

bool AMDGPUPluginTy::isBitcodeCompatibleImpl(llvm::StringRef CPU,
                                             llvm::StringRef Arch) {
  if (!Ctx)
    return false;
  // The module is compiled for each GPU's processor; it must have been
  // made for that processor (its intrinsics and features are).
  llvm::StringRef Made = Arch.empty() ? CPU : Arch;
  if (Made.empty())
    return true;
  AMDGPUTargetIdTy Target = AMDGPUTargetIdTy::parse(Made);
  for (const AMDGPUAgentInfoTy &Gpu : Ctx->Gpus)
    if (AMDGPUTargetIdTy::isCompatible(Target,
                                       AMDGPUTargetIdTy::parse(Gpu.Target)))
      return true;
  getInfo().print(~0u, -1, "bitcode image for {0} runs on none of the GPUs",
                  Target.str());
  return false;
}

bool AMDGPUPluginTy::isDataExchangableImpl(int32_t SrcId, int32_t DstId) {
  if (SrcId == DstId)
    return true;
  // The source device's engine writes the destination's memory, which the
  // destination device grants to the peers that can reach it.
  const auto &Peers = Ctx->Gpus[DstId].Peers;
  hsa_agent_t Src = Ctx->Gpus[SrcId].Agent;
  return llvm::any_of(Peers,
                      [&](hsa_agent_t A) { return A.handle == Src.handle; });
}

Expected<void *> AMDGPUPluginTy::pinHostMemoryImpl(void *HstPtr, size_t Size) {
  const HSAApiTy &Api = Ctx->Api;
  hsa_amd_pointer_info_t Info;
  std::memset(&Info, 0, sizeof(Info));
  Info.size = sizeof(Info);
  if (auto Err = checkHSA(
          Api,
          Api.hsa_amd_pointer_info(HstPtr, &Info, nullptr, nullptr, nullptr),
          "hsa_amd_pointer_info", "{0} ({1} bytes)", HstPtr, Size))
    return std::move(Err);

  auto Host = reinterpret_cast<uintptr_t>(HstPtr);
  if (Info.type == HSA_EXT_POINTER_TYPE_HSA ||
      Info.type == HSA_EXT_POINTER_TYPE_LOCKED) {
    // The runtime already made this memory device-accessible (an HSA
    // allocation, or locked by another runtime): use it as it is, without
    // a second lock that could not be told apart at unlock time.
    auto Base = reinterpret_cast<uintptr_t>(Info.hostBaseAddress);
    if (Host < Base || Host - Base > Info.sizeInBytes ||
        Size > Info.sizeInBytes - (Host - Base))
      return makeError(ErrorCode::Overlap,
                       "cannot lock {0} bytes at {1}: the range runs past "
                       "the {2}-byte {3} region at {4} the HSA runtime "
                       "already manages",
                       Size, HstPtr, Info.sizeInBytes,
                       Info.type == HSA_EXT_POINTER_TYPE_HSA ? "allocated"
                                                             : "locked",
                       Info.hostBaseAddress);
    void *DevPtr = static_cast<char *>(Info.agentBaseAddress) + (Host - Base);
    std::lock_guard<std::mutex> Guard(PinsLock);
    Pins[HstPtr] = false;
    return DevPtr;
  }
  if (Info.type != HSA_EXT_POINTER_TYPE_UNKNOWN)
    return makeError(ErrorCode::Unsupported,
                     "cannot lock {0} bytes at {1}: the HSA runtime knows it "
                     "as graphics-interop or IPC memory (pointer type {2})",
                     Size, HstPtr, unsigned(Info.type));

  // Lock for every GPU with the fine-grained pool's properties. The agent
  // address may differ from HstPtr; devices must use the agent address.
  void *AgentPtr = nullptr;
  if (auto Err = checkHSA(
          Api,
          Api.hsa_amd_memory_lock_to_pool(HstPtr, Size, Ctx->GpuAgents.data(),
                                          int(Ctx->GpuAgents.size()),
                                          Ctx->HostPool, 0, &AgentPtr),
          "hsa_amd_memory_lock_to_pool", "{0} ({1} bytes) for {2} GPUs", HstPtr,
          Size, Ctx->GpuAgents.size()))
    return std::move(Err);
  std::lock_guard<std::mutex> Guard(PinsLock);
  Pins[HstPtr] = true;
  return AgentPtr;
}

Error AMDGPUPluginTy::unpinHostMemoryImpl(void *HstPtr, void *DevAccessiblePtr,
                                          size_t Size) {
  bool LockedByUs;
  {
    std::lock_guard<std::mutex> Guard(PinsLock);
    auto It = Pins.find(HstPtr);
    if (It == Pins.end())
      return makeError(ErrorCode::NotFound,
                       "unpin of {0} ({1} bytes): not pinned by the amdgpu "
                       "plugin",
                       HstPtr, Size);
    LockedByUs = It->second;
    Pins.erase(It);
  }
  if (!LockedByUs)
    return Error::success();
  if (auto Err = checkHSA(Ctx->Api, Ctx->Api.hsa_amd_memory_unlock(HstPtr),
                          "hsa_amd_memory_unlock",
                          "{0} ({1} bytes, agent address {2})", HstPtr, Size,
                          DevAccessiblePtr)) {
    // Still locked: keep the record so that a retry unlocks it.
    std::lock_guard<std::mutex> Guard(PinsLock);
    Pins[HstPtr] = true;
    return Err;
  }
  return Error::success();
}

} // namespace

std::unique_ptr<GenericPluginTy> offloadio::createPlugin() {
  return std::make_unique<AMDGPUPluginTy>();
}

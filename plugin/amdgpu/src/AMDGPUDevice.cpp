// SPDX-License-Identifier: Apache-2.0
#include "AMDGPUDevice.h"
#include "AMDGPUImage.h"
#include "AMDGPUStream.h"

#include "offloadio/Plugin.h"

#include "llvm/ADT/ScopeExit.h"

#include <cstring>

using namespace offloadio;
using namespace offloadio::amdgpu;

namespace {



} // namespace

AMDGPUDeviceTy::~AMDGPUDeviceTy() {
  // Free what the program leaked; the pools outlive the device. Nobody is
  // left to report a failure to.
  llvm::consumeError(freeLeakedMemory());
}

Error AMDGPUDeviceTy::initImpl(DeviceLimitsTy &Limits) {
  const HSAApiTy &Api = Ctx.Api;
  char Name[64] = {};
  if (auto Err = queryAgent(HSA_AGENT_INFO_NAME, Name, "the name"))
    return Err;
  char Product[64] = {};
  // Optional: older runtimes may not know the product name.
  if (Api.hsa_agent_get_info(Gpu.Agent,
                             hsa_agent_info_t(HSA_AMD_AGENT_INFO_PRODUCT_NAME),
                             Product) == HSA_STATUS_SUCCESS)
    ProductName = Product;
  uint32_t Value = 0;
  if (Api.hsa_agent_get_info(
          Gpu.Agent, hsa_agent_info_t(HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY),
          &Value) == HSA_STATUS_SUCCESS)
    MaxClockMHz = Value;
  if (auto Err = queryAgent(HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT, ComputeUnits,
                            "the compute unit count"))
    return Err;
  if (auto Err = queryAgent(HSA_AGENT_INFO_WAVEFRONT_SIZE, WavefrontSize,
                            "the wavefront size"))
    return Err;
  if (auto Err = queryAgent(HSA_AGENT_INFO_WORKGROUP_MAX_SIZE, MaxWorkgroupSize,
                            "the work-group size limit"))
    return Err;
  uint32_t GridMax = 0;
  if (auto Err = queryAgent(HSA_AGENT_INFO_GRID_MAX_SIZE, GridMax,
                            "the grid size limit"))
    return Err;
  uint32_t QueueMax = 0;
  if (auto Err = queryAgent(HSA_AGENT_INFO_QUEUE_MAX_SIZE, QueueMax,
                            "the queue size limit"))
    return Err;
  if (auto Err = queryAgent(HSA_AGENT_INFO_PROFILE, Profile, "the profile"))
    return Err;
  size_t PoolSize = 0;
  if (auto Err = checkHSA(
          Api,
          Api.hsa_amd_memory_pool_get_info(
              Gpu.DevicePool, HSA_AMD_MEMORY_POOL_INFO_SIZE, &PoolSize),
          "hsa_amd_memory_pool_get_info", "device memory size of device {0}",
          DeviceId))
    return Err;
  DevicePoolSize = PoolSize;

  // The group (LDS) segment pool bounds static + dynamic group memory.
  struct GroupQueryTy {
    const HSAApiTy *Api;
    uint32_t Size = 0;
  } GroupQuery{&Api};
  hsa_status_t Status = Api.hsa_amd_agent_iterate_memory_pools(
      Gpu.Agent,
      [](hsa_amd_memory_pool_t Pool, void *Data) {
        auto &Q = *static_cast<GroupQueryTy *>(Data);
        hsa_amd_segment_t Segment;
        size_t Size = 0;
        if (Q.Api->hsa_amd_memory_pool_get_info(
                Pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &Segment) ==
                HSA_STATUS_SUCCESS &&
            Segment == HSA_AMD_SEGMENT_GROUP &&
            Q.Api->hsa_amd_memory_pool_get_info(Pool,
                                                HSA_AMD_MEMORY_POOL_INFO_SIZE,
                                                &Size) == HSA_STATUS_SUCCESS) {
          Q.Size = uint32_t(Size);
          return HSA_STATUS_INFO_BREAK;
        }
        return HSA_STATUS_SUCCESS;
      },
      &GroupQuery);
  if (Status != HSA_STATUS_INFO_BREAK)
    if (auto Err = checkHSA(Api, Status, "hsa_amd_agent_iterate_memory_pools",
                            "group segment pool of device {0}", DeviceId))
      return Err;
  if (GroupQuery.Size)
    MaxGroupSegmentSize = GroupQuery.Size;
  Settings = AMDGPUSettingsTy::fromEnv(QueueMax);

  if (!MaxWorkgroupSize || !WavefrontSize || !GridMax)
    return makeError(ErrorCode::BackendError,
                     "device {0} reports no usable geometry (work-group "
                     "limit {1}, wavefront {2}, grid limit {3})",
                     DeviceId, MaxWorkgroupSize, WavefrontSize, GridMax);
  // The agent's limits, and libomptarget 16's AMDGPU grid values: at most
  // 1024 threads and 2^20 teams, 256 threads by default, and four teams
  // per compute unit by default, also the cap on teams derived from a
  // loop's trip count. The framework bounds each by the others
  // (deriveLaunchLimits).
  Limits.MaxThreads = MaxWorkgroupSize;
  Limits.ThreadsCap = 1024;
  Limits.MaxTeams = UINT32_MAX;
  Limits.TeamsCap = uint32_t(1) << 20;
  Limits.MaxGridThreads = GridMax;
  Limits.DefaultThreads = 256;
  Limits.DefaultTeams = std::max<uint32_t>(1, ComputeUnits) * 4;
  Limits.WarpSize = WavefrontSize;
  Limits.HostCanAccessDeviceMemory = false;
  Limits.MaxDynamicSharedMemory = MaxGroupSegmentSize;
  // For the device runtime: its steady clock's rate, from runtimes that
  // report it (older ones do not: the framework's default then), the
  // waves resident at once, and the pool of its malloc.
  uint64_t Frequency = 0;
  if (Api.hsa_agent_get_info(Gpu.Agent,
                             hsa_agent_info_t(AgentInfoTimestampFrequency),
                             &Frequency) == HSA_STATUS_SUCCESS)
    Limits.ClockFrequency = Frequency;
  uint32_t WavesPerCU = 0;
  if (Api.hsa_agent_get_info(
          Gpu.Agent, hsa_agent_info_t(HSA_AMD_AGENT_INFO_MAX_WAVES_PER_CU),
          &WavesPerCU) == HSA_STATUS_SUCCESS)
    Limits.HardwareParallelism = uint64_t(ComputeUnits) * WavesPerCU;
  Limits.DeviceHeapSize = Settings.HeapSize;

  // Queues: a few per device, shared by the streams round-robin.
  unsigned NumQueues = unsigned(Settings.NumQueues);
  QueueSize = uint32_t(llvm::PowerOf2Ceil(uint64_t(Settings.QueueSize)));
  if (QueueMax && QueueSize > QueueMax)
    QueueSize = uint32_t(llvm::bit_floor(QueueMax));
  for (unsigned I = 0; I < NumQueues; ++I) {
    auto Queue = AMDGPUQueueTy::create(Api, Gpu.Agent, QueueSize, DeviceId);
    if (!Queue)
      return Queue.takeError();
    Queues.push_back(std::move(*Queue));
  }
  Kernargs = std::make_unique<AMDGPUKernargPoolTy>(Api, Ctx.KernargPool,
                                                   Gpu.Agent, DeviceId, Budget);
  return Kernargs->init();
}

Error AMDGPUDeviceTy::deinitImpl() {
  Queues.clear();
  Kernargs.reset();
  return Error::success();
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

Expected<void *> AMDGPUDeviceTy::allocateImpl(size_t Size, AllocKindTy Kind) {
  const HSAApiTy &Api = Ctx.Api;
  hsa_amd_memory_pool_t Pool;
  const std::vector<hsa_agent_t> *Access;
  if (isDeviceKind(Kind)) {
    Pool = Gpu.DevicePool;
    Access = &Gpu.Peers;
  } else {
    Pool = Ctx.HostPool;
    Access = &Ctx.GpuAgents;
  }
  void *Ptr = nullptr;
  if (auto Err =
          checkHSA(Api, Api.hsa_amd_memory_pool_allocate(Pool, Size, 0, &Ptr),
                   "hsa_amd_memory_pool_allocate",
                   "{0} bytes of {1} memory on device {2}", Size,
                   allocKindName(Kind), DeviceId))
    return std::move(Err);
  if (!Access->empty()) {
    if (auto Err = checkHSA(
            Api,
            Api.hsa_amd_agents_allow_access(uint32_t(Access->size()),
                                            Access->data(), nullptr, Ptr),
            "hsa_amd_agents_allow_access",
            "{0} ({1} bytes of {2} memory) for {3} agents on "
            "device {4}",
            Ptr, Size, allocKindName(Kind), Access->size(), DeviceId)) {
      Api.hsa_amd_memory_pool_free(Ptr);
      return std::move(Err);
    }
  }
  return Ptr;
}

Error AMDGPUDeviceTy::freeImpl(void *Ptr, size_t Size, AllocKindTy Kind) {
  return checkHSA(Ctx.Api, Ctx.Api.hsa_amd_memory_pool_free(Ptr),
                  "hsa_amd_memory_pool_free",
                  "{0} ({1} bytes of {2} memory) on device {3}", Ptr, Size,
                  allocKindName(Kind), DeviceId);
}

IOFastpathTy *AMDGPUDeviceTy::getIOFastpathImpl() {
  // Without the AIS calls there is no fastpath: the engine then reports it
  // unavailable, and print_device_info says why.
  std::string Why;
  if (!AMDGPUFastpathTy::isAvailable(Ctx.Api, Why))
    return nullptr;
  if (!Fastpath)
    Fastpath = std::make_unique<AMDGPUFastpathTy>(
        *this, Ctx.Api, Sys, AMDGPUFastpathSettingsTy::fromEnv());
  return Fastpath.get();
}

Error AMDGPUDeviceTy::writeDeviceSync(void *Dst, const void *Src, size_t Size) {
  const HSAApiTy &Api = Ctx.Api;
  void *Staging = nullptr;
  if (auto Err = checkHSA(
          Api,
          Api.hsa_amd_memory_pool_allocate(Ctx.HostPool, Size, 0, &Staging),
          "hsa_amd_memory_pool_allocate",
          "{0}-byte staging buffer on device {1}", Size, DeviceId))
    return Err;
  auto FreeStaging =
      llvm::make_scope_exit([&] { Api.hsa_amd_memory_pool_free(Staging); });
  hsa_agent_t Agent = Gpu.Agent;
  if (auto Err = checkHSA(
          Api, Api.hsa_amd_agents_allow_access(1, &Agent, nullptr, Staging),
          "hsa_amd_agents_allow_access", "staging buffer {0} on device {1}",
          Staging, DeviceId))
    return Err;
  std::memcpy(Staging, Src, Size);
  auto Signal = Ctx.Signals.acquire(1);
  if (!Signal)
    return Signal.takeError();
  if (auto Err = checkHSA(
          Api,
          Api.hsa_amd_memory_async_copy(Dst, Gpu.Agent, Staging, Ctx.CpuAgent,
                                        Size, 0, nullptr, (*Signal)->get()),
          "hsa_amd_memory_async_copy",
          "{0} bytes from {1} to {2} on device {3}", Size, Staging, Dst,
          DeviceId))
    return Err;
  if (auto Err = waitSignal(Ctx, **Signal))
    return Err;
  if (hsa_signal_value_t V = (*Signal)->load(); V != 0)
    return makeError(ErrorCode::BackendError,
                     "copy of {0} bytes to {1} on device {2} failed "
                     "(completion signal {3})",
                     Size, Dst, DeviceId, V);
  return Error::success();
}

//===----------------------------------------------------------------------===//
// Images and kernels
//===----------------------------------------------------------------------===//

Expected<bool> AMDGPUDeviceTy::writeImageGlobalImpl(DeviceImageTy &Image,
                                                    llvm::StringRef Name,
                                                    const void *Data,
                                                    size_t Size) {
  auto Global = static_cast<AMDGPUImageTy &>(Image).findGlobal(Name);
  if (!Global) {
    // An image without the global needs none.
    llvm::consumeError(Global.takeError());
    return false;
  }
  if (Global->second != Size)
    return makeError(ErrorCode::InvalidImage,
                     "image {0} on device {1}: '{2}' has {3} bytes; the "
                     "device runtime expects {4}",
                     Image.getId(), DeviceId, Name, Global->second, Size);
  if (auto Err = writeDeviceSync(Global->first, Data, Size))
    return std::move(Err);
  return true;
}

Expected<std::unique_ptr<DeviceImageTy>>
AMDGPUDeviceTy::loadImageImpl(const __tgt_device_image &TgtImage,
                              int32_t ImageId) {
  llvm::StringRef Bytes(static_cast<const char *>(TgtImage.ImageStart),
                        static_cast<const char *>(TgtImage.ImageEnd) -
                            static_cast<const char *>(TgtImage.ImageStart));
  auto ImageTarget = readImageTarget(Bytes);
  if (!ImageTarget)
    return makeError(ErrorCode::InvalidImage,
                     "image {0} ({1} bytes at {2}) is not an AMDGPU code "
                     "object",
                     ImageId, Bytes.size(), TgtImage.ImageStart);
  if (!AMDGPUTargetIdTy::isCompatible(*ImageTarget,
                                      AMDGPUTargetIdTy::parse(Gpu.Target)))
    return makeError(ErrorCode::InvalidImage,
                     "image {0} is built for {1} and cannot run on device {2} "
                     "({3})",
                     ImageId, ImageTarget->str(), DeviceId, Gpu.Target);
  auto Image = AMDGPUImageTy::load(Ctx.Api, Gpu.Agent, Profile, TgtImage,
                                   ImageId, DeviceId);
  if (!Image)
    return Image.takeError();
  return std::unique_ptr<DeviceImageTy>(std::move(*Image));
}

Expected<std::unique_ptr<GenericKernelTy>>
AMDGPUDeviceTy::constructKernelImpl(DeviceImageTy &GenericImage,
                                    llvm::StringRef Name) {
  auto &Image = static_cast<AMDGPUImageTy &>(GenericImage);
  const HSAApiTy &Api = Ctx.Api;
  auto Symbol = Image.findSymbol(Name, /*IsKernel=*/true);
  if (!Symbol)
    return Symbol.takeError();
  uint64_t Object = 0;
  uint32_t KernargSize = 0, GroupSize = 0, PrivateSize = 0;
  bool DynamicStack = false;
  auto Query = [&](hsa_executable_symbol_info_t Attr, void *Value,
                   const char *What) {
    return checkHSA(Api,
                    Api.hsa_executable_symbol_get_info(*Symbol, Attr, Value),
                    "hsa_executable_symbol_get_info",
                    "{0} of kernel {1} on device {2}", What, Name, DeviceId);
  };
  if (auto Err = Query(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &Object,
                       "the kernel object"))
    return std::move(Err);
  if (auto Err = Query(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE,
                       &KernargSize, "the kernarg segment size"))
    return std::move(Err);
  if (auto Err = Query(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE,
                       &GroupSize, "the group segment size"))
    return std::move(Err);
  if (auto Err = Query(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE,
                       &PrivateSize, "the private segment size"))
    return std::move(Err);
  if (auto Err = Query(HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_DYNAMIC_CALLSTACK,
                       &DynamicStack, "the dynamic call stack flag"))
    return std::move(Err);
  auto Config = readKernelConfig(Image, Name);
  if (!Config)
    return Config.takeError();
  const AMDGPUKernelMetadataTy *Metadata = Image.getMetadata(Name);
  if (Metadata) {
    KernargSize = std::max(KernargSize, Metadata->KernargSegmentSize);
    DynamicStack |= Metadata->UsesDynamicStack;
  }
  return std::make_unique<AMDGPUKernelTy>(Image, Name.str(), *Config,
                                          Object, KernargSize, GroupSize,
                                          PrivateSize, DynamicStack, Metadata);
}

Expected<void *> AMDGPUDeviceTy::getGlobalAddressImpl(DeviceImageTy &Image,
                                                      llvm::StringRef Name,
                                                      size_t Size) {
  auto Global = static_cast<AMDGPUImageTy &>(Image).findGlobal(Name);
  if (!Global)
    return Global.takeError();
  if (Global->second != Size)
    return makeError(ErrorCode::InvalidImage,
                     "global '{0}' has {1} bytes on device {2} but {3} bytes "
                     "on the host",
                     Name, Global->second, DeviceId, Size);
  return Global->first;
}

//===----------------------------------------------------------------------===//
// Streams, events, information
//===----------------------------------------------------------------------===//

Expected<std::unique_ptr<StreamTy>> AMDGPUDeviceTy::createStreamImpl() {
  AMDGPUQueueTy &Queue =
      *Queues[NextQueue.fetch_add(1, std::memory_order_relaxed) %
              Queues.size()];
  return std::make_unique<AMDGPUStreamTy>(Ctx, Gpu.Agent, Queue, *Kernargs,
                                          DeviceId);
}

Expected<std::unique_ptr<EventTy>> AMDGPUDeviceTy::createEventImpl() {
  return std::make_unique<AMDGPUEventTy>(Ctx, DeviceId);
}

Error AMDGPUDeviceTy::dataExchangeImpl(const void *SrcPtr,
                                       GenericDeviceTy &DstDevice, void *DstPtr,
                                       size_t Size, StreamTy &Stream) {
  auto &Dst = static_cast<AMDGPUDeviceTy &>(DstDevice);
  return static_cast<AMDGPUStreamTy &>(Stream).copyBetweenAgents(
      DstPtr, Dst.getAgent(), SrcPtr, Gpu.Agent, Size,
      CopyKindTy::DeviceToDevice);
}

Error AMDGPUDeviceTy::initDeviceInfoImpl(__tgt_device_info &DeviceInfo) {
  // Interop users get the HSA agent handle.
  DeviceInfo.Context = nullptr;
  DeviceInfo.Device = reinterpret_cast<void *>(Gpu.Agent.handle);
  return Error::success();
}

Expected<std::string> AMDGPUDeviceTy::getPCIAddressImpl() {
  uint32_t Domain = 0, BDF = 0;
  if (auto Err = queryAgent(HSA_AMD_AGENT_INFO_DOMAIN, Domain, "the PCI domain"))
    return std::move(Err);
  if (auto Err = queryAgent(HSA_AMD_AGENT_INFO_BDFID, BDF, "the PCI BDF id"))
    return std::move(Err);
  // BDFID packs the bus in bits 15-8, the device in 7-3, the function in
  // 2-0.
  return llvm::formatv("{0:x-4}:{1:x-2}:{2:x-2}.{3:x-1}", Domain,
                       (BDF >> 8) & 0xff, (BDF >> 3) & 0x1f, BDF & 0x7)
      .str();
}

Expected<ForeignMemoryTy>
AMDGPUDeviceTy::queryForeignMemoryImpl(const void *Ptr) {
  const HSAApiTy &Api = Ctx.Api;
  hsa_amd_pointer_info_t Info;
  std::memset(&Info, 0, sizeof(Info));
  Info.size = sizeof(Info);
  if (auto Err = checkHSA(
          Api, Api.hsa_amd_pointer_info(Ptr, &Info, nullptr, nullptr, nullptr),
          "hsa_amd_pointer_info", "{0} for device {1}", Ptr, DeviceId))
    return std::move(Err);
  ForeignMemoryTy Memory;
  // Locked host memory is the initial device's, as is memory of the CPU's
  // pools below.
  if (Info.type != HSA_EXT_POINTER_TYPE_HSA ||
      Info.agentOwner.handle == Ctx.CpuAgent.handle)
    return Memory;
  if (Info.agentOwner.handle == Gpu.Agent.handle) {
    Memory.Owner = ForeignMemoryTy::OwnerTy::ThisDevice;
    Memory.Base = Info.agentBaseAddress;
    Memory.Size = Info.sizeInBytes;
    return Memory;
  }
  Memory.Owner = ForeignMemoryTy::OwnerTy::Elsewhere;
  for (size_t I = 0; I < Ctx.Gpus.size(); ++I)
    if (Ctx.Gpus[I].Agent.handle == Info.agentOwner.handle) {
      Memory.OwnerName = llvm::formatv("AMD GPU agent {0} (device {0} of the "
                                       "{1} plugin)",
                                       I, getPlugin().getName());
      return Memory;
    }
  // An agent the plugin does not use: another CPU (a socket of its own),
  // whose memory is host memory, or a GPU the plugin cannot serve.
  hsa_device_type_t Type = HSA_DEVICE_TYPE_CPU;
  if (auto Err = checkHSA(Api,
                          Api.hsa_agent_get_info(Info.agentOwner,
                                                 HSA_AGENT_INFO_DEVICE, &Type),
                          "hsa_agent_get_info",
                          "the device type of agent {0:x}, owner of {1}, for "
                          "device {2}",
                          Info.agentOwner.handle, Ptr, DeviceId))
    return std::move(Err);
  if (Type != HSA_DEVICE_TYPE_GPU)
    return ForeignMemoryTy();
  Memory.OwnerName =
      llvm::formatv("AMD GPU agent {0:x} (not a device of the {1} plugin)",
                    Info.agentOwner.handle, getPlugin().getName());
  return Memory;
}

void AMDGPUDeviceTy::printInfoImpl(llvm::raw_ostream &OS) {
  auto [Live, Bytes] = getAllocationUsage();
  printInfoLine(OS, "HSA runtime:", Ctx.Api.LibraryPath);
  printInfoLine(OS, "Agent name:", Gpu.Name);
  printInfoLine(OS, "ISA target:", Gpu.Target);
  if (!ProductName.empty())
    printInfoLine(OS, "Product name:", ProductName);
  printInfoLine(OS, "Compute units:", llvm::Twine(ComputeUnits));
  printInfoLine(OS, "Wavefront size:", llvm::Twine(WavefrontSize));
  printInfoLine(OS, "Max work-group size:", llvm::Twine(MaxWorkgroupSize));
  if (MaxClockMHz)
    printInfoLine(OS, "Max clock (MHz):", llvm::Twine(MaxClockMHz));
  printInfoLine(OS, "Device memory (bytes):", llvm::Twine(DevicePoolSize));
  printInfoLine(OS, "Group segment (bytes):", llvm::Twine(MaxGroupSegmentSize));
  printInfoLine(OS, "HSA queues:",
                llvm::Twine(Queues.size()) + " x " + llvm::Twine(QueueSize) +
                    " packets");
  printInfoLine(
      OS, "Kernarg arenas:", llvm::Twine(Kernargs ? Kernargs->arenas() : 0));
  printInfoLine(OS, "Signals created:", llvm::Twine(Ctx.Signals.capacity()));
  printInfoLine(OS, "Peer devices:", llvm::Twine(Gpu.Peers.size()));
  std::string AisWhy;
  if (!AMDGPUFastpathTy::isAvailable(Ctx.Api, AisWhy))
    printInfoLine(OS, "File fastpath (AIS):", "unavailable: " + AisWhy);
  else if (Fastpath)
    printInfoLine(OS, "File fastpath (AIS):", Fastpath->describe());
  else
    printInfoLine(OS, "File fastpath (AIS):",
                  "hsa_amd_ais_file_read/write (O_DIRECT files, 4 KiB "
                  "aligned, device memory)");
  printInfoLine(OS, "Live allocations:",
                llvm::Twine(Live) + " (" + llvm::Twine(Bytes) + " bytes)");
}

// SPDX-License-Identifier: Apache-2.0
#include "CUDADevice.h"
#include "CUDAFastpath.h"
#include "CUDAImage.h"
#include "CUDAKernel.h"
#include "CUDASettings.h"
#include "CUDAStream.h"

#include "offloadio/Plugin.h"
#include "offloadio/Teardown.h"

#include <array>

using namespace offloadio;
using namespace offloadio::cuda;

CUDADeviceTy::CUDADeviceTy(GenericPluginTy &Plugin, int32_t DeviceId,
                           const CUDAApiTy &Api,
                           const CUDAHostRegistryTy &Registry, CUdevice Device)
    : GenericDeviceTy(Plugin, DeviceId), Api(Api), Registry(Registry),
      Device(Device) {}

CUDADeviceTy::~CUDADeviceTy() {
  // Without deinit() (a failed init, or process teardown), the primary
  // context stays retained on purpose: the base class destroys its pooled
  // streams, events and images after this body, and they still need a live
  // context. The driver releases everything at process exit.
}

Error CUDADeviceTy::setContext() const {
  return checkCU(Api, Api.cuCtxSetCurrent(Context), "cuCtxSetCurrent",
                 "primary context {0} of device {1}", Context, DeviceId);
}

Expected<int> CUDADeviceTy::getAttribute(CUdevice_attribute Attr,
                                         const char *AttrName) const {
  int Value = 0;
  if (auto Err = checkCU(Api, Api.cuDeviceGetAttribute(&Value, Attr, Device),
                         "cuDeviceGetAttribute", "{0} of device {1}", AttrName,
                         DeviceId))
    return std::move(Err);
  return Value;
}

Error CUDADeviceTy::initImpl(DeviceLimitsTy &L) {
  if (auto Err = checkCU(Api, Api.cuDevicePrimaryCtxRetain(&Context, Device),
                         "cuDevicePrimaryCtxRetain",
                         "device {0} (CUdevice {1})", DeviceId, Device))
    return Err;
  if (auto Err = setContext())
    return Err;

  std::array<char, 256> NameBuffer = {};
  if (auto Err =
          checkCU(Api,
                  Api.cuDeviceGetName(NameBuffer.data(),
                                      int(NameBuffer.size() - 1), Device),
                  "cuDeviceGetName", "device {0}", DeviceId))
    return Err;
  Name = NameBuffer.data();
  if (auto Err = checkCU(Api, Api.cuDeviceTotalMem(&TotalMemory, Device),
                         "cuDeviceTotalMem", "device {0}", DeviceId))
    return Err;

  struct {
    CUdevice_attribute Attr;
    const char *Name;
    int *Out;
  } Attrs[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "COMPUTE_CAPABILITY_MAJOR",
       &ComputeMajor},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "COMPUTE_CAPABILITY_MINOR",
       &ComputeMinor},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "MULTIPROCESSOR_COUNT",
       &NumSMs},
  };
  for (auto &A : Attrs) {
    auto Value = getAttribute(A.Attr, A.Name);
    if (!Value)
      return Value.takeError();
    *A.Out = *Value;
  }
  auto Warp = getAttribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE, "WARP_SIZE");
  if (!Warp)
    return Warp.takeError();
  auto BlockDim =
      getAttribute(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, "MAX_BLOCK_DIM_X");
  if (!BlockDim)
    return BlockDim.takeError();
  auto GridDim =
      getAttribute(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, "MAX_GRID_DIM_X");
  if (!GridDim)
    return GridDim.takeError();
  auto SharedPerBlock =
      getAttribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
                   "MAX_SHARED_MEMORY_PER_BLOCK");
  if (!SharedPerBlock)
    return SharedPerBlock.takeError();
  auto ThreadsPerSM =
      getAttribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
                   "MAX_THREADS_PER_MULTIPROCESSOR");
  if (!ThreadsPerSM)
    return ThreadsPerSM.takeError();

  // The device's limits (a negative attribute reads as none), and
  // libomptarget 16's NVPTX grid values: 128 threads per team, and 3200
  // teams when the program says nothing, also the cap on teams derived
  // from a loop's trip count. The framework bounds each by the others
  // (deriveLaunchLimits, LaunchGeometry.h).
  L.MaxThreads = uint32_t(std::max(*BlockDim, 0));
  L.MaxTeams = uint32_t(std::max(*GridDim, 0));
  L.DefaultThreads = 128;
  L.DefaultTeams = 3200;
  L.WarpSize = uint32_t(std::max(*Warp, 1));
  L.HostCanAccessDeviceMemory = false;
  // For the device runtime, as the stock plugin reports them: its clock
  // (globaltimer) counts nanoseconds, and the warps resident at once. The
  // device-side malloc is CUDA's own (LIBOMPTARGET_HEAP_SIZE sizes it
  // through the context limit below), so no pool.
  L.ClockFrequency = 1000000000;
  L.HardwareParallelism = uint64_t(std::max(NumSMs, 0)) *
                          (uint64_t(std::max(*ThreadsPerSM, 0)) / L.WarpSize);

  // Launch-wide dynamic shared memory; it cannot exceed what a block may
  // use without opting in per kernel.
  L.MaxDynamicSharedMemory = uint64_t(std::max(*SharedPerBlock, 0));
  Settings = CUDASettingsTy::fromEnv();
  GraphLaunches =
      Settings.Graphs && CUDAGraphLauncherTy::driverSupportsGraphs(Api);
  return applyContextLimits();
}

Error CUDADeviceTy::applyContextLimits() {
  // Only when asked: the driver's defaults suit most programs, and raising
  // the stack size reserves memory for every resident thread.
  struct {
    const char *Env;
    uint64_t Value;
    CUlimit Limit;
    const char *Name;
  } Limits[] = {
      {settingDecl(SettingId::CUDAStackSize).Name, Settings.StackSize,
       CU_LIMIT_STACK_SIZE, "CU_LIMIT_STACK_SIZE"},
      {settingDecl(SettingId::CUDAHeapSize).Name, Settings.HeapSize,
       CU_LIMIT_MALLOC_HEAP_SIZE, "CU_LIMIT_MALLOC_HEAP_SIZE"},
  };
  for (auto &L : Limits) {
    if (!L.Value)
      continue;
    if (auto Err =
            checkCU(Api, Api.cuCtxSetLimit(L.Limit, size_t(L.Value)),
                    "cuCtxSetLimit", "{0} = {1} bytes ({2}) on device {3}",
                    L.Name, L.Value, L.Env, DeviceId))
      return Err;
  }
  return Error::success();
}

Error CUDADeviceTy::deinitImpl() {
  if (!Context)
    return Error::success();
  // Every step asks the driver: once it has shut down (CUDA_ERROR_
  // DEINITIALIZED, at a Python interpreter's exit) the context and its
  // memory went with it, so its first such answer ends the steps, and the
  // enclosing teardown drops it.
  TeardownTy Teardown;
  Error Current = setContext();
  bool IsCurrent = !Current;
  Teardown.add(std::move(Current));
  // The leaked memory is freed in the context it was allocated in.
  if (IsCurrent)
    Teardown.run([&] { return freeLeakedMemory(); });
  Teardown.run([&] {
    return checkCU(Api, Api.cuDevicePrimaryCtxRelease(Device),
                   "cuDevicePrimaryCtxRelease", "device {0}", DeviceId);
  });
  Context = nullptr;
  return Teardown.takeForEnclosing();
}

Expected<std::unique_ptr<DeviceImageTy>>
CUDADeviceTy::loadImageImpl(const __tgt_device_image &TgtImage,
                            int32_t ImageId) {
  if (auto Err = setContext())
    return std::move(Err);
  auto Image = CUDAImageTy::load(Api, Context, TgtImage, ImageId, DeviceId);
  if (!Image)
    return Image.takeError();
  return std::unique_ptr<DeviceImageTy>(std::move(*Image));
}

Expected<bool> CUDADeviceTy::writeImageGlobalImpl(DeviceImageTy &GenericImage,
                                                  llvm::StringRef Name,
                                                  const void *Data,
                                                  size_t Size) {
  if (auto Err = setContext())
    return std::move(Err);
  auto &Image = static_cast<CUDAImageTy &>(GenericImage);
  auto Global = Image.findGlobal(Name);
  if (!Global)
    return Global.takeError();
  if (!*Global)
    return false;
  auto [Ptr, DeviceSize] = **Global;
  if (DeviceSize != Size)
    return makeError(ErrorCode::InvalidImage,
                     "'{0}' in image {1} on device {2} has {3} bytes, but "
                     "the device runtime expects {4}",
                     Name, Image.getId(), DeviceId, DeviceSize, Size);
  if (auto Err = checkCU(Api, Api.cuMemcpyHtoD(Ptr, Data, Size),
                         "cuMemcpyHtoD",
                         "{0} bytes of '{1}' at {2:x} in image {3} "
                         "on device {4}",
                         Size, Name, Ptr, Image.getId(), DeviceId))
    return std::move(Err);
  return true;
}

Expected<std::unique_ptr<GenericKernelTy>>
CUDADeviceTy::constructKernelImpl(DeviceImageTy &Image, llvm::StringRef Name) {
  if (auto Err = setContext())
    return std::move(Err);
  auto Config = readKernelConfig(Image, Name);
  if (!Config)
    return Config.takeError();
  auto Kernel = CUDAKernelTy::create(Api, static_cast<CUDAImageTy &>(Image),
                                     Name, *Config, DeviceId);
  if (!Kernel)
    return Kernel.takeError();
  return std::unique_ptr<GenericKernelTy>(std::move(*Kernel));
}

Expected<void *> CUDADeviceTy::getGlobalAddressImpl(DeviceImageTy &Image,
                                                    llvm::StringRef Name,
                                                    size_t Size) {
  if (auto Err = setContext())
    return std::move(Err);
  auto Global = static_cast<CUDAImageTy &>(Image).findGlobal(Name);
  if (!Global)
    return Global.takeError();
  if (!*Global)
    return makeError(ErrorCode::NotFound,
                     "global '{0}' ({1} bytes) not found in image {2} on "
                     "device {3}",
                     Name, Size, Image.getId(), DeviceId);
  auto [Ptr, DeviceSize] = **Global;
  if (DeviceSize != Size)
    return makeError(ErrorCode::InvalidImage,
                     "global '{0}' has {1} bytes on the host but {2} bytes in "
                     "image {3} on device {4}",
                     Name, Size, DeviceSize, Image.getId(), DeviceId);
  return reinterpret_cast<void *>(Ptr);
}

Expected<void *> CUDADeviceTy::allocateImpl(size_t Size, AllocKindTy Kind) {
  if (auto Err = setContext())
    return std::move(Err);
  void *Ptr = nullptr;
  CUresult Result;
  const char *Call;
  switch (Kind) {
  case AllocKindTy::Host:
    Call = "cuMemAllocHost";
    Result = Api.cuMemAllocHost(&Ptr, Size);
    break;
  case AllocKindTy::Shared: {
    // Migrates on demand between host and every device of the system.
    Call = "cuMemAllocManaged";
    CUdeviceptr DevPtr = 0;
    Result = Api.cuMemAllocManaged(&DevPtr, Size, CU_MEM_ATTACH_GLOBAL);
    Ptr = reinterpret_cast<void *>(DevPtr);
    break;
  }
  case AllocKindTy::Device:
  case AllocKindTy::Default: {
    Call = "cuMemAlloc";
    CUdeviceptr DevPtr = 0;
    Result = Api.cuMemAlloc(&DevPtr, Size);
    Ptr = reinterpret_cast<void *>(DevPtr);
    break;
  }
  default:
    return makeError(ErrorCode::InvalidArgument,
                     "unknown allocation kind {0} on device {1}", int(Kind),
                     DeviceId);
  }
  if (auto Err = checkCU(Api, Result, Call,
                         "{0} bytes of {1} memory on "
                         "device {2}",
                         Size, allocKindName(Kind), DeviceId))
    return std::move(Err);
  return Ptr;
}

Error CUDADeviceTy::freeImpl(void *Ptr, size_t Size, AllocKindTy Kind) {
  // Kind is the kind the memory was allocated with: it decides the call.
  bool IsHost = Kind == AllocKindTy::Host;
  if (auto Err = setContext())
    return Err;
  return checkCU(Api,
                 IsHost ? Api.cuMemFreeHost(Ptr)
                        : Api.cuMemFree(reinterpret_cast<CUdeviceptr>(Ptr)),
                 IsHost ? "cuMemFreeHost" : "cuMemFree",
                 "{0} ({1} bytes of {2} memory) on device {3}", Ptr, Size,
                 allocKindName(Kind), DeviceId);
}

Expected<std::unique_ptr<StreamTy>> CUDADeviceTy::createStreamImpl() {
  CUDAStreamOptionsTy Options;
  Options.GraphLaunches = GraphLaunches;
  Options.CompletionFlag = Settings.CompletionFlag;
  auto Stream = CUDAStreamTy::create(Api, Registry, Context, DeviceId, Options);
  if (!Stream)
    return Stream.takeError();
  return std::unique_ptr<StreamTy>(std::move(*Stream));
}

Expected<std::unique_ptr<EventTy>> CUDADeviceTy::createEventImpl() {
  auto Event = CUDAEventTy::create(Api, Context, DeviceId);
  if (!Event)
    return Event.takeError();
  return std::unique_ptr<EventTy>(std::move(*Event));
}

Error CUDADeviceTy::dataExchangeImpl(const void *SrcPtr,
                                     GenericDeviceTy &DstDevice, void *DstPtr,
                                     size_t Size, StreamTy &GenericStream) {
  // Both devices belong to this plugin, so the destination is ours too.
  auto &Dst = static_cast<CUDADeviceTy &>(DstDevice);
  auto &Stream = static_cast<CUDAStreamTy &>(GenericStream);
  if (Dst.getContext() == Context)
    return Stream.copyAsync(DstPtr, SrcPtr, Size, CopyKindTy::DeviceToDevice);
  return Stream.copyPeerAsync(DstPtr, Dst.getContext(), SrcPtr, Size);
}

Expected<bool> CUDADeviceTy::enablePeerAccessImpl(GenericDeviceTy &Peer) {
  auto &Dst = static_cast<CUDADeviceTy &>(Peer);
  if (Dst.getContext() == Context)
    return true;
  int CanAccess = 0;
  if (auto Err = checkCU(Api,
                         Api.cuDeviceCanAccessPeer(&CanAccess, Device,
                                                   Dst.Device),
                         "cuDeviceCanAccessPeer", "device {0} to device {1}",
                         DeviceId, Dst.getDeviceId()))
    return std::move(Err);
  if (!CanAccess)
    return false;
  if (auto Err = setContext())
    return std::move(Err);
  CUresult Result = Api.cuCtxEnablePeerAccess(Dst.getContext(), 0);
  // Enabled already, by the program itself.
  if (Result == CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
    return true;
  // The device's peer mappings are used up: copies still work, indirectly.
  if (Result == CUDA_ERROR_TOO_MANY_PEERS)
    return false;
  if (auto Err = checkCU(Api, Result, "cuCtxEnablePeerAccess",
                         "device {0} to device {1} (context {2})", DeviceId,
                         Dst.getDeviceId(), Dst.getContext()))
    return std::move(Err);
  return true;
}

IOFastpathTy *CUDADeviceTy::getIOFastpathImpl() {
  std::lock_guard<std::mutex> Guard(FastpathLock);
  if (!Fastpath)
    Fastpath = std::make_unique<CUDAFastpathTy>(
        *this, Api, CUFileDriverTy::process(), getPlugin().getSys());
  return Fastpath.get();
}

Error CUDADeviceTy::initDeviceInfoImpl(__tgt_device_info &DeviceInfo) {
  // What interop users pass to the driver API: the CUcontext and the
  // CUdevice (an int ordinal, carried in the pointer).
  DeviceInfo.Context = Context;
  DeviceInfo.Device = reinterpret_cast<void *>(intptr_t(Device));
  return Error::success();
}

Expected<std::string> CUDADeviceTy::getPCIAddressImpl() {
  // "dddd:bb:dd.f" and its NUL; the driver's form has up to 13 characters.
  std::array<char, 32> Bus = {};
  if (auto Err = checkCU(Api,
                         Api.cuDeviceGetPCIBusId(Bus.data(),
                                                 int(Bus.size() - 1), Device),
                         "cuDeviceGetPCIBusId", "{0} bytes for device {1}",
                         Bus.size() - 1, DeviceId))
    return std::move(Err);
  return std::string(Bus.data());
}

Expected<ForeignMemoryTy>
CUDADeviceTy::queryForeignMemoryImpl(const void *Ptr) {
  if (auto Err = setContext())
    return std::move(Err);
  // Zero-initialised: the driver leaves what it cannot tell of a pointer it
  // does not know at zero, and writes booleans in fewer bytes than these.
  unsigned MemoryType = 0;
  unsigned IsManaged = 0;
  int Ordinal = -1;
  CUcontext Owner = nullptr;
  CUdeviceptr Start = 0;
  size_t Size = 0;
  std::array<CUpointer_attribute, 6> Attrs = {
      CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
      CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_CONTEXT,
      CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE};
  std::array<void *, 6> Data = {&MemoryType, &IsManaged, &Ordinal,
                                &Owner,      &Start,     &Size};
  CUresult Result =
      Api.cuPointerGetAttributes(unsigned(Attrs.size()), Attrs.data(),
                                 Data.data(), reinterpret_cast<CUdeviceptr>(Ptr));
  ForeignMemoryTy Memory;
  // A pointer no context ever allocated, mapped or registered.
  if (Result == CUDA_ERROR_INVALID_VALUE)
    return Memory;
  if (auto Err = checkCU(Api, Result, "cuPointerGetAttributes",
                         "memory type, device, context and range of {0} for "
                         "device {1}",
                         Ptr, DeviceId))
    return std::move(Err);
  bool OnDevice = IsManaged || MemoryType == CU_MEMORYTYPE_DEVICE ||
                  MemoryType == CU_MEMORYTYPE_UNIFIED;
  // Host memory (allocated or registered with CUDA) is the initial
  // device's, and a type of 0 is a pointer the driver does not know.
  if (!OnDevice || Ordinal < 0)
    return Memory;
  Memory.Owner = ForeignMemoryTy::OwnerTy::Elsewhere;
  // The plugin numbers its devices by CUDA ordinal (CUDAPlugin.cpp).
  if (Ordinal != DeviceId) {
    Memory.OwnerName = "CUDA device " + std::to_string(Ordinal);
    if (Ordinal < getPlugin().getNumDevices())
      Memory.OwnerName += " (device " + std::to_string(Ordinal) + " of the " +
                          getPlugin().getName() + " plugin)";
    return Memory;
  }
  // Memory mapped through the virtual memory API (cuMemCreate and cuMemMap,
  // as PyTorch's expandable segments) belongs to no context: the device
  // is what counts for it.
  if (Owner && Owner != Context) {
    Memory.OwnerName = "CUDA device " + std::to_string(Ordinal) +
                       " in another context";
    return Memory;
  }
  if (!Start || !Size)
    return makeError(ErrorCode::BackendError,
                     "cuPointerGetAttributes gave no allocation range for "
                     "device memory at {0} on device {1} (start {2:x}, {3} "
                     "bytes)",
                     Ptr, DeviceId, Start, Size);
  Memory.Owner = ForeignMemoryTy::OwnerTy::ThisDevice;
  Memory.Base = reinterpret_cast<const void *>(Start);
  Memory.Size = Size;
  return Memory;
}

void CUDADeviceTy::printInfoImpl(llvm::raw_ostream &OS) {
  auto Attr = [&](CUdevice_attribute A) -> std::string {
    auto Value = getAttribute(A, "attribute");
    if (!Value) {
      llvm::consumeError(Value.takeError());
      return "unknown";
    }
    return std::to_string(*Value);
  };
  auto MiB = [](size_t Bytes) { return std::to_string(Bytes >> 20) + " MiB"; };

  printInfoLine(OS, "Device name:", Name);
  printInfoLine(OS, "Compute capability:",
                llvm::Twine(ComputeMajor) + "." + llvm::Twine(ComputeMinor));
  std::array<char, 32> Bus = {};
  if (Api.cuDeviceGetPCIBusId(Bus.data(), int(Bus.size() - 1), Device) ==
      CUDA_SUCCESS)
    printInfoLine(OS, "PCI bus id:", Bus.data());
  std::string Free = "unknown";
  size_t FreeBytes = 0, TotalBytes = 0;
  if (auto Err = setContext())
    llvm::consumeError(std::move(Err));
  else if (Api.cuMemGetInfo(&FreeBytes, &TotalBytes) == CUDA_SUCCESS)
    Free = MiB(FreeBytes);
  printInfoLine(
      OS, "Global memory (total / free):", MiB(TotalMemory) + " / " + Free);
  printInfoLine(OS, "Multiprocessors:", llvm::Twine(NumSMs));
  printInfoLine(OS, "Repeated launches:",
                GraphLaunches ? "replayed from graphs"
                : CUDAGraphLauncherTy::driverSupportsGraphs(Api)
                    ? "cuLaunchKernel (OFFLOADIO_CUDA_GRAPHS=off)"
                    : "cuLaunchKernel (the driver has no graph launch)");
  printInfoLine(OS, "Warp size:", llvm::Twine(getLimits().WarpSize));
  printInfoLine(OS, "Max threads per block:",
                Attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK));
  printInfoLine(OS, "Max registers per block:",
                Attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK));
  printInfoLine(OS, "Shared memory per block:",
                Attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK) +
                    " bytes");
  printInfoLine(
      OS, "L2 cache:", Attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE) + " bytes");
  printInfoLine(
      OS, "Unified addressing:", Attr(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING));
  printInfoLine(OS, "Managed memory (concurrent):",
                Attr(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY) + " (" +
                    Attr(CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS) + ")");
  int Version = 0;
  if (Api.cuDriverGetVersion(&Version) == CUDA_SUCCESS)
    printInfoLine(OS, "CUDA driver version:",
                  llvm::Twine(Version / 1000) + "." +
                      llvm::Twine((Version % 1000) / 10));
  printInfoLine(OS, "Dynamic shared memory:",
                llvm::Twine(getDynamicSharedMemory()) + " bytes");
}

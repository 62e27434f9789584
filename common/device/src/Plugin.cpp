// SPDX-License-Identifier: Apache-2.0
#include "offloadio/Plugin.h"
#include "offloadio/BitcodeImage.h"
#include "offloadio/DeviceIO.h"
#include "offloadio/io/IOWorkerPool.h"

#include <dlfcn.h>

using namespace offloadio;

GenericPluginTy::GenericPluginTy(std::string Name)
    : Settings(PluginSettingsTy::fromEnv()),
      Info(std::move(Name), Settings.InfoFlags, Settings.OwnInfoFlags),
      Profile(Settings.Profile),
      PinnedBudget(std::make_unique<PinnedBudgetTy>(Settings.PinnedMax)),
      CopyThreads(Settings.CopyThreads, Settings.CopyThreadsCap),
      RuntimeABI(findDeviceRuntimeABI(builtLibomptargetVersion())) {}

GenericPluginTy::~GenericPluginTy() = default;

IOWorkerPoolTy &GenericPluginTy::getIOWorkers(const IOConfigTy &Config) {
  std::lock_guard<std::mutex> Guard(IOWorkersLock);
  if (!IOWorkers)
    IOWorkers =
        std::make_unique<IOWorkerPoolTy>(Config.Threads, Config.ThreadsCap,
                                         &Affinity);
  return *IOWorkers;
}

Expected<IOEngineTy &> GenericPluginTy::getIOEngine(GenericDeviceTy &Device) {
  int32_t Id = Device.getDeviceId();
  // Set before the device was published; the device is only reached
  // through that publication.
  if (Id < 0 || Id >= NumDevices || !DeviceIO[Id] ||
      &Device != ReadyDevices[Id].load(std::memory_order_acquire))
    return makeError(ErrorCode::InvalidDevice,
                     "device {0} of the {1} plugin has no file engine", Id,
                     getName());
  return DeviceIO[Id]->getEngine();
}

DeviceServicesTy GenericPluginTy::getDeviceServices() {
  return DeviceServicesTy{getName(),
                          Info,
                          Profile,
                          PinnedMap,
                          *this,
                          CopyThreads,
                          Settings.MappedLocks,
                          *RuntimeABI,
                          JIT,
                          Settings.NumaPlacement ? &Topology : nullptr,
                          Affinity};
}

unsigned GenericPluginTy::getNumIOWorkers() {
  std::lock_guard<std::mutex> Guard(IOWorkersLock);
  return IOWorkers ? IOWorkers->getNumStarted() : 0;
}

unsigned GenericPluginTy::getIOWorkersPerDevice() {
  std::lock_guard<std::mutex> Guard(IOWorkersLock);
  return IOWorkers ? IOWorkers->getThreadsPerEngine() : 0;
}

Error GenericPluginTy::init() {
  std::lock_guard<std::mutex> Guard(InitLock);
  if (Initialized)
    return Error::success();
  auto N = initImpl();
  if (!N)
    return N.takeError();
  NumDevices = *N;
  if (NumDevices > 0 && vendorRuntimeStartsAtInit())
    ForkGuard.arm();
  // Every plugin of the process draws on one account; without a way to
  // share it this plugin keeps its private one, with the same cap.
  if (auto Shared = PinnedBudgetTy::joinProcessAccount(Settings.PinnedMax))
    PinnedBudget = std::move(*Shared);
  else
    Info.print(~0u, -1, "pinned-memory budget not shared with the other "
                        "plugins: {0}",
               takeErrorMessage(Shared.takeError()));
  Devices.resize(NumDevices);
  DeviceIO.resize(NumDevices);
  ReadyDevices.reset(new std::atomic<GenericDeviceTy *>[NumDevices]);
  for (int32_t I = 0; I < NumDevices; ++I)
    ReadyDevices[I].store(nullptr, std::memory_order_relaxed);
  Initialized = true;
  Info.print(~0u, -1, "{0} devices", NumDevices);
  return Error::success();
}

Error GenericPluginTy::initDevice(int32_t DeviceId) {
  if (DeviceId < 0 || DeviceId >= NumDevices)
    return makeError(ErrorCode::InvalidDevice,
                     "device {0} does not exist: the {1} plugin has {2} devices",
                     DeviceId, getName(), NumDevices);
  // Before InitLock: a parent thread may have held it at the fork.
  if (LLVM_UNLIKELY(ForkGuard.inForkedChild()))
    return makeForkedDeviceError(DeviceId);
  std::lock_guard<std::mutex> Guard(InitLock);
  if (Devices[DeviceId])
    return Error::success();
  // From the first device on, the vendor runtime and our threads are this
  // process's: children forked later must not use them.
  ForkGuard.arm();
  auto Device = createDeviceImpl(DeviceId);
  if (!Device)
    return Device.takeError();
  if (auto Err = (*Device)->init())
    return Err;
  DeviceIO[DeviceId] = std::make_unique<DeviceIOTy>(
      **Device, Sys, [this](const IOConfigTy &Config) -> IOWorkerPoolTy & {
        return getIOWorkers(Config);
      });
  (*Device)->setIOService(DeviceIO[DeviceId].get());
  Devices[DeviceId] = std::move(*Device);
  // Release: other threads that see the pointer see a fully built device.
  ReadyDevices[DeviceId].store(Devices[DeviceId].get(),
                               std::memory_order_release);
  return Error::success();
}

Expected<GenericDeviceTy &> GenericPluginTy::getDevice(int32_t DeviceId) {
  if (DeviceId < 0 || DeviceId >= NumDevices)
    return makeError(ErrorCode::InvalidDevice,
                     "device {0} does not exist: the {1} plugin has {2} devices",
                     DeviceId, getName(), NumDevices);
  if (LLVM_UNLIKELY(ForkGuard.inForkedChild()))
    return makeForkedDeviceError(DeviceId);
  GenericDeviceTy *Device =
      ReadyDevices[DeviceId].load(std::memory_order_acquire);
  if (!Device)
    return makeError(ErrorCode::InvalidDevice,
                     "device {0} of the {1} plugin is not initialised",
                     DeviceId, getName());
  return *Device;
}

Error GenericPluginTy::makeForkedDeviceError(int32_t DeviceId) const {
  // Devices[] is the parent's copy: it tells which devices it had set up.
  bool Initialised = DeviceId >= 0 && DeviceId < NumDevices &&
                     ReadyDevices[DeviceId].load(std::memory_order_acquire);
  std::string Detail =
      Initialised ? std::string("initialised it")
      : vendorRuntimeStartsAtInit()
          ? "started the vendor runtime of the " + getName() + " plugin"
          : "initialised devices of the " + getName() + " plugin";
  return ForkGuard.makeForkedError("device " + std::to_string(DeviceId),
                                   Detail);
}

Error GenericPluginTy::makeForkedError(const llvm::Twine &What) const {
  return ForkGuard.makeForkedError(What, "initialised the " + getName() +
                                             " plugin's devices");
}

bool GenericPluginTy::isValidBinary(const __tgt_device_image &Image,
                                    const char *Arch) {
  if (!Image.ImageStart || Image.ImageEnd <= Image.ImageStart)
    return false;
  llvm::StringRef Bytes(static_cast<const char *>(Image.ImageStart),
                        static_cast<const char *>(Image.ImageEnd) -
                            static_cast<const char *>(Image.ImageStart));
  if (!isBitcodeImage(Bytes))
    return isImageCompatibleImpl(Image, Arch ? Arch : "");
  if (getJITTripleImpl().empty())
    return false;
  auto Target = readBitcodeTarget(Bytes);
  if (!Target) {
    Info.print(InfoPluginKernel, -1, "bitcode image at {0} refused: {1}",
               Image.ImageStart, takeErrorMessage(Target.takeError()));
    return false;
  }
  if (!isSameArchitecture(Target->Triple, getJITTripleImpl())) {
    Info.print(InfoPluginKernel, -1,
               "bitcode image at {0} is for '{1}', not for '{2}'",
               Image.ImageStart, Target->Triple, getJITTripleImpl());
    return false;
  }
  return isBitcodeCompatibleImpl(Target->CPU, Arch ? Arch : "");
}

bool GenericPluginTy::isDataExchangable(int32_t SrcId, int32_t DstId) {
  if (SrcId < 0 || DstId < 0 || SrcId >= NumDevices || DstId >= NumDevices)
    return false;
  return isDataExchangableImpl(SrcId, DstId);
}

Error GenericPluginTy::flush() {
  // A forked child has the parent's streams without their threads: waiting
  // for them would never end, and the work was the parent's to finish.
  if (ForkGuard.inForkedChild())
    return Error::success();
  // One teardown for every device: the driver is the process's, so its
  // first answer that it has shut down ends the waits of all of them.
  TeardownTy Teardown;
  for (int32_t I = 0; I < NumDevices; ++I)
    if (GenericDeviceTy *Device =
            ReadyDevices[I].load(std::memory_order_acquire)) {
      // libomptarget 18 has no deinit: its images' destructors run here,
      // at exit.
      Device->runImageDestructors(Teardown);
      Device->drain(Teardown);
    }
  return Teardown.finish();
}

bool GenericPluginTy::interceptProbeAlloc(int32_t LocalId, void *&Result) {
  // Acquire pairs with the release in resolveGlobalDeviceId so the thread id
  // read below is the probing thread's.
  if (!ProbeActive.load(std::memory_order_acquire) ||
      ProbeThread.load(std::memory_order_relaxed) != std::this_thread::get_id())
    return false;
  ProbedLocalId = LocalId;
  Result = &ProbeToken;
  return true;
}

Expected<int32_t> GenericPluginTy::resolveGlobalDeviceId(int32_t GlobalId) {
  std::lock_guard<std::mutex> Guard(ProbeLock);
  auto NotOurs = [&]() {
    return makeError(ErrorCode::InvalidDevice,
                     "OpenMP device {0} is not a device of the {1} plugin",
                     GlobalId, getName());
  };
  auto InRange = [&](int32_t Local) -> Expected<int32_t> {
    if (Local >= 0 && Local < NumDevices)
      return Local;
    return NotOurs();
  };
  if (GlobalIdOffset)
    return InRange(GlobalId - *GlobalIdOffset);
  // A plugin without devices has none to find, and must not probe:
  // libomptarget 18 gives such a plugin no offset and aborts the program on
  // omp_target_alloc of a device number it does not have.
  if (NumDevices <= 0)
    return InRange(GlobalId);

  // libomptarget hands data_lock, data_unlock and the interop entry points
  // its global device number, which is offset by the devices of plugins
  // used before ours; nothing in the ABI tells us that offset. Ask
  // libomptarget itself: omp_target_alloc(1, GlobalId) reaches our data_alloc
  // with the local number, which the probe records instead of allocating.
  using AllocFnTy = void *(*)(size_t, int);
  using FreeFnTy = void (*)(void *, int);
  auto *Alloc =
      reinterpret_cast<AllocFnTy>(dlsym(RTLD_DEFAULT, "omp_target_alloc"));
  auto *Free =
      reinterpret_cast<FreeFnTy>(dlsym(RTLD_DEFAULT, "omp_target_free"));
  if (!Alloc || !Free) {
    // Not loaded by libomptarget (unit tests): ids are already local.
    return InRange(GlobalId);
  }
  // Nor may it probe a number libomptarget does not have (18 aborts; 16
  // and 17 answer NULL, so no device of ours either).
  using NumDevicesFnTy = int (*)();
  auto *NumDevicesFn = reinterpret_cast<NumDevicesFnTy>(
      dlsym(RTLD_DEFAULT, "omp_get_num_devices"));
  if (NumDevicesFn && (GlobalId < 0 || GlobalId >= NumDevicesFn()))
    return NotOurs();
  ProbedLocalId = -1;
  ProbeThread.store(std::this_thread::get_id(), std::memory_order_relaxed);
  ProbeActive.store(true, std::memory_order_release);
  void *Ptr = Alloc(1, GlobalId);
  ProbeActive.store(false, std::memory_order_release);
  if (Ptr)
    Free(Ptr, GlobalId);
  if (ProbedLocalId < 0)
    return NotOurs();
  GlobalIdOffset = GlobalId - ProbedLocalId;
  Info.print(~0u, -1, "OpenMP device {0} is our device {1}", GlobalId,
             ProbedLocalId);
  return ProbedLocalId;
}

Expected<void *> GenericPluginTy::lockHostMemory(GenericDeviceTy &Device,
                                                 void *HstPtr, int64_t Size) {
  if (Size <= 0)
    return makeError(ErrorCode::InvalidArgument,
                     "cannot lock {0} bytes at {1} for device {2}: the size "
                     "must be positive",
                     Size, HstPtr, Device.getDeviceId());
  PinnedRegionInfoTy Shared;
  auto Ptr = PinnedMap.lock(HstPtr, size_t(Size), &Shared);
  if (!Ptr)
    return Ptr;
  // The plugin cannot see free(): a lock that lands inside a region still
  // locked is legitimate (a sub-buffer), but it is also what happens when
  // the program freed locked memory and got the address back from malloc,
  // and then the region no longer describes the memory. Name the region so
  // that such a program can be found.
  if (Shared.HstPtr) {
    uintptr_t Start = reinterpret_cast<uintptr_t>(HstPtr);
    uintptr_t RegionStart = reinterpret_cast<uintptr_t>(Shared.HstPtr);
    Info.print(~0u, Device.getDeviceId(),
               "the lock of [{0:x}, {1:x}) ({2} bytes) lands inside the "
               "locked region [{3:x}, {4:x}) ({5} bytes, {6} references) "
               "and shares it; if the program freed that region's memory "
               "without unlocking it, the region is stale: memory must be "
               "unlocked before it is freed",
               Start, Start + uint64_t(Size), Size, RegionStart,
               RegionStart + Shared.Size, Shared.Size, Shared.References);
  }
  Info.print(InfoDataTransfer, Device.getDeviceId(),
             "locked {0} bytes at {1}, device-accessible at {2}", Size, HstPtr,
             *Ptr);
  return Ptr;
}

Error GenericPluginTy::unlockHostMemory(GenericDeviceTy &Device,
                                        void *HstPtr) {
  if (auto Err = PinnedMap.unlock(HstPtr))
    return Err;
  Info.print(InfoDataTransfer, Device.getDeviceId(), "unlocked {0}", HstPtr);
  return Error::success();
}

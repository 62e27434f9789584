// SPDX-License-Identifier: Apache-2.0
//
// GenericDeviceTy's lifecycle (init, deinit, images), queues, events, kernel
// launches and device information. Memory bookkeeping is in DeviceMemory.cpp,
// host <-> device copies in DeviceTransfers.cpp.
#include "offloadio/Device.h"
#include "offloadio/BitcodeImage.h"
#include "offloadio/Plugin.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/Format.h"

#include <cinttypes>
#include <cstring>
#include <ctime>

using namespace offloadio;

GenericDeviceTy::GenericDeviceTy(GenericPluginTy &Plugin, int32_t DeviceId)
    : Plugin(Plugin), DeviceId(DeviceId),
      Services(Plugin.getDeviceServices()),
      Pinned(Plugin.getPinnedBudget(), static_cast<PinnedAllocatorTy &>(*this)),
      Streams([this] { return createStreamImpl(); }),
      Events([this] { return createEventImpl(); }) {}

GenericDeviceTy::~GenericDeviceTy() = default;

Error GenericDeviceTy::init() {
  if (auto Err = initImpl(Limits))
    return Err;
  Settings = DeviceSettingsTy::fromEnv(Limits.MaxDynamicSharedMemory);
  HostPlacement.set(placeOnHost(), &Services.Info, DeviceId);
  deriveLaunchLimits(Limits, Settings.NumTeams, Settings.TeamsThreadLimit);

  if (Settings.MemoryManagerThreshold)
    MemoryManager = std::make_unique<MemoryManagerTy>(
        static_cast<BlockAllocatorTy &>(*this),
        Settings.MemoryManagerThreshold);

  size_t CaptureLimit = getPageableCaptureLimit();
  Policy = TransferPolicyTy(Settings.Transfers, CaptureLimit);

  // What every image's device runtime reads, the same for each image.
  DeviceEnv.DebugKind = Settings.DeviceRTLDebug;
  DeviceEnv.NumDevices = uint32_t(Plugin.getNumDevices());
  DeviceEnv.DeviceNum = uint32_t(DeviceId);
  DeviceEnv.DynamicMemSize = Settings.SharedMemorySize;
  DeviceEnv.ClockFrequency =
      Limits.ClockFrequency ? Limits.ClockFrequency : CLOCKS_PER_SEC;
  DeviceEnv.HardwareParallelism = Limits.HardwareParallelism;

  Staging = std::make_unique<StagingPoolTy>(
      Settings.StagingBufferSize, Settings.StagingBuffers, Pinned,
      "a staging buffer of device " + std::to_string(DeviceId));
  // Small downloads the backend could capture get a bounce buffer of that
  // size; without a capture limit none takes this route.
  if (CaptureLimit)
    SmallDownloads = std::make_unique<StagingPoolTy>(
        CaptureLimit, MaxSmallDownloadBuffers, Pinned,
        "a small-download buffer of device " + std::to_string(DeviceId));

  if (auto Err = Streams.grow(Settings.InitialStreams))
    return Err;
  return Events.grow(Settings.InitialEvents);
}

CpuPlacementTy GenericDeviceTy::placeOnHost() {
  if (!Services.Topology)
    return CpuPlacementTy::none(
        std::string(settingDecl(SettingId::NumaPlacement).Name) + " is off");
  auto Address = getPCIAddressImpl();
  if (!Address)
    return CpuPlacementTy::none("its PCI address is unknown: " +
                                takeErrorMessage(Address.takeError()));
  if (Address->empty())
    return CpuPlacementTy::none("the " + Services.PluginName +
                                " plugin's devices are not PCI devices");
  // The mask of the thread that initialises the device: the process's,
  // as far as the plugin can tell (ProcessShare.h reads it so too).
  CpuSetTy Mask;
  if (int Errno = Services.Affinity.getThreadAffinity(Mask))
    return CpuPlacementTy::none(std::string("sched_getaffinity failed: ") +
                                std::strerror(Errno));
  return Services.Topology->place(*Address, Mask);
}

Error GenericDeviceTy::drain() {
  TeardownTy Teardown;
  drain(Teardown);
  return Teardown.finish();
}

void GenericDeviceTy::drain(TeardownTy &Teardown) {
  Streams.forEach([&](StreamTy &S) {
    Teardown.run([&] { return S.synchronize(); });
    Teardown.run([&] { return S.flushDeviceOutput(); });
    // Copy-outs nobody waited for: their destinations may be gone, but
    // their bounce buffers still go back, whatever the driver's state.
    Teardown.add(S.cancelDeferred());
  });
}

Error GenericDeviceTy::deinit() {
  // Steps that call the vendor driver go through Teardown, which skips
  // them once the driver has shut down; the framework's own bookkeeping
  // is undone either way. What the skipped steps would have released
  // (streams, events, the backend's objects) is destroyed with the device.
  TeardownTy Teardown;
  // The images' destructors run while the device is still whole.
  runImageDestructors(Teardown);
  // Workers hold streams and buffers of this device: stop them first.
  if (IOService)
    IOService->stop();
  drain(Teardown);
  if (MemoryManager)
    MemoryManager->releaseAll(Teardown);
  // The pools first: buffers still on their way back hold events of this
  // device until their copies are done.
  Staging->clear(Teardown);
  if (SmallDownloads)
    SmallDownloads->clear(Teardown);
  Events.clear();
  Streams.clear();
  {
    std::lock_guard<std::mutex> Guard(ImagesLock);
    for (auto &Image : Images)
      Teardown.run([&] { return freeImageMemory(*Image); });
    Images.clear();
  }
  Teardown.run([&] { return deinitImpl(); });
  return Teardown.finish();
}

Expected<DeviceImageTy *>
GenericDeviceTy::loadBinary(const __tgt_device_image &TgtImage) {
  std::lock_guard<std::mutex> Guard(ImagesLock);
  // A bitcode image (-fopenmp-target-jit) is compiled for this device's
  // processor first; the compiled image keeps the registered one's entries.
  std::unique_ptr<__tgt_device_image> Compiled;
  auto CompiledBytes = compileBitcodeImage(TgtImage);
  if (!CompiledBytes)
    return CompiledBytes.takeError();
  if (*CompiledBytes) {
    Compiled = std::make_unique<__tgt_device_image>(TgtImage);
    Compiled->ImageStart = const_cast<char *>((*CompiledBytes)->data());
    Compiled->ImageEnd =
        const_cast<char *>((*CompiledBytes)->data() + (*CompiledBytes)->size());
  }
  auto ImageOrErr =
      loadImageImpl(Compiled ? *Compiled : TgtImage, Images.size());
  if (!ImageOrErr)
    return ImageOrErr.takeError();
  DeviceImageTy &Image = **ImageOrErr;
  if (Compiled)
    Image.keepCompiledImage(std::move(Compiled));
  // An image that fails to load takes its pool and table with it.
  auto FreeImageMemory = llvm::make_scope_exit(
      [&] { llvm::consumeError(freeImageMemory(Image)); });
  auto HasEnvironment = writeDeviceEnvironment(Image);
  if (!HasEnvironment)
    return HasEnvironment.takeError();
  // As the stock plugin, only an image that takes a device environment
  // (not the host's) gets the table, which that environment then names.
  if (*HasEnvironment) {
    if (auto Err = setUpIndirectCallTable(Image, TgtImage))
      return std::move(Err);
    if (Image.IndirectCallTable)
      if (auto Rewritten = writeDeviceEnvironment(Image); !Rewritten)
        return Rewritten.takeError();
  }
  if (auto Err = setUpDeviceMemoryPool(Image))
    return std::move(Err);

  // The table must match the image's entries one to one, in order.
  for (const __tgt_offload_entry *E = TgtImage.EntriesBegin;
       E != TgtImage.EntriesEnd; ++E) {
    __tgt_offload_entry Entry = *E;
    if (!E->name)
      return makeError(ErrorCode::InvalidImage,
                       "image {0} has an entry without a name", Image.getId());
    if (E->size == 0) {
      auto Kernel = constructKernelImpl(Image, E->name);
      if (!Kernel)
        return Kernel.takeError();
      Services.Info.print(InfoPluginKernel, DeviceId, "kernel {0}: {1} mode{2}",
                          E->name, execModeName((*Kernel)->getExecMode()),
                          (*Kernel)->writesDeviceOutput() ? ", may print" : "");
      Entry.addr = &Image.addKernel(std::move(*Kernel));
    } else {
      auto Addr = getGlobalAddressImpl(Image, E->name, E->size);
      if (!Addr)
        return Addr.takeError();
      Entry.addr = *Addr;
    }
    Image.Entries.push_back(Entry);
  }
  Image.sealEntries();
  Services.Info.print(
      InfoPluginKernel, DeviceId, "loaded image {0} ({1} bytes, {2} entries)",
      Image.getId(), Image.getBytes().size(), Image.Entries.size());
  if (auto Err = runImageConstructors(Image))
    return std::move(Err);
  FreeImageMemory.release();
  Images.push_back(std::move(*ImageOrErr));
  return Images.back().get();
}

Expected<std::optional<llvm::StringRef>>
GenericDeviceTy::compileBitcodeImage(const __tgt_device_image &TgtImage) {
  llvm::StringRef Bytes(static_cast<const char *>(TgtImage.ImageStart),
                        static_cast<const char *>(TgtImage.ImageEnd) -
                            static_cast<const char *>(TgtImage.ImageStart));
  if (!isBitcodeImage(Bytes))
    return std::nullopt;
  JITTargetTy *Target = getJITTargetImpl();
  if (!Target)
    return makeError(ErrorCode::Unsupported,
                     "bitcode image at {0} on device {1}: the {2} plugin "
                     "compiles no bitcode images",
                     TgtImage.ImageStart, DeviceId, Services.PluginName);
  size_t Before = Services.JIT.numCompiledImages();
  auto Image = Services.JIT.getImage(Bytes, *Target);
  if (!Image)
    return makeError(ErrorCode::InvalidImage,
                     "cannot compile the bitcode image at {0} ({1} bytes) "
                     "for {2} on device {3}: {4}",
                     TgtImage.ImageStart, Bytes.size(), Target->getCPU(),
                     DeviceId, takeErrorMessage(Image.takeError()));
  Services.Info.print(
      InfoPluginKernel, DeviceId, "bitcode image at {0} {1} for {2}: {3} bytes",
      TgtImage.ImageStart,
      Services.JIT.numCompiledImages() != Before ? "compiled"
                                                 : "already compiled",
      Target->getCPU(), Image->size());
  return std::optional<llvm::StringRef>(*Image);
}

Expected<bool> GenericDeviceTy::writeDeviceEnvironment(DeviceImageTy &Image) {
  // An image without either global (no OpenMP device runtime linked)
  // needs none.
  DeviceEnvironmentTy Env = DeviceEnv;
  Env.IndirectCallTable = reinterpret_cast<uintptr_t>(Image.IndirectCallTable);
  Env.IndirectCallTableSize = Image.IndirectCallTableSize;
  llvm::SmallVector<char, 48> Bytes =
      Services.RuntimeABI.encodeDeviceEnvironment(Env);
  for (const char *Symbol : DeviceEnvironmentSymbols) {
    auto Written =
        writeImageGlobalImpl(Image, Symbol, Bytes.data(), Bytes.size());
    if (!Written)
      return Written.takeError();
    if (*Written)
      return true;
  }
  return false;
}

Error GenericDeviceTy::setUpDeviceMemoryPool(DeviceImageTy &Image) {
  const DeviceRuntimeABITy &ABI = Services.RuntimeABI;
  if (!ABI.takesDeviceMemoryPool() || !Limits.DeviceHeapSize)
    return Error::success();
  // Only an image whose device runtime tracks the pool gets one (the stock
  // plugin's test): the tracker starts from scratch.
  llvm::SmallVector<char, 32> Tracker = ABI.encodeDeviceMemoryPoolTracker();
  auto HasPool = writeImageGlobalImpl(Image, DeviceMemoryPoolTrackerSymbol,
                                      Tracker.data(), Tracker.size());
  if (!HasPool)
    return HasPool.takeError();
  if (!*HasPool)
    return Error::success();
  // One pool per image: each image's runtime bumps the pointer in its own
  // global, so two images sharing memory would hand out the same bytes.
  uint64_t Size = Limits.DeviceHeapSize;
  auto Pool = allocateMemory(Size, AllocKindTy::Device);
  if (!Pool) {
    // As the stock plugin: the image still loads, with an empty pool on
    // which a device malloc fails.
    Services.Info.error(DeviceId,
                        "no pool for device-side malloc of image " +
                            std::to_string(Image.getId()) + ": " +
                            takeErrorMessage(Pool.takeError()));
    Size = 0;
  } else {
    Image.DeviceMemoryPool = *Pool;
  }
  llvm::SmallVector<char, 32> Bytes =
      ABI.encodeDeviceMemoryPool(Image.DeviceMemoryPool, Size);
  auto Written = writeImageGlobalImpl(Image, DeviceMemoryPoolSymbol,
                                      Bytes.data(), Bytes.size());
  if (!Written)
    return Written.takeError();
  if (!*Written)
    return makeError(ErrorCode::InvalidImage,
                     "image {0} on device {1} has '{2}' but not '{3}'",
                     Image.getId(), DeviceId, DeviceMemoryPoolTrackerSymbol,
                     DeviceMemoryPoolSymbol);
  Services.Info.print(InfoPluginKernel, DeviceId,
                      "image {0}: device-side malloc pool of {1} bytes at {2}",
                      Image.getId(), Size, Image.DeviceMemoryPool);
  return Error::success();
}

Expected<KernelConfigTy>
GenericDeviceTy::readKernelConfig(const DeviceImageTy &Image,
                                  llvm::StringRef Name) const {
  auto Config = Services.RuntimeABI.readKernelConfig(Image.getBytes(), Name);
  if (!Config)
    return makeError(ErrorCode::InvalidImage, "image {0} on device {1}: {2}",
                     Image.getId(), DeviceId,
                     takeErrorMessage(Config.takeError()));
  return *Config;
}

Error GenericDeviceTy::checkTransferArgs(const char *What, const void *Dst,
                                         const void *Src, int64_t Size) const {
  if (Size < 0)
    return makeError(ErrorCode::InvalidArgument,
                     "{0} of {1} bytes on device {2}: negative size", What,
                     Size, DeviceId);
  if (Size > 0 && (!Dst || !Src))
    return makeError(ErrorCode::InvalidArgument,
                     "{0} of {1} bytes on device {2}: null pointer (dst {3}, "
                     "src {4})",
                     What, Size, DeviceId, Dst, Src);
  return Error::success();
}

Error GenericDeviceTy::dataExchange(const void *SrcPtr,
                                    GenericDeviceTy &DstDevice, void *DstPtr,
                                    int64_t Size, __tgt_async_info *AsyncInfo) {
  if (auto Err = checkTransferArgs("exchange", DstPtr, SrcPtr, Size))
    return Err;
  if (Size == 0)
    return Error::success();
  bool ByPeerAccess = false;
  if (&DstDevice != this) {
    auto Answer = PeerAccess.hasPeerAccess(DstDevice.getDeviceId(), [&] {
      return enablePeerAccessImpl(DstDevice);
    });
    // The copy still has the vendor's indirect route: say why it takes it.
    if (!Answer)
      Services.Info.error(DeviceId,
                          "peer access to device " +
                              std::to_string(DstDevice.getDeviceId()) +
                              " not enabled, copies to it go through the "
                              "host: " +
                              takeErrorMessage(Answer.takeError()));
    ByPeerAccess = Answer && *Answer;
  }
  Services.Info.print(InfoDataTransfer, DeviceId,
                      "exchange {0} bytes device {1} {2} -> device {3} "
                      "{4}{5}",
                      Size, DeviceId, SrcPtr, DstDevice.getDeviceId(), DstPtr,
                      ByPeerAccess ? " (peer access)" : "");
  AsyncInfoWrapperTy Wrapper(*this, AsyncInfo);
  auto Stream = Wrapper.getStream();
  if (!Stream)
    return Wrapper.finalize(Stream.takeError());
  countTransfer(TransferPathTy::DeviceToDevice, Size);
  return Wrapper.finalize(
      dataExchangeImpl(SrcPtr, DstDevice, DstPtr, Size, *Stream));
}

Error GenericDeviceTy::dataExchangeImpl(const void *SrcPtr,
                                        GenericDeviceTy &DstDevice,
                                        void *DstPtr, size_t Size,
                                        StreamTy &Stream) {
  return Stream.copyAsync(DstPtr, SrcPtr, Size, CopyKindTy::DeviceToDevice);
}

Error GenericDeviceTy::launchKernel(void *EntryPtr, void **TgtArgs,
                                    ptrdiff_t *TgtOffsets,
                                    const KernelArgsTy &KernelArgs,
                                    __tgt_async_info *AsyncInfo) {
  if (!EntryPtr)
    return makeError(ErrorCode::InvalidArgument,
                     "launch of a null kernel on device {0}", DeviceId);
  if (KernelArgs.NumArgs && (!TgtArgs || !TgtOffsets))
    return makeError(ErrorCode::InvalidArgument,
                     "launch with {0} arguments but no argument arrays on "
                     "device {1}",
                     KernelArgs.NumArgs, DeviceId);
  auto &Kernel = *static_cast<GenericKernelTy *>(EntryPtr);
  AsyncInfoWrapperTy Wrapper(*this, AsyncInfo);
  auto Stream = Wrapper.getStream();
  if (!Stream)
    return Wrapper.finalize(Stream.takeError());
  return Wrapper.finalize(
      Kernel.launch(*this, TgtArgs, TgtOffsets, KernelArgs, *Stream));
}

Error GenericDeviceTy::synchronize(__tgt_async_info &AsyncInfo) {
  auto *Stream = static_cast<StreamTy *>(AsyncInfo.Queue);
  if (!Stream)
    return Error::success();
  Error Err = Stream->synchronize();
  // Device printf output must be on the host before the caller's next
  // line, as with a plain driver wait.
  Err = llvm::joinErrors(std::move(Err), Stream->flushDeviceOutput());
  // Deferred host work (copy-outs of small downloads) runs even after an
  // error: it also returns the bounce buffers.
  Err = llvm::joinErrors(std::move(Err), Stream->runDeferred());
  // Reset even on error: libomptarget only post-processes (and frees its
  // buffers) once Queue is null, and the stream is clean again.
  AsyncInfo.Queue = nullptr;
  Streams.release(Stream);
  return Err;
}

Error GenericDeviceTy::queryAsync(__tgt_async_info &AsyncInfo) {
  auto *Stream = static_cast<StreamTy *>(AsyncInfo.Queue);
  if (!Stream)
    return Error::success();
  auto Done = Stream->query();
  if (Done && !*Done)
    return Error::success();
  Error Err = Done ? Error::success() : Done.takeError();
  Err = llvm::joinErrors(std::move(Err), Stream->flushDeviceOutput());
  Err = llvm::joinErrors(std::move(Err), Stream->runDeferred());
  AsyncInfo.Queue = nullptr;
  Streams.release(Stream);
  return Err;
}

Expected<EventTy *> GenericDeviceTy::createEvent() { return Events.acquire(); }

Error GenericDeviceTy::recordEvent(EventTy &Event,
                                   __tgt_async_info &AsyncInfo) {
  AsyncInfoWrapperTy Wrapper(*this, &AsyncInfo);
  auto Stream = Wrapper.getStream();
  if (!Stream)
    return Stream.takeError();
  // Whoever waits for the event must find the stream's small downloads in
  // their destinations, not still in bounce buffers.
  if (auto Err = Stream->enqueueDeferred())
    return Err;
  return Stream->recordEvent(Event);
}

Error GenericDeviceTy::waitEvent(EventTy &Event, __tgt_async_info &AsyncInfo) {
  AsyncInfoWrapperTy Wrapper(*this, &AsyncInfo);
  auto Stream = Wrapper.getStream();
  if (!Stream)
    return Stream.takeError();
  return Stream->waitEvent(Event);
}

Error GenericDeviceTy::syncEvent(EventTy &Event) { return Event.synchronize(); }

Error GenericDeviceTy::destroyEvent(EventTy &Event) {
  Events.release(&Event);
  return Error::success();
}

Error GenericDeviceTy::initAsyncInfo(__tgt_async_info *&AsyncInfo) {
  auto Owned = std::make_unique<__tgt_async_info>();
  Owned->Queue = nullptr;
  AsyncInfoWrapperTy Wrapper(*this, Owned.get());
  auto Stream = Wrapper.getStream();
  if (!Stream)
    return Stream.takeError();
  AsyncInfo = Owned.release();
  return Error::success();
}

Error GenericDeviceTy::initDeviceInfo(__tgt_device_info &DeviceInfo) {
  return initDeviceInfoImpl(DeviceInfo);
}

void GenericDeviceTy::printInfoLine(llvm::raw_ostream &OS,
                                    llvm::StringRef Key,
                                    const llvm::Twine &Value) {
  OS << "    " << llvm::left_justify(Key, 30) << Value << "\n";
}

void GenericDeviceTy::printInfo(llvm::raw_ostream &OS) {
  auto Line = [&](llvm::StringRef Key, const llvm::Twine &Value) {
    printInfoLine(OS, Key, Value);
  };
  Line("offload-io plugin:", Services.PluginName);
  Line("Device number:", llvm::Twine(DeviceId));
  printInfoImpl(OS);
  Line("Maximum teams:", llvm::Twine(Limits.MaxTeams));
  Line("Maximum threads per team:", llvm::Twine(Limits.MaxThreads));
  Line("Default teams / threads:", llvm::Twine(Limits.DefaultTeams) + " / " +
                                       llvm::Twine(Limits.DefaultThreads));
  Line("Streams (pooled / free):", llvm::Twine(Streams.capacity()) + " / " +
                                       llvm::Twine(Streams.available()));
  Line("Staging buffers (max / held):",
       llvm::Twine(Staging->getMaxBuffers()) + " x " +
           llvm::Twine(Staging->getBufferSize()) + " bytes / " +
           llvm::Twine(Staging->allocated()));
  Line("Host placement:", HostPlacement.get().describe() +
                              (HostPlacement.stopped() ? " (stopped)" : ""));
  Line("Small-allocation cache:",
       MemoryManager ? llvm::Twine("enabled") : llvm::Twine("disabled"));
  PinnedBudgetStatsTy Budget = Plugin.getPinnedBudget().getStats();
  Line("Pinned budget (cap / held / peak):",
       llvm::Twine(Budget.Cap) + " / " + llvm::Twine(Budget.Used) + " / " +
           llvm::Twine(Budget.Peak) + " bytes");
}

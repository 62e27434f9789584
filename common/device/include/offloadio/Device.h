// SPDX-License-Identifier: Apache-2.0
//
// GenericDeviceTy: one device of a plugin. Each public method does the
// shared bookkeeping (argument checks, pools, async info, info lines) and
// calls a backend ...Impl that only translates to the vendor API.
#ifndef OFFLOADIO_DEVICE_H
#define OFFLOADIO_DEVICE_H

#include "offloadio/ABI.h"
#include "offloadio/AllocationRegistry.h"
#include "offloadio/AsyncInfoWrapper.h"
#include "offloadio/DeviceEnvironment.h"
#include "offloadio/DeviceIOService.h"
#include "offloadio/DeviceServices.h"
#include "offloadio/DeviceImage.h"
#include "offloadio/Error.h"
#include "offloadio/ForeignMemory.h"
#include "offloadio/Kernel.h"
#include "offloadio/MemoryManager.h"
#include "offloadio/PeerAccess.h"
#include "offloadio/PinnedPool.h"
#include "offloadio/ResourcePool.h"
#include "offloadio/StagingPool.h"
#include "offloadio/Teardown.h"
#include "offloadio/Settings.h"
#include "offloadio/TransferPolicy.h"
#include "offloadio/Stream.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace offloadio {

class GenericPluginTy;
class IOFastpathTy;

/// Static properties a backend reports for its device. The launch figures
/// are the device's and its vendor's numbers as the backend reports them;
/// GenericDeviceTy::init() makes them the device's launch limits
/// (deriveLaunchLimits, LaunchGeometry.h), which getLimits() returns.
struct DeviceLimitsTy {
  uint32_t MaxTeams = 1;          ///< Upper bound on teams per launch.
  uint32_t MaxThreads = 1;        ///< Upper bound on threads per team.
  /// Teams when the program says nothing, and the cap on teams derived
  /// from a loop's trip count.
  uint32_t DefaultTeams = 1;
  uint32_t DefaultThreads = 1;    ///< Threads when the program says nothing.
  /// Threads the device runtime keeps for a generic-mode team's main thread.
  uint32_t WarpSize = 1;
  /// The vendor's bound on threads per team, below the device's.
  uint32_t ThreadsCap = UINT32_MAX;
  /// The vendor's bound on teams per launch, below the device's.
  uint32_t TeamsCap = UINT32_MAX;
  /// Most threads of one launch (teams x threads); 0: only MaxTeams bounds
  /// the teams.
  uint64_t MaxGridThreads = 0;
  bool HostCanAccessDeviceMemory = false; ///< Device pointers are host addresses.
  /// Most dynamic shared (group) memory a launch may get: the upper bound
  /// of LIBOMPTARGET_SHARED_MEMORY_SIZE.
  uint64_t MaxDynamicSharedMemory = 0;
  /// Ticks per second of the device clock the device runtime's
  /// omp_get_wtime reads; 0: the backend does not know (the device
  /// environment then says CLOCKS_PER_SEC, as the stock plugins do).
  uint64_t ClockFrequency = 0;
  /// Threads (waves, warps) the device runs at once, for the device
  /// runtime; 0 if the backend does not say.
  uint64_t HardwareParallelism = 0;
  /// Bytes of device memory each image's device-side malloc allocates from,
  /// where the device runtime asks the plugin for such a pool
  /// (DeviceRuntimeABITy::takesDeviceMemoryPool); 0: none (the vendor's
  /// malloc serves it, as on CUDA).
  uint64_t DeviceHeapSize = 0;
};

/// How one piece of a copy was served (the counters' index).
enum class TransferPathTy : unsigned {
  PinnedToDevice,   ///< Host -> device from a locked region, by DMA.
  PinnedFromDevice, ///< Device -> host into a locked region, by DMA.
  /// Host -> device from memory that is not locked, without locking it:
  /// through pooled bounce buffers, or handed to a backend that captures
  /// it at enqueue (CopyRouteTy::BackendCaptures).
  PageableToDevice,
  /// Device -> host into memory that is not locked, without locking it:
  /// through pooled bounce buffers, a small-download buffer, or, when none
  /// is free, the backend's own pageable copy.
  PageableFromDevice,
  /// Host -> device, memory locked for the copy only
  /// (OFFLOADIO_PAGEABLE_PATH=lock).
  LockedToDevice,
  /// Device -> host, memory locked for the copy only
  /// (OFFLOADIO_PAGEABLE_PATH=lock).
  LockedFromDevice,
  DeviceToDevice, ///< Between device allocations.
  NumPaths
};

/// Per-path byte and operation counters of one device.
struct TransferCountersTy {
  /// Bytes per TransferPathTy.
  std::atomic<uint64_t> Bytes[unsigned(TransferPathTy::NumPaths)] = {};
  /// Copies per TransferPathTy.
  std::atomic<uint64_t> Operations[unsigned(TransferPathTy::NumPaths)] = {};
};

/// One device; created by the plugin at init_device.
class GenericDeviceTy : private BlockAllocatorTy, private PinnedAllocatorTy {
public:
  GenericDeviceTy(GenericPluginTy &Plugin, int32_t DeviceId);
  ~GenericDeviceTy() override;

  /// Bring the device up: backend init, pools, memory manager.
  Error init();
  /// Release pooled resources; the device can be initialised again. A
  /// teardown (TeardownTy): success once the vendor driver has shut down.
  Error deinit();
  /// Wait for all work on every stream of the device. A teardown, as
  /// deinit().
  Error drain();
  /// drain() as a step of \p Teardown: stops at the driver's first answer
  /// that it has shut down.
  void drain(TeardownTy &Teardown);
  /// Run the global destructors of the images loaded whose device runtime
  /// leaves them to the plugin (DeviceRuntimeABITy::runsImageConstructors),
  /// each once, the last image loaded first.
  Error runImageDestructors();
  /// runImageDestructors() as a step of \p Teardown: none is launched once
  /// the driver has shut down (the images went with it).
  void runImageDestructors(TeardownTy &Teardown);

  /// The plugin-local device number.
  int32_t getDeviceId() const { return DeviceId; }
  /// The owning plugin.
  GenericPluginTy &getPlugin() const { return Plugin; }
  /// What the device uses of the plugin.
  const DeviceServicesTy &getServices() const { return Services; }
  /// The backend's limits.
  const DeviceLimitsTy &getLimits() const { return Limits; }

  /// load_binary: load \p TgtImage and translate its entries; the image
  /// stays the device's.
  Expected<DeviceImageTy *> loadBinary(const __tgt_device_image &TgtImage);

  /// data_alloc: \p HstPtr is the mapped host address or null.
  Expected<void *> dataAlloc(int64_t Size, void *HstPtr, AllocKindTy Kind);
  /// data_delete.
  Error dataDelete(void *TgtPtr, AllocKindTy Kind);

  /// data_submit(_async): host -> device.
  Error dataSubmit(void *TgtPtr, const void *HstPtr, int64_t Size,
                   __tgt_async_info *AsyncInfo);
  /// data_retrieve(_async): device -> host.
  Error dataRetrieve(void *HstPtr, const void *TgtPtr, int64_t Size,
                     __tgt_async_info *AsyncInfo);
  /// data_exchange(_async): this device -> \p DstDevice.
  Error dataExchange(const void *SrcPtr, GenericDeviceTy &DstDevice,
                     void *DstPtr, int64_t Size, __tgt_async_info *AsyncInfo);

  /// launch_kernel.
  Error launchKernel(void *EntryPtr, void **TgtArgs, ptrdiff_t *TgtOffsets,
                     const KernelArgsTy &KernelArgs,
                     __tgt_async_info *AsyncInfo);

  /// synchronize: wait for the async info's work, then release its stream
  /// and reset Queue to null (libomptarget's post-processing waits for that).
  Error synchronize(__tgt_async_info &AsyncInfo);
  /// query_async: like synchronize if done; otherwise leaves it pending.
  Error queryAsync(__tgt_async_info &AsyncInfo);

  /// create_event.
  Expected<EventTy *> createEvent();
  /// record_event.
  Error recordEvent(EventTy &Event, __tgt_async_info &AsyncInfo);
  /// wait_event.
  Error waitEvent(EventTy &Event, __tgt_async_info &AsyncInfo);
  /// sync_event.
  Error syncEvent(EventTy &Event);
  /// destroy_event: the event goes back to the pool.
  Error destroyEvent(EventTy &Event);

  /// init_async_info (interop): a fresh async info with a stream.
  Error initAsyncInfo(__tgt_async_info *&AsyncInfo);
  /// init_device_info (interop).
  Error initDeviceInfo(__tgt_device_info &DeviceInfo);

  /// print_device_info.
  void printInfo(llvm::raw_ostream &OS);
  /// One aligned "Key: value" line of print_device_info.
  static void printInfoLine(llvm::raw_ostream &OS, llvm::StringRef Key,
                            const llvm::Twine &Value);

  /// The device's copy policy (set up at init).
  const TransferPolicyTy &getTransferPolicy() const { return Policy; }
  /// The device runtime's environment, filled at init.
  const DeviceEnvironmentTy &getDeviceEnvironment() const { return DeviceEnv; }
  /// What \p Image records about kernel \p Name's launches, read by the
  /// conventions of the libomptarget served; the error names the image and
  /// the device.
  Expected<KernelConfigTy> readKernelConfig(const DeviceImageTy &Image,
                                            llvm::StringRef Name) const;
  /// data_notify_mapped (libomptarget 17 and 18): lock the newly mapped
  /// \p HstPtr as LIBOMPTARGET_LOCK_MAPPED_HOST_BUFFERS says.
  Error notifyDataMapped(void *HstPtr, size_t Size) {
    return lockMappedBuffer(HstPtr, HstPtr, Size);
  }
  /// data_notify_unmapped: drop the lock notifyDataMapped took, if any.
  Error notifyDataUnmapped(void *HstPtr) { return unlockMappedBuffer(HstPtr); }
  /// LIBOMPTARGET_MIN_THREADS_FOR_LOW_TRIP_COUNT, read at init.
  uint32_t getMinThreadsForLowTripCount() const {
    return Settings.MinThreadsForLowTripCount;
  }
  /// The implicit first argument of a launch of a kernel configured as
  /// \p Config on \p Stream, where the device runtime takes one
  /// (DeviceRuntimeABITy::passesLaunchEnvironment): the sentinel when the
  /// kernel needs no reduction buffer; otherwise device memory of this
  /// launch alone holding a zeroed environment that points to a reduction
  /// buffer of ReductionDataSize x ReductionBufferLength bytes, uploaded on
  /// \p Stream without waiting for it. Both are freed once the stream is
  /// complete, by whoever synchronises it (StreamTy::releaseWhenComplete).
  Expected<void *> prepareLaunchEnvironment(const KernelConfigTy &Config,
                                            StreamTy &Stream);

  /// Stream pool access for components of common/ (transfer engines).
  Expected<StreamTy *> acquireStream() { return Streams.acquire(); }
  /// Give back a stream from acquireStream().
  void releaseStream(StreamTy *Stream) { Streams.release(Stream); }
  /// Event pool access for components of common/.
  Expected<EventTy *> acquireEvent() { return Events.acquire(); }
  /// Give back an event from acquireEvent().
  void releaseEvent(EventTy *Event) { Events.release(Event); }
  /// An event of the pool that returns itself when the lease goes.
  Expected<PoolLeaseTy<EventTy>> leaseEvent() {
    auto Event = Events.acquire();
    if (!Event)
      return Event.takeError();
    return PoolLeaseTy<EventTy>(Events, *Event);
  }

  /// Pinned host memory for engines of common/ (bounce buffers). It is the
  /// framework's, not the program's: the registry of the program's
  /// allocations never lists it.
  Expected<void *> allocatePinnedHost(size_t Size) {
    return allocateMemory(Size, AllocKindTy::Host);
  }
  /// Free memory from allocatePinnedHost.
  Error freePinnedHost(void *Ptr) { return freeMemory(Ptr); }
  /// The device's pinned host memory for its own use (bounce buffers, file
  /// staging, the backend's capture blocks): allocatePinnedHost's memory,
  /// every byte reserved in the plugin's pinned budget.
  PinnedPoolTy &getPinnedPool() { return Pinned; }

  /// Install the file service of the device (the plugin does, before
  /// the device is used): dataDelete waits through it for file transfers
  /// on the memory, deinit stops it. Not owned; null: the device has no
  /// file transfers.
  void setIOService(DeviceIOServiceTy *Service) { IOService = Service; }
  /// The backend's vendor storage DMA for the file engine, or null.
  IOFastpathTy *getIOFastpath() { return getIOFastpathImpl(); }

  /// Where the device's host threads (file workers) run: near the device
  /// when the host has several NUMA nodes (set at init).
  DevicePlacementTy &getHostPlacement() { return HostPlacement; }

  /// Counters of bytes moved per copy kind.
  const TransferCountersTy &getCounters() const { return Counters; }
  /// Count one copy (engines outside this class report here too).
  void countTransfer(TransferPathTy Path, uint64_t Bytes) {
    Counters.Bytes[unsigned(Path)].fetch_add(Bytes, std::memory_order_relaxed);
    Counters.Operations[unsigned(Path)].fetch_add(1, std::memory_order_relaxed);
  }
  /// The device's bounce-buffer pool.
  StagingPoolTy &getStagingPool() { return *Staging; }
  /// Most small-download bounce buffers per device (each of the backend's
  /// capture limit: 2 MiB pinned with 64 KiB).
  static constexpr unsigned MaxSmallDownloadBuffers = 32;

  /// Bytes from \p Ptr to the end of the allocation containing it, as the
  /// program asked for it, or SIZE_MAX when the registry does not know the
  /// allocation.
  size_t bytesAvailableFrom(const void *Ptr) const {
    auto Alloc = UserAllocations.find(Ptr);
    if (!Alloc)
      return SIZE_MAX;
    return static_cast<const char *>(Alloc->Ptr) + Alloc->Size -
           static_cast<const char *>(Ptr);
  }
  /// The allocation of the program that contains \p Ptr, with the size and
  /// kind the program asked for: dataAlloc registers each allocation it
  /// hands out and dataDelete forgets it, so memory the small-allocation
  /// cache keeps for reuse, the slack of its blocks and the framework's own
  /// pinned buffers are never found. Virtual for test devices that answer
  /// from their fake vendor's view.
  virtual std::optional<AllocationInfoTy>
  findAllocation(const void *Ptr) const {
    return UserAllocations.find(Ptr);
  }
  /// What the vendor's pointer query says of \p Ptr, memory that the
  /// program allocated outside OpenMP (ForeignMemory.h); Unknown when the
  /// backend cannot tell.
  Expected<ForeignMemoryTy> queryForeignMemory(const void *Ptr) {
    return queryForeignMemoryImpl(Ptr);
  }
  /// Number of the program's live allocations on this device and their
  /// bytes (device info).
  std::pair<size_t, size_t> getAllocationUsage() const {
    return UserAllocations.usage();
  }

protected:
  /// Backend initialisation; fills Limits.
  virtual Error initImpl(DeviceLimitsTy &Limits) = 0;
  /// Backend teardown of what initImpl created.
  virtual Error deinitImpl() = 0;
  /// The JIT's view of this device, or null when the backend compiles no
  /// bitcode images (the plugin then refuses them in is_valid_binary).
  virtual JITTargetTy *getJITTargetImpl() { return nullptr; }
  /// Load an image; the generic code resolves entries afterwards.
  virtual Expected<std::unique_ptr<DeviceImageTy>>
  loadImageImpl(const __tgt_device_image &TgtImage, int32_t ImageId) = 0;
  /// Create the kernel object for symbol \p Name of \p Image.
  virtual Expected<std::unique_ptr<GenericKernelTy>>
  constructKernelImpl(DeviceImageTy &Image, llvm::StringRef Name) = 0;
  /// The device address of global \p Name (\p Size bytes) in \p Image.
  virtual Expected<void *> getGlobalAddressImpl(DeviceImageTy &Image,
                                                llvm::StringRef Name,
                                                size_t Size) = 0;
  /// Write \p Size bytes from \p Data into global \p Name of \p Image and
  /// wait for the write. Returns false when the image has no such global;
  /// fails (InvalidImage) when the global has a different size.
  virtual Expected<bool> writeImageGlobalImpl(DeviceImageTy &Image,
                                              llvm::StringRef Name,
                                              const void *Data,
                                              size_t Size) = 0;
  /// Allocate \p Size bytes of \p Kind: the vendor call only; the framework
  /// keeps the books (allocateMemory).
  virtual Expected<void *> allocateImpl(size_t Size, AllocKindTy Kind) = 0;
  /// Free memory from allocateImpl; \p Size and \p Kind are what it was
  /// allocated with.
  virtual Error freeImpl(void *Ptr, size_t Size, AllocKindTy Kind) = 0;
  /// Create a stream for the pool.
  virtual Expected<std::unique_ptr<StreamTy>> createStreamImpl() = 0;
  /// Create an event for the pool.
  virtual Expected<std::unique_ptr<EventTy>> createEventImpl() = 0;
  /// Fill interop device information.
  virtual Error initDeviceInfoImpl(__tgt_device_info &DeviceInfo) = 0;
  /// Backend lines for print_device_info.
  virtual void printInfoImpl(llvm::raw_ostream &OS) = 0;
  /// Copy device -> device on \p Stream; peers may need special engines.
  virtual Error dataExchangeImpl(const void *SrcPtr, GenericDeviceTy &DstDevice,
                                 void *DstPtr, size_t Size, StreamTy &Stream);
  /// Whether this device can copy straight into \p Peer's memory, enabling
  /// that if the vendor needs it; false: copies to it take the vendor's
  /// indirect route. Asked once per peer, before the first exchange.
  virtual Expected<bool> enablePeerAccessImpl(GenericDeviceTy &Peer) {
    return false;
  }

  /// The device's PCI address ("0000:3b:00.0"), which places its host
  /// threads on its NUMA node; "" for a device that is not a PCI device.
  virtual Expected<std::string> getPCIAddressImpl() { return std::string(); }

  /// The vendor's pointer query (queryForeignMemory); by default the
  /// backend knows nothing of memory allocated elsewhere.
  virtual Expected<ForeignMemoryTy> queryForeignMemoryImpl(const void *Ptr) {
    (void)Ptr;
    return ForeignMemoryTy();
  }

  /// The backend's vendor storage DMA, or null (with the reason) if none.
  virtual IOFastpathTy *getIOFastpathImpl() { return nullptr; }

  /// The largest copy from pageable host memory that the backend's stream
  /// captures at enqueue, so that the caller may reuse its memory on return
  /// (CUDA's driver stages such uploads itself; the host stream copies or
  /// captures them on the caller's thread); 0: none. Unlocked copies up to
  /// this size skip the bounce buffers and their completion callbacks,
  /// which cost more than the copy; small downloads get bounce buffers of
  /// this size (TransferPolicyTy).
  virtual size_t getPageableCaptureLimit() const { return 0; }

  /// Free what the program and the framework left allocated: for backends
  /// whose teardown must release the vendor memory itself. A teardown
  /// (TeardownTy): the driver's first answer that it has shut down ends
  /// it, and is returned.
  Error freeLeakedMemory();

  GenericPluginTy &Plugin;
  const int32_t DeviceId;
  DeviceLimitsTy Limits;
  /// The plugin's services, each by its narrow type (the framework's code
  /// of the device goes through these, not through Plugin).
  const DeviceServicesTy Services;

private:
  /// Where the device's host threads should run, and why not when nowhere
  /// in particular (OFFLOADIO_NUMA_PLACEMENT, HostTopology.h).
  CpuPlacementTy placeOnHost();

  /// enablePeerAccessImpl's answers, by peer.
  PeerAccessTableTy PeerAccess;
  /// Where the device's own pinned memory comes from (getPinnedPool).
  PinnedPoolTy Pinned;

  // BlockAllocatorTy for the memory manager.
  Expected<void *> allocateBlock(size_t Size) override {
    return allocateMemory(Size, AllocKindTy::Device);
  }
  Error freeBlock(void *Ptr) override { return freeMemory(Ptr); }

  // PinnedAllocatorTy for the pinned pool.
  Expected<void *> allocatePinned(size_t Size) override {
    return allocatePinnedHost(Size);
  }
  Error freePinned(void *Ptr, size_t) override { return freePinnedHost(Ptr); }

  /// allocateImpl, recorded in VendorMemory.
  Expected<void *> allocateMemory(size_t Size, AllocKindTy Kind);
  /// freeImpl of memory from allocateMemory, with the kind it was
  /// allocated as; refused for memory it did not hand out.
  Error freeMemory(void *Ptr);
  /// Run \p Image's global constructors, where the device runtime leaves
  /// them to the plugin, and note whether it has destructors
  /// (ImageConstructors.cpp).
  Error runImageConstructors(DeviceImageTy &Image);
  /// Launch \p Call, \p Image's constructor (\p Init) or destructor
  /// kernel, and wait for it, handing it its array of functions first
  /// where it takes one (buildInitFiniArray).
  Error runInitFiniKernel(DeviceImageTy &Image, const InitFiniCallTy &Call,
                          bool Init);
  /// A device array of the addresses in \p Call's function globals,
  /// written to \p Image's __init_array_start/end (\p Init) or
  /// __fini_array_start/end; null when there are none. The caller frees it.
  Expected<void *> buildInitFiniArray(DeviceImageTy &Image,
                                      const InitFiniCallTy &Call, bool Init);
  /// Device memory of one launch's environment (LaunchEnvironment.cpp).
  struct LaunchMemoryTy;
  /// \p Size bytes of device memory for a launch environment.
  Expected<void *> allocateLaunchMemory(size_t Size);
  /// Free memory of allocateLaunchMemory.
  Error freeLaunchMemory(void *Ptr);
  /// The stream's release of a LaunchMemoryTy (\p Launch): frees its
  /// memory and itself.
  static Error releaseLaunchMemory(void *Launch);
  /// Write the device runtime's environment into \p Image, if it has one;
  /// whether it has.
  Expected<bool> writeDeviceEnvironment(DeviceImageTy &Image);
  /// The image the JIT compiled from \p TgtImage for this device when it
  /// is bitcode (bytes the plugin's JIT keeps), nullopt when it is native.
  Expected<std::optional<llvm::StringRef>>
  compileBitcodeImage(const __tgt_device_image &TgtImage);
  /// Give \p Image's device-side malloc its pool of Limits.DeviceHeapSize
  /// bytes, where the device runtime takes one and the image has it.
  Error setUpDeviceMemoryPool(DeviceImageTy &Image);
  /// Give \p Image its table of indirectly callable functions, from the
  /// entries of \p TgtImage flagged OMP_DECLARE_TARGET_INDIRECT
  /// (IndirectCallTable.cpp); none when it has no such entry.
  Error setUpIndirectCallTable(DeviceImageTy &Image,
                               const __tgt_device_image &TgtImage);
  /// Free what loading \p Image allocated for it: its pool and table.
  Error freeImageMemory(DeviceImageTy &Image);

  /// Host -> device copy policy (pinned map, staging) behind dataSubmit.
  Error submitHostToDevice(void *TgtPtr, const void *HstPtr, size_t Size,
                           AsyncInfoWrapperTy &Wrapper);
  /// Device -> host copy policy behind dataRetrieve.
  Error retrieveDeviceToHost(void *HstPtr, const void *TgtPtr, size_t Size,
                             AsyncInfoWrapperTy &Wrapper);

  /// Lock the host buffer of a new mapping if the policy asks for it,
  /// remembered under \p Key: its device buffer under libomptarget 16
  /// (released at data_delete), the host buffer itself under 17 and 18
  /// (released at data_notify_unmapped).
  Error lockMappedBuffer(void *Key, void *HstPtr, size_t Size);
  /// Release the lock taken by lockMappedBuffer under \p Key, if any.
  Error unlockMappedBuffer(void *Key);
  /// Register host-kind memory as externally pinned in the plugin's map.
  Error onAllocated(void *Ptr, size_t Size, AllocKindTy Kind);
  /// Unregister it; fails while user locks inside it remain.
  Error onFreeing(void *Ptr, AllocKindTy Kind);

  /// Copy an unlocked host range to the device (staged or locked).
  Error submitUnlocked(char *TgtPtr, const char *HstPtr, size_t Size,
                       StreamTy &Stream) {
    return submitUnlockedBy(Policy.route(/*Locked=*/false, Size), TgtPtr,
                            HstPtr, Size, Stream);
  }
  /// submitUnlocked by \p Route.
  Error submitUnlockedBy(CopyRouteTy Route, char *TgtPtr, const char *HstPtr,
                         size_t Size, StreamTy &Stream);
  /// Copy device memory to an unlocked host range.
  Error retrieveUnlocked(char *HstPtr, const char *TgtPtr, size_t Size,
                         StreamTy &Stream);
  Error checkTransferArgs(const char *What, const void *Dst, const void *Src,
                          int64_t Size) const;

  ResourcePoolTy<StreamTy> Streams;
  ResourcePoolTy<EventTy> Events;
  std::unique_ptr<MemoryManagerTy> MemoryManager;
  std::unique_ptr<StagingPoolTy> Staging;
  /// Bounce buffers of small downloads whose copy-out is deferred to the
  /// stream's owner (StreamTy::deferUntilComplete). A pool of their own,
  /// only ever leased without waiting: its buffers come back when their
  /// owner synchronizes, which a wait here could keep from happening.
  std::unique_ptr<StagingPoolTy> SmallDownloads;
  /// The file transfers of the device (setIOService).
  DeviceIOServiceTy *IOService = nullptr;
  /// Host buffers locked for their mapping's lifetime, by device pointer
  /// (LIBOMPTARGET_LOCK_MAPPED_HOST_BUFFERS).
  std::mutex MappedLocksLock;
  llvm::DenseMap<void *, void *> MappedLocks;
  /// Read once, at init.
  DeviceSettingsTy Settings;
  TransferPolicyTy Policy{TransferSettingsTy(), 0};
  DeviceEnvironmentTy DeviceEnv;
  /// The program's live allocations (dataAlloc / dataDelete).
  AllocationRegistryTy UserAllocations;
  /// Everything allocateImpl handed out and freeImpl has not released:
  /// the program's allocations, the memory manager's blocks and the
  /// framework's pinned buffers. A free takes its entry out first, so that
  /// a double free never reaches the vendor twice.
  AllocationRegistryTy VendorMemory;
  std::mutex ImagesLock;
  std::vector<std::unique_ptr<DeviceImageTy>> Images;
  TransferCountersTy Counters;
  /// Set at init from placeOnHost().
  DevicePlacementTy HostPlacement;
};

} // namespace offloadio

#endif // OFFLOADIO_DEVICE_H

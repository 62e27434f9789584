// SPDX-License-Identifier: Apache-2.0
//
// GenericPluginTy: the one instance of a plugin library. It owns the devices,
// the plugin-wide pinned-memory map and the info settings.
#ifndef OFFLOADIO_PLUGIN_H
#define OFFLOADIO_PLUGIN_H

#include "offloadio/ABI.h"
#include "offloadio/Device.h"
#include "offloadio/DeviceServices.h"
#include "offloadio/Error.h"
#include "offloadio/ForkGuard.h"
#include "offloadio/Info.h"
#include "offloadio/JITCompiler.h"
#include "offloadio/Profile.h"
#include "offloadio/ParallelFor.h"
#include "offloadio/PinnedBudget.h"
#include "offloadio/PinnedMemoryMap.h"
#include "offloadio/Settings.h"
#include "offloadio/io/IOConfig.h"
#include "offloadio/io/Sys.h"

#include "llvm/ADT/StringRef.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace offloadio {

class DeviceIOTy;
class IOEngineTy;
class IOWorkerPoolTy;

/// The plugin. Backends derive and implement the ...Impl hooks.
class GenericPluginTy : private PinningOpsTy {
public:
  /// \p Name is the plugin's short name ("x86_64", "cuda", "amdgpu").
  explicit GenericPluginTy(std::string Name);
  ~GenericPluginTy() override;

  /// Discover devices. Idempotent.
  Error init();
  /// Whether init() succeeded.
  bool isInitialized() const { return Initialized; }

  /// The short name.
  const std::string &getName() const { return Info.getPluginName(); }
  /// Info/error output.
  InfoTy &getInfo() { return Info; }
  /// Time spent in the entry points and in the stages of staged copies
  /// (OFFLOADIO_PROFILE).
  TimeProfileTy &getProfile() { return Profile; }

  /// Number of devices found by init().
  int32_t getNumDevices() const { return NumDevices; }
  /// Create and initialise device \p DeviceId (init_device). Idempotent.
  Error initDevice(int32_t DeviceId);
  /// An initialised device, or an error naming the id.
  Expected<GenericDeviceTy &> getDevice(int32_t DeviceId);

  /// Whether this process is a child forked after the plugin initialised a
  /// device (or started its vendor runtime) in an ancestor: no device may be
  /// used then. One atomic load.
  bool inForkedChild() const { return ForkGuard.inForkedChild(); }
  /// The error for \p What (e.g. "an ompx_io request") used in such a
  /// child.
  Error makeForkedError(const llvm::Twine &What) const;

  /// Map the *global* device number libomptarget passes to data_lock,
  /// data_unlock and the interop entry points to our local number.
  Expected<int32_t> resolveGlobalDeviceId(int32_t GlobalId);
  /// set_device_offset (libomptarget 18): the global number of local
  /// device 0, which makes the probe unnecessary.
  void setGlobalDeviceOffset(int32_t Offset) {
    std::lock_guard<std::mutex> Guard(ProbeLock);
    GlobalIdOffset = Offset;
  }
  /// data_alloc hook of the id probe; returns true when the call belonged
  /// to a probe and must not allocate.
  bool interceptProbeAlloc(int32_t LocalId, void *&Result);
  /// data_delete hook of the id probe.
  bool interceptProbeFree(void *Ptr) const { return Ptr == &ProbeToken; }

  /// is_valid_binary(_info): a native image the backend accepts, or a
  /// bitcode image for the plugin's triple and a processor of its devices.
  bool isValidBinary(const __tgt_device_image &Image, const char *Arch);
  /// is_data_exchangable.
  bool isDataExchangable(int32_t SrcId, int32_t DstId);
  /// init_requires.
  void setRequiresFlags(int64_t Flags) {
    // libomptarget calls init_requires before each init_device, from
    // whichever threads first use each device, so concurrently.
    RequiresFlags.store(Flags, std::memory_order_relaxed);
  }
  /// The device-runtime conventions of the libomptarget served: those of
  /// the version the build's entry points serve, unless a test says
  /// otherwise before the first device is initialised.
  const DeviceRuntimeABITy &getRuntimeABI() const { return *RuntimeABI; }
  void setRuntimeABI(const DeviceRuntimeABITy &ABI) { RuntimeABI = &ABI; }
  /// The flags of the last init_requires.
  int64_t getRequiresFlags() const {
    return RequiresFlags.load(std::memory_order_relaxed);
  }

  /// data_lock: lock [HstPtr, HstPtr+Size) for all devices of the plugin
  /// and return its device-accessible address. \p Device is the device the
  /// program named; locks are plugin-wide.
  Expected<void *> lockHostMemory(GenericDeviceTy &Device, void *HstPtr,
                                  int64_t Size);
  /// data_unlock: drop one reference of the region containing \p HstPtr.
  Error unlockHostMemory(GenericDeviceTy &Device, void *HstPtr);
  /// What each device uses of the plugin, by narrow types.
  DeviceServicesTy getDeviceServices();
  /// The plugin-wide map of locked host regions.
  PinnedMemoryMapTy &getPinnedMap() { return PinnedMap; }
  /// Host threads that share the memcpy side of large staged copies.
  ParallelForTy &getCopyThreads() { return CopyThreads; }
  /// The syscall seam of the file engines.
  SysTy &getSys() { return Sys; }
  /// The affinity system calls of the plugin's threads.
  AffinitySysTy &getAffinitySys() { return Affinity; }
  /// Read the host's topology from \p Topology's tree from now on (tests
  /// with a fake sysfs); before the devices are initialised.
  void setHostTopology(HostTopologyTy NewTopology) {
    Topology = std::move(NewTopology);
  }
  /// The file workers of every device's engine, made by the first call
  /// with \p Config's workers per device and cap; later calls get the same
  /// pool, whatever their \p Config.
  IOWorkerPoolTy &getIOWorkers(const IOConfigTy &Config);
  /// The file engine of \p Device (a device of this plugin, initialised),
  /// created on first use.
  Expected<IOEngineTy &> getIOEngine(GenericDeviceTy &Device);
  /// Workers of the file engines' pool started so far; 0 before the first
  /// transfer.
  unsigned getNumIOWorkers();
  /// Workers the pool runs for each device in use; 0 before any engine
  /// exists.
  unsigned getIOWorkersPerDevice();
  /// The LIBOMPTARGET_LOCK_MAPPED_HOST_BUFFERS setting.
  MappedLockPolicyTy getMappedLockPolicy() const {
    return Settings.MappedLocks;
  }
  /// The plugin's settings, read once at construction.
  const PluginSettingsTy &getSettings() const { return Settings; }
  /// The process's budget of pinned memory for the plugins' own buffers:
  /// a private account until init() joins the process's.
  PinnedBudgetTy &getPinnedBudget() { return *PinnedBudget; }

  /// The JIT of bitcode images.
  JITCompilerTy &getJIT() { return JIT; }

  /// Wait for every device's pending work (deinit_plugin; at exit under
  /// libomptarget 18, after running the images' global destructors). The
  /// plugin stays usable afterwards: libomptarget calls deinit_plugin once
  /// per unregistered library and may use the plugin again. A teardown
  /// (TeardownTy): success once the vendor driver has shut down.
  Error flush();

  /// Call \p Arrange the first time only: how the C layer arranges, once,
  /// for the flush at the process's exit where libomptarget asks for none
  /// (CApiSupport.h, arrangeExitFlush).
  template <typename FnTy> void arrangeExitFlushOnce(FnTy &&Arrange) {
    std::call_once(ExitFlushArranged, std::forward<FnTy>(Arrange));
  }

protected:
  /// Discover devices; returns their number.
  virtual Expected<int32_t> initImpl() = 0;
  /// Create (not initialise) device \p DeviceId.
  virtual Expected<std::unique_ptr<GenericDeviceTy>>
  createDeviceImpl(int32_t DeviceId) = 0;
  /// Whether \p Image (of arch \p Arch, may be empty) can run here.
  virtual bool isImageCompatibleImpl(const __tgt_device_image &Image,
                                     llvm::StringRef Arch) = 0;
  /// The triple of the bitcode images the plugin compiles at load; empty
  /// when it compiles none.
  virtual llvm::StringRef getJITTripleImpl() const { return ""; }
  /// Whether a bitcode image made for processor \p CPU (empty: none
  /// recorded), or for \p Arch as libomptarget says (may be empty), can
  /// be compiled for and run on the devices.
  virtual bool isBitcodeCompatibleImpl(llvm::StringRef CPU,
                                       llvm::StringRef Arch) {
    return false;
  }
  /// Pin host memory for every device of the plugin (backend call).
  virtual Expected<void *> pinHostMemoryImpl(void *HstPtr, size_t Size) = 0;
  /// Undo pinHostMemoryImpl.
  virtual Error unpinHostMemoryImpl(void *HstPtr, void *DevAccessiblePtr,
                                    size_t Size) = 0;

  /// Whether devices \p SrcId and \p DstId can copy directly.
  virtual bool isDataExchangableImpl(int32_t SrcId, int32_t DstId) {
    return true;
  }

  /// Whether initImpl() starts a vendor runtime that a forked child cannot
  /// use (cuInit, hsa_init): children of this process are then refused
  /// from plugin initialisation on, not only once a device is initialised.
  virtual bool vendorRuntimeStartsAtInit() const { return false; }

private:
  Expected<void *> pinHostMemory(void *HstPtr, size_t Size) override {
    return pinHostMemoryImpl(HstPtr, Size);
  }
  Error unpinHostMemory(void *HstPtr, void *DevAccessiblePtr,
                        size_t Size) override {
    return unpinHostMemoryImpl(HstPtr, DevAccessiblePtr, Size);
  }

  /// Error for device \p DeviceId used in a forked child.
  Error makeForkedDeviceError(int32_t DeviceId) const;

  /// Declared first: the members below are built from it.
  PluginSettingsTy Settings;
  InfoTy Info;
  TimeProfileTy Profile;
  std::unique_ptr<PinnedBudgetTy> PinnedBudget;
  ForkGuardTy ForkGuard;
  SysTy Sys;
  AffinitySysTy Affinity;
  /// Where devices find their NUMA node (OFFLOADIO_NUMA_PLACEMENT).
  HostTopologyTy Topology;
  ParallelForTy CopyThreads;
  PinnedMemoryMapTy PinnedMap{*this};
  JITCompilerTy JIT{Settings.JIT};
  std::mutex IOWorkersLock; ///< Guards IOWorkers while it is made.
  /// Declared before Devices: their engines detach from it as they go.
  std::unique_ptr<IOWorkerPoolTy> IOWorkers;
  bool Initialized = false;
  int32_t NumDevices = 0;
  std::atomic<int64_t> RequiresFlags{OMP_REQ_UNDEFINED};
  const DeviceRuntimeABITy *RuntimeABI;
  std::mutex InitLock;
  std::vector<std::unique_ptr<GenericDeviceTy>> Devices;
  /// The file service of each initialised device, installed in it by
  /// initDevice. Declared after Devices: the engines go first, while their
  /// devices' streams and buffers are still there.
  std::vector<std::unique_ptr<DeviceIOTy>> DeviceIO;
  /// Published pointers, readable without InitLock.
  std::unique_ptr<std::atomic<GenericDeviceTy *>[]> ReadyDevices;

  // Global -> local device id resolution (see resolveGlobalDeviceId).
  std::mutex ProbeLock;
  std::atomic<bool> ProbeActive{false};
  std::atomic<std::thread::id> ProbeThread;
  int32_t ProbedLocalId = -1;
  std::optional<int32_t> GlobalIdOffset;
  char ProbeToken = 0;
  /// arrangeExitFlushOnce's.
  std::once_flag ExitFlushArranged;
};

/// Each backend defines this factory; the C layer calls it once.
std::unique_ptr<GenericPluginTy> createPlugin();

} // namespace offloadio

#endif // OFFLOADIO_PLUGIN_H

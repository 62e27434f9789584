// SPDX-License-Identifier: Apache-2.0
//
// The settings of the framework, read from the environment in one place:
// PluginSettingsTy once per plugin instance, DeviceSettingsTy once per
// device as it initialises. Each setting's name, default and valid values
// are declared once, in Settings.def; a value that does not parse or is out
// of range is reported once per process and replaced by the default
// (Envar.h). Backend settings are read in each plugin's <Name>Settings.h,
// the file engine's in io/IOConfig.h, the copy policy's in
// TransferPolicy.h.
#ifndef OFFLOADIO_SETTINGS_H
#define OFFLOADIO_SETTINGS_H

#include "offloadio/SettingTable.h"
#include "offloadio/TransferPolicy.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace offloadio {

struct ProcessShareTy;

/// LIBOMPTARGET_LOCK_MAPPED_HOST_BUFFERS: whether host buffers of map
/// clauses are locked for the lifetime of their mapping.
enum class MappedLockPolicyTy { Off, On, Mandatory };

/// The JIT's settings (stock names and meanings).
struct JITSettingsTy {
  /// LIBOMPTARGET_JIT_OPT_LEVEL: optimisation level, 0 to 3, default 3.
  unsigned OptLevel = 3;
  /// LIBOMPTARGET_JIT_SKIP_OPT: compile without optimising; default false.
  bool SkipOpt = false;
  /// LIBOMPTARGET_JIT_PRE_OPT_IR_MODULE: where to print the module before
  /// optimisation; none by default.
  std::optional<std::string> PreOptIRModule;
  /// LIBOMPTARGET_JIT_POST_OPT_IR_MODULE: where to print it after.
  std::optional<std::string> PostOptIRModule;
  /// LIBOMPTARGET_JIT_REPLACEMENT_MODULE: IR or bitcode compiled in place of
  /// the image's.
  std::optional<std::string> ReplacementModule;
  /// LIBOMPTARGET_JIT_REPLACEMENT_OBJECT: code generation output used in
  /// place of compiling.
  std::optional<std::string> ReplacementObject;

  /// Read every variable above once.
  static JITSettingsTy fromEnv();
};

/// Settings of one plugin instance.
struct PluginSettingsTy {
  /// LIBOMPTARGET_INFO: bit mask of the info lines that the stock plugins
  /// print too, decimal or hex (-1: all); default 0.
  uint32_t InfoFlags = 0;
  /// OFFLOADIO_INFO: bit mask of offload-io's own info lines, with
  /// LIBOMPTARGET_INFO's bit meanings, decimal or hex (-1: all); default 0.
  uint32_t OwnInfoFlags = 0;
  /// OFFLOADIO_PROFILE: time the entry points and print a table at exit;
  /// a boolean, default false.
  bool Profile = false;
  /// OFFLOADIO_COPY_THREADS: host threads that share the memcpy side of
  /// large staged copies, for each device in use (ParallelFor.h); 0 to
  /// MaxCopyThreads, default min(12, the process's CPUs - 1)
  /// (ProcessShare.h).
  unsigned CopyThreads = 0;
  /// The most copy threads however many devices are in use: the process's
  /// CPUs - 1, or CopyThreads when that is more.
  unsigned CopyThreadsCap = 0;
  static constexpr unsigned MaxCopyThreads =
                                settingDecl(SettingId::CopyThreads).Max,
                            DefaultMaxCopyThreads =
                                settingDecl(SettingId::CopyThreads).Default;
  /// LIBOMPTARGET_LOCK_MAPPED_HOST_BUFFERS: off, on or mandatory (booleans
  /// too); default off.
  MappedLockPolicyTy MappedLocks = MappedLockPolicyTy::Off;
  /// OFFLOADIO_PINNED_MAX: the most host memory the process's plugins pin
  /// for their own buffers (PinnedBudget.h); a size from MinPinnedMax,
  /// default a quarter of physical memory and at least DefaultPinnedFloor,
  /// divided among the node's local ranks (ProcessShare.h), and at least
  /// MinPinnedMax.
  uint64_t PinnedMax = 0;
  static constexpr uint64_t MinPinnedMax =
      settingDecl(SettingId::PinnedMax).Min;
  static constexpr uint64_t DefaultPinnedFloor =
      settingDecl(SettingId::PinnedMax).Default;
  /// OFFLOADIO_NUMA_PLACEMENT: auto (place each device's host threads near
  /// it, HostTopology.h) or off; default auto.
  bool NumaPlacement = true;
  /// The JIT of bitcode images (LIBOMPTARGET_JIT_*).
  JITSettingsTy JIT;

  /// Read every variable above once.
  static PluginSettingsTy fromEnv();
  /// The same, with the defaults of a process with \p Share.
  static PluginSettingsTy fromEnv(const ProcessShareTy &Share);
  /// Default of CopyThreads for a process with \p Share, and its origin.
  static unsigned defaultCopyThreads(const ProcessShareTy &Share);
  static std::string defaultCopyThreadsOrigin(const ProcessShareTy &Share);
  /// Default of PinnedMax for a process with \p Share, and its origin.
  static uint64_t defaultPinnedMax(const ProcessShareTy &Share);
  static std::string defaultPinnedMaxOrigin(const ProcessShareTy &Share);
};

/// Settings of one device, read as it initialises.
struct DeviceSettingsTy {
  /// OMP_NUM_TEAMS: default teams and cap on teams derived from a trip
  /// count, bounded by the device; 0 to INT32_MAX, default 0 (unset).
  uint32_t NumTeams = 0;
  /// OMP_TEAMS_THREAD_LIMIT: default threads per team, bounded by the
  /// device; 0 to INT32_MAX, default 0 (unset).
  uint32_t TeamsThreadLimit = 0;
  /// LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD: largest allocation served from
  /// the device's cache; 0 (no cache) to 64K, default 8192.
  uint64_t MemoryManagerThreshold =
      settingDecl(SettingId::MemoryManagerThreshold).Default;
  static constexpr uint64_t MaxMemoryManagerThreshold =
      settingDecl(SettingId::MemoryManagerThreshold).Max;
  /// LIBOMPTARGET_NUM_INITIAL_STREAMS: 0 to 1024, default 1.
  unsigned InitialStreams = settingDecl(SettingId::NumInitialStreams).Default;
  /// LIBOMPTARGET_NUM_INITIAL_EVENTS: 0 to 1024, default 1.
  unsigned InitialEvents = settingDecl(SettingId::NumInitialEvents).Default;
  static constexpr unsigned MaxInitialResources =
      settingDecl(SettingId::NumInitialStreams).Max;
  /// LIBOMPTARGET_DEVICE_RTL_DEBUG: the device runtime's debug kind; 0 to
  /// INT32_MAX, default 0.
  uint32_t DeviceRTLDebug = 0;
  /// LIBOMPTARGET_MIN_THREADS_FOR_LOW_TRIP_COUNT: fewest threads per team
  /// of a short SPMD loop (libomptarget 17 and later).
  uint32_t MinThreadsForLowTripCount =
      settingDecl(SettingId::MinThreadsForLowTripCount).Default;
  /// LIBOMPTARGET_SHARED_MEMORY_SIZE: dynamic shared memory of each launch;
  /// 0 to the device's MaxDynamicSharedMemory, default 0.
  uint32_t SharedMemorySize = 0;
  /// OFFLOADIO_STAGING_BUFFER_SIZE: bytes of each bounce buffer; 4K to 1G,
  /// default 2 MiB. As for the file engine's chunks (IOConfig.h), buffers
  /// that stay in the host's last-level cache move pageable data faster.
  size_t StagingBufferSize = settingDecl(SettingId::StagingBufferSize).Default;
  /// OFFLOADIO_STAGING_BUFFERS: most bounce buffers; 1 to 4096, default 32,
  /// so that every copy thread can keep two in use.
  unsigned StagingBuffers = settingDecl(SettingId::StagingBuffers).Default;
  /// OFFLOADIO_STAGING_POOL_MAX: cap on the bounce buffers' bytes; from one
  /// buffer to 1T, default 256 MiB. StagingBuffers is lowered to fit it.
  uint64_t StagingPoolMax = settingDecl(SettingId::StagingPoolMax).Default;
  /// The copy policy's variables (TransferPolicy.h).
  TransferSettingsTy Transfers;

  /// Read every variable above once; \p MaxDynamicSharedMemory bounds
  /// LIBOMPTARGET_SHARED_MEMORY_SIZE.
  static DeviceSettingsTy fromEnv(uint64_t MaxDynamicSharedMemory);
};

} // namespace offloadio

#endif // OFFLOADIO_SETTINGS_H

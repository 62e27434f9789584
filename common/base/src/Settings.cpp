// SPDX-License-Identifier: Apache-2.0
#include "offloadio/Settings.h"
#include "offloadio/Envar.h"
#include "offloadio/ProcessShare.h"

#include <algorithm>
#include <cstdint>

using namespace offloadio;

unsigned PluginSettingsTy::defaultCopyThreads(const ProcessShareTy &Share) {
  // One thread copies pageable memory at a seventh to a fifth of what a
  // PCIe 5 x16 link carries, and a download's copy-out shares the memory
  // bus with the DMA: a dozen threads, with the caller, keep such a link
  // busy both ways. Fewer on a smaller share, leaving a CPU to the program.
  // The helpers start at the first large staged copy.
  return std::min(DefaultMaxCopyThreads, Share.cpus() - 1);
}

std::string
PluginSettingsTy::defaultCopyThreadsOrigin(const ProcessShareTy &Share) {
  return "min(" + std::to_string(DefaultMaxCopyThreads) + ", " +
         Share.cpusOrigin() + " - 1)";
}

uint64_t PluginSettingsTy::defaultPinnedMax(const ProcessShareTy &Share) {
  uint64_t Node =
      std::max<uint64_t>(Share.PhysicalMemory / 4, DefaultPinnedFloor);
  return std::max<uint64_t>(Share.shareOf(Node), MinPinnedMax);
}

std::string
PluginSettingsTy::defaultPinnedMaxOrigin(const ProcessShareTy &Share) {
  return "a quarter of physical memory (" +
         std::to_string(Share.PhysicalMemory >> 20) + " MiB), at least " +
         std::to_string(DefaultPinnedFloor >> 20) + " MiB" +
         Share.shareOrigin();
}

PluginSettingsTy PluginSettingsTy::fromEnv() {
  return fromEnv(ProcessShareTy::detect());
}

PluginSettingsTy PluginSettingsTy::fromEnv(const ProcessShareTy &Share) {
  PluginSettingsTy S;
  // libomptarget accepts decimal or hex; -1 means everything.
  if (auto Raw = getEnv("LIBOMPTARGET_INFO")) {
    if (auto N = parseInt(*Raw))
      S.InfoFlags = static_cast<uint32_t>(*N);
    else
      reportInvalidEnv("LIBOMPTARGET_INFO", *Raw, "an integer", "0");
  }
  S.Profile = readBoolEnv("OFFLOADIO_PROFILE", false);
  S.CopyThreads = unsigned(readIntEnv("OFFLOADIO_COPY_THREADS",
                                      defaultCopyThreads(Share), 0,
                                      MaxCopyThreads));
  // libomptarget 17 spells the values off/on/mandatory; booleans are
  // accepted too. Anything else is reported, never silently taken as off.
  static const char *const Choices[] = {"off", "on", "mandatory", "false",
                                        "true", "0", "1", "no", "yes"};
  static const MappedLockPolicyTy Policies[] = {
      MappedLockPolicyTy::Off, MappedLockPolicyTy::On,
      MappedLockPolicyTy::Mandatory, MappedLockPolicyTy::Off,
      MappedLockPolicyTy::On, MappedLockPolicyTy::Off,
      MappedLockPolicyTy::On, MappedLockPolicyTy::Off,
      MappedLockPolicyTy::On};
  S.MappedLocks = Policies[readChoiceEnv(
      "LIBOMPTARGET_LOCK_MAPPED_HOST_BUFFERS", Choices, 0)];
  S.PinnedMax = readSizeEnv("OFFLOADIO_PINNED_MAX", defaultPinnedMax(Share),
                            MinPinnedMax, UINT64_MAX);
  return S;
}

DeviceSettingsTy DeviceSettingsTy::fromEnv(uint64_t MaxDynamicSharedMemory) {
  DeviceSettingsTy S;
  S.NumTeams = uint32_t(readIntEnv("OMP_NUM_TEAMS", 0, 0, INT32_MAX));
  S.TeamsThreadLimit =
      uint32_t(readIntEnv("OMP_TEAMS_THREAD_LIMIT", 0, 0, INT32_MAX));
  S.MemoryManagerThreshold =
      readSizeEnv("LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD",
                  S.MemoryManagerThreshold, 0, MaxMemoryManagerThreshold);
  S.InitialStreams = unsigned(readIntEnv("LIBOMPTARGET_NUM_INITIAL_STREAMS",
                                         S.InitialStreams, 0,
                                         MaxInitialResources));
  S.InitialEvents = unsigned(readIntEnv("LIBOMPTARGET_NUM_INITIAL_EVENTS",
                                        S.InitialEvents, 0,
                                        MaxInitialResources));
  S.Transfers = TransferSettingsTy::fromEnv();
  S.DeviceRTLDebug =
      uint32_t(readIntEnv("LIBOMPTARGET_DEVICE_RTL_DEBUG", 0, 0, INT32_MAX));
  S.SharedMemorySize = uint32_t(
      readSizeEnv("LIBOMPTARGET_SHARED_MEMORY_SIZE", 0, 0,
                  std::min<uint64_t>(MaxDynamicSharedMemory, UINT32_MAX)));
  S.StagingBufferSize = readSizeEnv("OFFLOADIO_STAGING_BUFFER_SIZE",
                                    S.StagingBufferSize, 4096, 1ULL << 30);
  S.StagingBuffers = unsigned(
      readIntEnv("OFFLOADIO_STAGING_BUFFERS", S.StagingBuffers, 1, 4096));
  // A cap in bytes on the pinned memory of the pool, whatever the buffer
  // size: it must hold at least one buffer.
  S.StagingPoolMax = readSizeEnv("OFFLOADIO_STAGING_POOL_MAX",
                                 S.StagingPoolMax, S.StagingBufferSize,
                                 1ULL << 40);
  S.StagingBuffers = unsigned(std::min<uint64_t>(
      S.StagingBuffers, S.StagingPoolMax / S.StagingBufferSize));
  return S;
}

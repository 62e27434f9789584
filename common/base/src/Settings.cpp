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
         Share.cpusOrigin() + " - 1) per device in use, at most " +
         std::to_string(Share.cpus() - 1) + " in all";
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
  S.InfoFlags = readInfoMaskSetting<SettingId::Info>();
  S.OwnInfoFlags = readInfoMaskSetting<SettingId::OwnInfo>();
  S.Profile = readBoolSetting<SettingId::Profile>();
  S.CopyThreads = unsigned(readIntSetting<SettingId::CopyThreads>(
      {defaultCopyThreads(Share), std::nullopt, std::nullopt}));
  // Each copy's caller copies too: the helpers leave it a CPU.
  S.CopyThreadsCap = std::max(S.CopyThreads, Share.cpus() - 1);
  // libomptarget 17 spells the values off/on/mandatory; booleans are
  // accepted too (Settings.def). Anything else is reported, never silently
  // taken as off.
  static const MappedLockPolicyTy Policies[] = {
      MappedLockPolicyTy::Off, MappedLockPolicyTy::On,
      MappedLockPolicyTy::Mandatory, MappedLockPolicyTy::Off,
      MappedLockPolicyTy::On, MappedLockPolicyTy::Off,
      MappedLockPolicyTy::On, MappedLockPolicyTy::Off,
      MappedLockPolicyTy::On};
  S.MappedLocks =
      Policies[readChoiceSetting<SettingId::LockMappedHostBuffers>()];
  S.NumaPlacement = readChoiceSetting<SettingId::NumaPlacement>() == 0;
  S.PinnedMax = readSizeSetting<SettingId::PinnedMax>(
      {defaultPinnedMax(Share), std::nullopt, std::nullopt});
  S.JIT = JITSettingsTy::fromEnv();
  return S;
}

JITSettingsTy JITSettingsTy::fromEnv() {
  JITSettingsTy S;
  S.OptLevel = unsigned(readIntSetting<SettingId::JITOptLevel>());
  S.SkipOpt = readBoolSetting<SettingId::JITSkipOpt>();
  S.PreOptIRModule = readPathSetting<SettingId::JITPreOptIRModule>();
  S.PostOptIRModule = readPathSetting<SettingId::JITPostOptIRModule>();
  S.ReplacementModule = readPathSetting<SettingId::JITReplacementModule>();
  S.ReplacementObject = readPathSetting<SettingId::JITReplacementObject>();
  return S;
}

DeviceSettingsTy DeviceSettingsTy::fromEnv(uint64_t MaxDynamicSharedMemory) {
  DeviceSettingsTy S;
  S.NumTeams = uint32_t(readIntSetting<SettingId::NumTeams>());
  S.TeamsThreadLimit = uint32_t(readIntSetting<SettingId::TeamsThreadLimit>());
  S.MemoryManagerThreshold =
      readSizeSetting<SettingId::MemoryManagerThreshold>();
  S.InitialStreams = unsigned(readIntSetting<SettingId::NumInitialStreams>());
  S.InitialEvents = unsigned(readIntSetting<SettingId::NumInitialEvents>());
  S.Transfers = TransferSettingsTy::fromEnv();
  S.DeviceRTLDebug = uint32_t(readIntSetting<SettingId::DeviceRTLDebug>());
  S.MinThreadsForLowTripCount =
      uint32_t(readIntSetting<SettingId::MinThreadsForLowTripCount>());
  S.SharedMemorySize = uint32_t(readSizeSetting<SettingId::SharedMemorySize>(
      {std::nullopt, std::nullopt,
       std::min<uint64_t>(MaxDynamicSharedMemory, UINT32_MAX)}));
  S.StagingBufferSize = readSizeSetting<SettingId::StagingBufferSize>();
  S.StagingBuffers = unsigned(readIntSetting<SettingId::StagingBuffers>());
  // A cap in bytes on the pinned memory of the pool, whatever the buffer
  // size: it must hold at least one buffer.
  S.StagingPoolMax = readSizeSetting<SettingId::StagingPoolMax>(
      {std::nullopt, S.StagingBufferSize, std::nullopt});
  S.StagingBuffers = unsigned(std::min<uint64_t>(
      S.StagingBuffers, S.StagingPoolMax / S.StagingBufferSize));
  return S;
}

// SPDX-License-Identifier: Apache-2.0
// PluginSettingsTy and DeviceSettingsTy: defaults, valid values taken,
// invalid or out-of-range values replaced by the default, bounds that
// depend on other settings or the device.
#include "offloadio/Settings.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>

using namespace offloadio;

namespace {

/// Sets variables for one test and restores them afterwards.
class EnvTy {
public:
  ~EnvTy() {
    for (auto &[Name, Old] : Saved) {
      if (Old)
        setenv(Name.c_str(), Old->c_str(), 1);
      else
        unsetenv(Name.c_str());
    }
  }
  void set(const char *Name, const char *Value) {
    remember(Name);
    setenv(Name, Value, 1);
  }
  void unset(const char *Name) {
    remember(Name);
    unsetenv(Name);
  }

private:
  void remember(const char *Name) {
    if (Saved.count(Name))
      return;
    const char *Old = std::getenv(Name);
    Saved[Name] = Old ? std::optional<std::string>(Old) : std::nullopt;
  }
  std::map<std::string, std::optional<std::string>> Saved;
};

const char *const PluginVariables[] = {
    "LIBOMPTARGET_INFO", "OFFLOADIO_PROFILE", "OFFLOADIO_COPY_THREADS",
    "LIBOMPTARGET_LOCK_MAPPED_HOST_BUFFERS", "OFFLOADIO_PINNED_MAX"};
const char *const DeviceVariables[] = {
    "OMP_NUM_TEAMS",
    "OMP_TEAMS_THREAD_LIMIT",
    "LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD",
    "LIBOMPTARGET_NUM_INITIAL_STREAMS",
    "LIBOMPTARGET_NUM_INITIAL_EVENTS",
    "LIBOMPTARGET_DEVICE_RTL_DEBUG",
    "LIBOMPTARGET_SHARED_MEMORY_SIZE",
    "OFFLOADIO_STAGING_BUFFER_SIZE",
    "OFFLOADIO_STAGING_BUFFERS",
    "OFFLOADIO_STAGING_POOL_MAX"};

TEST(SettingsTest, PluginDefaults) {
  EnvTy Env;
  for (const char *V : PluginVariables)
    Env.unset(V);
  PluginSettingsTy S = PluginSettingsTy::fromEnv();
  EXPECT_EQ(S.InfoFlags, 0u);
  EXPECT_FALSE(S.Profile);
  EXPECT_LE(S.CopyThreads, 4u);
  EXPECT_EQ(S.MappedLocks, MappedLockPolicyTy::Off);
  EXPECT_EQ(S.PinnedMax, PluginSettingsTy::defaultPinnedMax());
  EXPECT_GE(S.PinnedMax, PluginSettingsTy::DefaultPinnedFloor);
}

TEST(SettingsTest, PluginValuesAreTaken) {
  EnvTy Env;
  Env.set("LIBOMPTARGET_INFO", "0x30");
  Env.set("OFFLOADIO_PROFILE", "yes");
  Env.set("OFFLOADIO_COPY_THREADS", "7");
  Env.set("LIBOMPTARGET_LOCK_MAPPED_HOST_BUFFERS", "mandatory");
  Env.set("OFFLOADIO_PINNED_MAX", "64M");
  PluginSettingsTy S = PluginSettingsTy::fromEnv();
  EXPECT_EQ(S.InfoFlags, 0x30u);
  EXPECT_TRUE(S.Profile);
  EXPECT_EQ(S.CopyThreads, 7u);
  EXPECT_EQ(S.MappedLocks, MappedLockPolicyTy::Mandatory);
  EXPECT_EQ(S.PinnedMax, 64u << 20);
  Env.set("LIBOMPTARGET_INFO", "-1");
  Env.set("LIBOMPTARGET_LOCK_MAPPED_HOST_BUFFERS", "1");
  S = PluginSettingsTy::fromEnv();
  EXPECT_EQ(S.InfoFlags, ~0u);
  EXPECT_EQ(S.MappedLocks, MappedLockPolicyTy::On);
}

TEST(SettingsTest, PluginInvalidValuesGiveTheDefaults) {
  EnvTy Env;
  Env.set("LIBOMPTARGET_INFO", "lots");
  Env.set("OFFLOADIO_PROFILE", "maybe");
  Env.set("OFFLOADIO_COPY_THREADS", "100000");
  Env.set("LIBOMPTARGET_LOCK_MAPPED_HOST_BUFFERS", "sometimes");
  Env.set("OFFLOADIO_PINNED_MAX", "1K"); // below the 1 MiB floor
  PluginSettingsTy S = PluginSettingsTy::fromEnv();
  EXPECT_EQ(S.InfoFlags, 0u);
  EXPECT_FALSE(S.Profile);
  EXPECT_LE(S.CopyThreads, 4u);
  EXPECT_EQ(S.MappedLocks, MappedLockPolicyTy::Off);
  EXPECT_EQ(S.PinnedMax, PluginSettingsTy::defaultPinnedMax());
}

TEST(SettingsTest, DeviceDefaults) {
  EnvTy Env;
  for (const char *V : DeviceVariables)
    Env.unset(V);
  DeviceSettingsTy S = DeviceSettingsTy::fromEnv(48 << 10);
  EXPECT_EQ(S.NumTeams, 0u);
  EXPECT_EQ(S.TeamsThreadLimit, 0u);
  EXPECT_EQ(S.MemoryManagerThreshold, 8192u);
  EXPECT_EQ(S.InitialStreams, 1u);
  EXPECT_EQ(S.InitialEvents, 1u);
  EXPECT_EQ(S.DeviceRTLDebug, 0u);
  EXPECT_EQ(S.SharedMemorySize, 0u);
  EXPECT_EQ(S.StagingBufferSize, size_t(4) << 20);
  EXPECT_EQ(S.StagingBuffers, 16u);
  EXPECT_EQ(S.StagingPoolMax, uint64_t(256) << 20);
}

TEST(SettingsTest, DeviceValuesAndTheirBounds) {
  EnvTy Env;
  Env.set("OMP_NUM_TEAMS", "12");
  Env.set("OMP_TEAMS_THREAD_LIMIT", "96");
  Env.set("LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD", "0");
  Env.set("LIBOMPTARGET_NUM_INITIAL_STREAMS", "8");
  Env.set("LIBOMPTARGET_NUM_INITIAL_EVENTS", "2000"); // above 1024
  Env.set("LIBOMPTARGET_DEVICE_RTL_DEBUG", "3");
  Env.set("LIBOMPTARGET_SHARED_MEMORY_SIZE", "32K");
  Env.set("OFFLOADIO_STAGING_BUFFER_SIZE", "1M");
  Env.set("OFFLOADIO_STAGING_BUFFERS", "64");
  Env.set("OFFLOADIO_STAGING_POOL_MAX", "8M");
  DeviceSettingsTy S = DeviceSettingsTy::fromEnv(48 << 10);
  EXPECT_EQ(S.NumTeams, 12u);
  EXPECT_EQ(S.TeamsThreadLimit, 96u);
  EXPECT_EQ(S.MemoryManagerThreshold, 0u);
  EXPECT_EQ(S.InitialStreams, 8u);
  EXPECT_EQ(S.InitialEvents, 1u) << "out of range: the default";
  EXPECT_EQ(S.DeviceRTLDebug, 3u);
  EXPECT_EQ(S.SharedMemorySize, 32u << 10);
  EXPECT_EQ(S.StagingBufferSize, size_t(1) << 20);
  EXPECT_EQ(S.StagingBuffers, 8u) << "lowered to fit the pool's bytes";

  // The device bounds the shared memory; the pool must hold one buffer.
  S = DeviceSettingsTy::fromEnv(16 << 10);
  EXPECT_EQ(S.SharedMemorySize, 0u);
  Env.set("OFFLOADIO_STAGING_POOL_MAX", "512K");
  S = DeviceSettingsTy::fromEnv(48 << 10);
  EXPECT_EQ(S.StagingPoolMax, uint64_t(256) << 20);
  EXPECT_EQ(S.StagingBuffers, 64u);
}

} // namespace

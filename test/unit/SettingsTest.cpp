// SPDX-License-Identifier: Apache-2.0
// PluginSettingsTy and DeviceSettingsTy: defaults, valid values taken,
// invalid or out-of-range values replaced by the default, bounds that
// depend on other settings or the device.
#include "offloadio/ProcessShare.h"
#include "offloadio/Settings.h"
#include "ScopedEnv.h"

#include <gtest/gtest.h>

#include <memory>

using namespace offloadio;

namespace {

/// Every variable PluginSettingsTy reads, unset for one test.
std::unique_ptr<test::ScopedEnvTy> pluginEnv() {
  return std::make_unique<test::ScopedEnvTy>(std::initializer_list<const char *>{
      "LIBOMPTARGET_INFO", "OFFLOADIO_INFO", "OFFLOADIO_PROFILE",
      "OFFLOADIO_COPY_THREADS",
      "LIBOMPTARGET_LOCK_MAPPED_HOST_BUFFERS", "OFFLOADIO_PINNED_MAX"});
}

/// Every variable DeviceSettingsTy reads, unset for one test.
std::unique_ptr<test::ScopedEnvTy> deviceEnv() {
  return std::make_unique<test::ScopedEnvTy>(std::initializer_list<const char *>{
      "OMP_NUM_TEAMS", "OMP_TEAMS_THREAD_LIMIT",
      "LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD",
      "LIBOMPTARGET_NUM_INITIAL_STREAMS", "LIBOMPTARGET_NUM_INITIAL_EVENTS",
      "LIBOMPTARGET_DEVICE_RTL_DEBUG", "LIBOMPTARGET_SHARED_MEMORY_SIZE",
      "OFFLOADIO_STAGING_BUFFER_SIZE", "OFFLOADIO_STAGING_BUFFERS",
      "OFFLOADIO_STAGING_POOL_MAX", "OFFLOADIO_PARALLEL_STAGING_THRESHOLD",
      "OFFLOADIO_LOCK_THRESHOLD", "OFFLOADIO_PAGEABLE_PATH"});
}

TEST(SettingsTest, PluginDefaults) {
  auto Env = pluginEnv();
  PluginSettingsTy S = PluginSettingsTy::fromEnv();
  EXPECT_EQ(S.InfoFlags, 0u);
  EXPECT_EQ(S.OwnInfoFlags, 0u);
  EXPECT_FALSE(S.Profile);
  EXPECT_LE(S.CopyThreads, 4u);
  EXPECT_EQ(S.MappedLocks, MappedLockPolicyTy::Off);
  EXPECT_EQ(S.PinnedMax, PluginSettingsTy::defaultPinnedMax(ProcessShareTy::detect()));
  EXPECT_GE(S.PinnedMax, PluginSettingsTy::DefaultPinnedFloor);
}

TEST(SettingsTest, PluginValuesAreTaken) {
  auto Env = pluginEnv();
  test::ScopedEnvTy::set("LIBOMPTARGET_INFO", "0x30");
  test::ScopedEnvTy::set("OFFLOADIO_INFO", "32");
  test::ScopedEnvTy::set("OFFLOADIO_PROFILE", "yes");
  test::ScopedEnvTy::set("OFFLOADIO_COPY_THREADS", "7");
  test::ScopedEnvTy::set("LIBOMPTARGET_LOCK_MAPPED_HOST_BUFFERS", "mandatory");
  test::ScopedEnvTy::set("OFFLOADIO_PINNED_MAX", "64M");
  PluginSettingsTy S = PluginSettingsTy::fromEnv();
  EXPECT_EQ(S.InfoFlags, 0x30u);
  EXPECT_EQ(S.OwnInfoFlags, 0x20u);
  EXPECT_TRUE(S.Profile);
  EXPECT_EQ(S.CopyThreads, 7u);
  EXPECT_EQ(S.MappedLocks, MappedLockPolicyTy::Mandatory);
  EXPECT_EQ(S.PinnedMax, 64u << 20);
  test::ScopedEnvTy::set("LIBOMPTARGET_INFO", "-1");
  unsetenv("OFFLOADIO_INFO");
  test::ScopedEnvTy::set("LIBOMPTARGET_LOCK_MAPPED_HOST_BUFFERS", "1");
  S = PluginSettingsTy::fromEnv();
  EXPECT_EQ(S.InfoFlags, ~0u);
  // Each mask is its own variable's.
  EXPECT_EQ(S.OwnInfoFlags, 0u);
  EXPECT_EQ(S.MappedLocks, MappedLockPolicyTy::On);
}

TEST(SettingsTest, PluginInvalidValuesGiveTheDefaults) {
  auto Env = pluginEnv();
  test::ScopedEnvTy::set("LIBOMPTARGET_INFO", "lots");
  test::ScopedEnvTy::set("OFFLOADIO_INFO", "some");
  test::ScopedEnvTy::set("OFFLOADIO_PROFILE", "maybe");
  test::ScopedEnvTy::set("OFFLOADIO_COPY_THREADS", "100000");
  test::ScopedEnvTy::set("LIBOMPTARGET_LOCK_MAPPED_HOST_BUFFERS", "sometimes");
  test::ScopedEnvTy::set("OFFLOADIO_PINNED_MAX", "1K"); // below the 1 MiB floor
  PluginSettingsTy S = PluginSettingsTy::fromEnv();
  EXPECT_EQ(S.InfoFlags, 0u);
  EXPECT_EQ(S.OwnInfoFlags, 0u);
  EXPECT_FALSE(S.Profile);
  EXPECT_LE(S.CopyThreads, 4u);
  EXPECT_EQ(S.MappedLocks, MappedLockPolicyTy::Off);
  EXPECT_EQ(S.PinnedMax, PluginSettingsTy::defaultPinnedMax(ProcessShareTy::detect()));
}

TEST(SettingsTest, DeviceDefaults) {
  auto Env = deviceEnv();
  DeviceSettingsTy S = DeviceSettingsTy::fromEnv(48 << 10);
  EXPECT_EQ(S.NumTeams, 0u);
  EXPECT_EQ(S.TeamsThreadLimit, 0u);
  EXPECT_EQ(S.MemoryManagerThreshold, 8192u);
  EXPECT_EQ(S.InitialStreams, 1u);
  EXPECT_EQ(S.InitialEvents, 1u);
  EXPECT_EQ(S.DeviceRTLDebug, 0u);
  EXPECT_EQ(S.SharedMemorySize, 0u);
  EXPECT_EQ(S.StagingBufferSize, size_t(2) << 20);
  EXPECT_EQ(S.StagingBuffers, 32u);
  EXPECT_EQ(S.StagingPoolMax, uint64_t(256) << 20);
}

TEST(SettingsTest, DeviceValuesAndTheirBounds) {
  auto Env = deviceEnv();
  test::ScopedEnvTy::set("OMP_NUM_TEAMS", "12");
  test::ScopedEnvTy::set("OMP_TEAMS_THREAD_LIMIT", "96");
  test::ScopedEnvTy::set("LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD", "0");
  test::ScopedEnvTy::set("LIBOMPTARGET_NUM_INITIAL_STREAMS", "8");
  test::ScopedEnvTy::set("LIBOMPTARGET_NUM_INITIAL_EVENTS", "2000"); // above 1024
  test::ScopedEnvTy::set("LIBOMPTARGET_DEVICE_RTL_DEBUG", "3");
  test::ScopedEnvTy::set("LIBOMPTARGET_SHARED_MEMORY_SIZE", "32K");
  test::ScopedEnvTy::set("OFFLOADIO_STAGING_BUFFER_SIZE", "1M");
  test::ScopedEnvTy::set("OFFLOADIO_STAGING_BUFFERS", "64");
  test::ScopedEnvTy::set("OFFLOADIO_STAGING_POOL_MAX", "8M");
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
  test::ScopedEnvTy::set("OFFLOADIO_STAGING_POOL_MAX", "512K");
  S = DeviceSettingsTy::fromEnv(48 << 10);
  EXPECT_EQ(S.StagingPoolMax, uint64_t(256) << 20);
  EXPECT_EQ(S.StagingBuffers, 64u);
}

} // namespace

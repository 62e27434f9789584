// SPDX-License-Identifier: Apache-2.0
//
// AMDGPUSettingsTy::fromEnv and AMDGPUFastpathSettingsTy::fromEnv with real
// setenv/unsetenv: the defaults when nothing is set, valid values at the
// ends of each range, out-of-range and unparsable values falling back to
// the default with a report, the queue size's range following the agent's
// limit, and each variable read exactly once.
#include "AMDGPUSettings.h"

#include "DeclaredSettings.h"
#include "ScopedEnv.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <string>
#include <vector>

using namespace offloadio;
using namespace offloadio::test;
using namespace offloadio::amdgpu;
using offloadio::test::contains;
using offloadio::test::ScopedEnvTy;

namespace {

using SettingsTy = AMDGPUSettingsTy;
using FastpathSettingsTy = AMDGPUFastpathSettingsTy;
constexpr const char *DynamicStackSizeVar =
    settingDecl(SettingId::AMDGPUStackSize).Name;
constexpr const char *HeapSizeVar =
    settingDecl(SettingId::AMDGPUHeapSize).Name;
constexpr const char *NumQueuesVar =
    settingDecl(SettingId::AMDGPUNumQueues).Name;
constexpr const char *AnyFilesystemVar =
    settingDecl(SettingId::AMDGPUAnyFilesystem).Name;
constexpr const char *QueueSizeVar =
    settingDecl(SettingId::AMDGPUQueueSize).Name;

/// An agent queue limit like that of current GPUs.
constexpr uint32_t AgentQueueMax = 131072;

class AMDGPUSettingsTest : public ::testing::Test {
protected:
  ScopedEnvTy Env{DynamicStackSizeVar, HeapSizeVar, NumQueuesVar,
                  QueueSizeVar, AnyFilesystemVar};
  std::string Stderr;

  SettingsTy read(uint32_t QueueMax = AgentQueueMax) {
    return ScopedEnvTy::captured(
        [&] { return SettingsTy::fromEnv(QueueMax); }, Stderr);
  }
  FastpathSettingsTy readFastpath() {
    return ScopedEnvTy::captured([] { return FastpathSettingsTy::fromEnv(); },
                                 Stderr);
  }
};

TEST_F(AMDGPUSettingsTest, DefaultsWhenUnset) {
  SettingsTy S = read();
  EXPECT_EQ(S.DynamicStackSize, 0u) << "unset: the version's default";
  EXPECT_EQ(S.HeapSize, 512u << 20) << "stock LLVM 18's pool";
  EXPECT_EQ(S.NumQueues, 4);
  EXPECT_EQ(S.QueueSize, 512);
  EXPECT_EQ(Stderr, "");
  EXPECT_FALSE(readFastpath().AnyFilesystem);
  EXPECT_EQ(Stderr, "");
  SettingsTy D;
  EXPECT_EQ(D.DynamicStackSize, S.DynamicStackSize);
  EXPECT_EQ(D.HeapSize, S.HeapSize);
  EXPECT_EQ(D.NumQueues, S.NumQueues);
  EXPECT_EQ(D.QueueSize, S.QueueSize);
  EXPECT_FALSE(FastpathSettingsTy().AnyFilesystem);
}

TEST_F(AMDGPUSettingsTest, ValidValuesAtTheEndsOfEachRange) {
  ScopedEnvTy::set(DynamicStackSizeVar, "1M");
  ScopedEnvTy::set(HeapSizeVar, "4G");
  ScopedEnvTy::set(NumQueuesVar, "64");
  ScopedEnvTy::set(QueueSizeVar, "131072");
  SettingsTy S = read();
  EXPECT_EQ(S.DynamicStackSize, 1u << 20);
  EXPECT_EQ(S.HeapSize, uint64_t(4) << 30);
  EXPECT_EQ(S.NumQueues, 64);
  EXPECT_EQ(S.QueueSize, 131072);
  EXPECT_EQ(Stderr, "");

  ScopedEnvTy::set(DynamicStackSizeVar, "0");
  ScopedEnvTy::set(HeapSizeVar, "0");
  ScopedEnvTy::set(NumQueuesVar, "1");
  // Not a power of two: the device rounds it, the setting keeps it.
  ScopedEnvTy::set(QueueSizeVar, "100");
  S = read();
  EXPECT_EQ(S.DynamicStackSize, 0u);
  EXPECT_EQ(S.HeapSize, 0u) << "no pool";
  EXPECT_EQ(S.NumQueues, 1);
  EXPECT_EQ(S.QueueSize, 100);
  EXPECT_EQ(Stderr, "");

  ScopedEnvTy::set(AnyFilesystemVar, "yes");
  EXPECT_TRUE(readFastpath().AnyFilesystem);
  EXPECT_EQ(Stderr, "");
}

TEST_F(AMDGPUSettingsTest, InvalidValuesGiveTheDefaultAndAreReported) {
  ScopedEnvTy::set(DynamicStackSizeVar, "2M");
  ScopedEnvTy::set(HeapSizeVar, "lots");
  ScopedEnvTy::set(NumQueuesVar, "0");
  ScopedEnvTy::set(QueueSizeVar, "32");
  SettingsTy S = read();
  EXPECT_EQ(S.DynamicStackSize, 0u);
  EXPECT_EQ(S.HeapSize, 512u << 20);
  EXPECT_EQ(S.NumQueues, 4);
  EXPECT_EQ(S.QueueSize, 512);
  EXPECT_TRUE(contains(Stderr, "LIBOMPTARGET_STACK_SIZE='2M'"));
  EXPECT_TRUE(contains(Stderr, "LIBOMPTARGET_HEAP_SIZE='lots'"));
  EXPECT_TRUE(contains(Stderr, "LIBOMPTARGET_AMDGPU_NUM_HSA_QUEUES='0'"));
  EXPECT_TRUE(contains(Stderr, "LIBOMPTARGET_AMDGPU_HSA_QUEUE_SIZE='32'"));
  EXPECT_EQ(std::count(Stderr.begin(), Stderr.end(), '\n'), 4) << Stderr;

  ScopedEnvTy::set(NumQueuesVar, "65");
  ScopedEnvTy::set(QueueSizeVar, "many");
  S = read();
  EXPECT_EQ(S.NumQueues, 4);
  EXPECT_EQ(S.QueueSize, 512);
  EXPECT_TRUE(contains(Stderr, "LIBOMPTARGET_AMDGPU_NUM_HSA_QUEUES='65'"));
  EXPECT_TRUE(contains(Stderr, "LIBOMPTARGET_AMDGPU_HSA_QUEUE_SIZE='many'"));

  ScopedEnvTy::set(AnyFilesystemVar, "sometimes");
  EXPECT_FALSE(readFastpath().AnyFilesystem);
  EXPECT_TRUE(
      contains(Stderr, "LIBOMPTARGET_AMDGPU_AIS_ANY_FILESYSTEM='sometimes'"));
}

TEST_F(AMDGPUSettingsTest, QueueSizeRangeFollowsTheAgent) {
  EXPECT_EQ(SettingsTy::queueSizeMax(0), 64);
  EXPECT_EQ(SettingsTy::queueSizeMax(16), 64);
  EXPECT_EQ(SettingsTy::queueSizeMax(64), 64);
  EXPECT_EQ(SettingsTy::queueSizeMax(4096), 4096);

  ScopedEnvTy::set(QueueSizeVar, "4096");
  EXPECT_EQ(read(4096).QueueSize, 4096);
  EXPECT_EQ(Stderr, "");
  ScopedEnvTy::set(QueueSizeVar, "4097");
  EXPECT_EQ(read(4096).QueueSize, 512);
  EXPECT_TRUE(contains(Stderr, "LIBOMPTARGET_AMDGPU_HSA_QUEUE_SIZE='4097'"));
  // An agent that states no limit allows only the minimum.
  ScopedEnvTy::set(QueueSizeVar, "64");
  EXPECT_EQ(read(0).QueueSize, 64);
  EXPECT_EQ(Stderr, "");
}

TEST_F(AMDGPUSettingsTest, ReadsEachVariableOnceInDeclarationOrder) {
  auto NamesRead = [](auto Fn) {
    EnvReadLogTy Log;
    Fn();
    std::vector<std::string> Names;
    for (const EnvReadTy &Read : Log.reads())
      Names.push_back(Read.Name);
    return Names;
  };
  EXPECT_EQ(NamesRead([] { SettingsTy::fromEnv(AgentQueueMax); }),
            (std::vector<std::string>{"LIBOMPTARGET_STACK_SIZE",
                                      "LIBOMPTARGET_HEAP_SIZE",
                                      "LIBOMPTARGET_AMDGPU_NUM_HSA_QUEUES",
                                      "LIBOMPTARGET_AMDGPU_HSA_QUEUE_SIZE"}));
  EXPECT_EQ(NamesRead([] { FastpathSettingsTy::fromEnv(); }),
            (std::vector<std::string>{
                "LIBOMPTARGET_AMDGPU_AIS_ANY_FILESYSTEM"}));
}


TEST_F(AMDGPUSettingsTest, ReadsEverySettingTheTableDeclaresForAMDGPU) {
  EnvReadLogTy Log;
  SettingsTy::fromEnv(AgentQueueMax);
  FastpathSettingsTy::fromEnv();
  EXPECT_EQ(namesRead(Log), declaredNames(SettingLayerTy::AMDGPU));
}

} // namespace

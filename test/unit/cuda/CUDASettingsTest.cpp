// SPDX-License-Identifier: Apache-2.0
//
// CUDASettingsTy::fromEnv with real setenv/unsetenv: the defaults when
// nothing is set, every kind of valid value, invalid values falling back to
// the default with a report naming the variable, and each variable read
// exactly once.
#include "CUDASettings.h"

#include "DeclaredSettings.h"
#include "ScopedEnv.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <string>
#include <vector>

using namespace offloadio;
using namespace offloadio::test;
using namespace offloadio::cuda;
using offloadio::test::contains;
using offloadio::test::ScopedEnvTy;

namespace {

using SettingsTy = CUDASettingsTy;
constexpr const char *GraphsVar = settingDecl(SettingId::CUDAGraphs).Name;
constexpr const char *CompletionFlagVar =
    settingDecl(SettingId::CUDACompletionFlag).Name;
constexpr const char *StackSizeVar = settingDecl(SettingId::CUDAStackSize).Name;
constexpr const char *HeapSizeVar = settingDecl(SettingId::CUDAHeapSize).Name;

class CUDASettingsTest : public ::testing::Test {
protected:
  ScopedEnvTy Env{GraphsVar, CompletionFlagVar, StackSizeVar, HeapSizeVar};
  std::string Stderr;

  SettingsTy read() {
    return ScopedEnvTy::captured([] { return SettingsTy::fromEnv(); }, Stderr);
  }
};

TEST_F(CUDASettingsTest, DefaultsWhenUnset) {
  SettingsTy S = read();
  EXPECT_TRUE(S.Graphs);
  EXPECT_TRUE(S.CompletionFlag);
  EXPECT_EQ(S.StackSize, 0u);
  EXPECT_EQ(S.HeapSize, 0u);
  EXPECT_EQ(Stderr, "");
  // A default-constructed structure holds the same defaults.
  SettingsTy D;
  EXPECT_EQ(D.Graphs, S.Graphs);
  EXPECT_EQ(D.CompletionFlag, S.CompletionFlag);
  EXPECT_EQ(D.StackSize, S.StackSize);
  EXPECT_EQ(D.HeapSize, S.HeapSize);
}

TEST_F(CUDASettingsTest, ValidValues) {
  ScopedEnvTy::set(GraphsVar, "off");
  ScopedEnvTy::set(CompletionFlagVar, "NO");
  ScopedEnvTy::set(StackSizeVar, "64K");
  ScopedEnvTy::set(HeapSizeVar, "1G");
  SettingsTy S = read();
  EXPECT_FALSE(S.Graphs);
  EXPECT_FALSE(S.CompletionFlag);
  EXPECT_EQ(S.StackSize, 64u << 10);
  EXPECT_EQ(S.HeapSize, 1u << 30);
  EXPECT_EQ(Stderr, "");

  ScopedEnvTy::set(GraphsVar, "1");
  ScopedEnvTy::set(CompletionFlagVar, "on");
  ScopedEnvTy::set(StackSizeVar, "0");
  ScopedEnvTy::set(HeapSizeVar, "18446744073709551615");
  S = read();
  EXPECT_TRUE(S.Graphs);
  EXPECT_TRUE(S.CompletionFlag);
  EXPECT_EQ(S.StackSize, 0u);
  EXPECT_EQ(S.HeapSize, UINT64_MAX);
  EXPECT_EQ(Stderr, "");
}

TEST_F(CUDASettingsTest, InvalidValuesGiveTheDefaultAndAreReported) {
  ScopedEnvTy::set(GraphsVar, "maybe");
  ScopedEnvTy::set(CompletionFlagVar, "2");
  ScopedEnvTy::set(StackSizeVar, "lots");
  ScopedEnvTy::set(HeapSizeVar, "-1");
  SettingsTy S = read();
  EXPECT_TRUE(S.Graphs);
  EXPECT_TRUE(S.CompletionFlag);
  EXPECT_EQ(S.StackSize, 0u);
  EXPECT_EQ(S.HeapSize, 0u);
  EXPECT_TRUE(contains(Stderr, "OFFLOADIO_CUDA_GRAPHS='maybe'"));
  EXPECT_TRUE(contains(Stderr, "OFFLOADIO_CUDA_COMPLETION_FLAG='2'"));
  EXPECT_TRUE(contains(Stderr, "LIBOMPTARGET_STACK_SIZE='lots'"));
  EXPECT_TRUE(contains(Stderr, "LIBOMPTARGET_HEAP_SIZE='-1'"));
  EXPECT_EQ(std::count(Stderr.begin(), Stderr.end(), '\n'), 4) << Stderr;
}

TEST_F(CUDASettingsTest, ReadsEachVariableOnceInDeclarationOrder) {
  EnvReadLogTy Log;
  SettingsTy::fromEnv();
  std::vector<std::string> Names;
  for (const EnvReadTy &Read : Log.reads())
    Names.push_back(Read.Name);
  EXPECT_EQ(Names, (std::vector<std::string>{
                       "OFFLOADIO_CUDA_GRAPHS", "OFFLOADIO_CUDA_COMPLETION_FLAG",
                       "LIBOMPTARGET_STACK_SIZE", "LIBOMPTARGET_HEAP_SIZE"}));
}


TEST_F(CUDASettingsTest, ReadsEverySettingTheTableDeclaresForCUDA) {
  EnvReadLogTy Log;
  SettingsTy::fromEnv();
  EXPECT_EQ(namesRead(Log), declaredNames(SettingLayerTy::CUDA));
}

} // namespace

// SPDX-License-Identifier: Apache-2.0
//
// ProcessShareTy: the launchers' rank variables, the CPUs and memory a
// process takes of its node, and the setting defaults derived from them.
#include "offloadio/ProcessShare.h"
#include "offloadio/Settings.h"
#include "offloadio/ThreadName.h"
#include "offloadio/io/IOConfig.h"

#include "gtest/gtest.h"

#include <fstream>
#include <map>
#include <sys/syscall.h>
#include <thread>
#include <unistd.h>

using namespace offloadio;

namespace {

using EnvMapTy = std::map<std::string, std::string>;

ProcessShareTy shareWith(unsigned Online, unsigned Mask, const EnvMapTy &Env,
                         uint64_t Memory = 64ULL << 30) {
  ProcessShareTy S;
  S.OnlineCpus = Online;
  S.MaskCpus = Mask;
  S.PhysicalMemory = Memory;
  S.readRanks([&](const char *Name) -> std::optional<std::string> {
    auto It = Env.find(Name);
    if (It == Env.end())
      return std::nullopt;
    return It->second;
  });
  return S;
}

TEST(ProcessShareTest, ALoneProcessTakesItsMask) {
  ProcessShareTy S = shareWith(16, 4, {});
  EXPECT_EQ(S.LocalRanks, 1u);
  EXPECT_EQ(S.LocalRank, -1);
  EXPECT_TRUE(S.RanksVariable.empty());
  EXPECT_EQ(S.cpus(), 4u);
  EXPECT_EQ(S.cpusOrigin(), "the CPU mask (4 of 16 CPUs)");
  EXPECT_EQ(S.shareOf(1000), 1000u);
  EXPECT_EQ(S.shareOrigin(), "");
}

TEST(ProcessShareTest, EachLauncherVariableIsRead) {
  for (const auto &Pair : ProcessShareTy::RankVariables) {
    ProcessShareTy S = shareWith(16, 16, {{Pair[0], "4"}, {Pair[1], "2"}});
    EXPECT_EQ(S.LocalRanks, 4u) << Pair[0];
    EXPECT_EQ(S.LocalRank, 2) << Pair[1];
    EXPECT_EQ(S.RanksVariable, Pair[0]);
    EXPECT_EQ(S.cpus(), 4u);
    EXPECT_EQ(S.cpusOrigin(), std::string("the local rank share (16 CPUs / 4 "
                                          "ranks from ") +
                                  Pair[0] + ")");
    EXPECT_EQ(S.shareOf(1000), 250u);
  }
}

TEST(ProcessShareTest, AMaskNarrowerThanTheShareWins) {
  // Ranks bound to 2 cores each by the launcher: the mask is the budget.
  ProcessShareTy S =
      shareWith(16, 2, {{"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}});
  EXPECT_EQ(S.cpus(), 2u);
  EXPECT_EQ(S.cpusOrigin(), "the CPU mask (2 of 16 CPUs)");
}

TEST(ProcessShareTest, MoreRanksThanCpusStillGetOne) {
  ProcessShareTy S = shareWith(2, 2, {{"PMI_LOCAL_SIZE", "8"}});
  EXPECT_EQ(S.cpus(), 1u);
}

TEST(ProcessShareTest, InvalidValuesAreSkipped) {
  ProcessShareTy S = shareWith(
      16, 16,
      {{"OMPI_COMM_WORLD_LOCAL_SIZE", "many"},
       {"SLURM_NTASKS_PER_NODE", "0"},
       {"MPI_LOCALNRANKS", "99999999"},
       {"PMI_LOCAL_SIZE", "2"},
       {"PMI_LOCAL_RANK", "5"}});
  EXPECT_EQ(S.LocalRanks, 2u);
  EXPECT_EQ(S.RanksVariable, "PMI_LOCAL_SIZE");
  // A rank outside the count is unknown.
  EXPECT_EQ(S.LocalRank, -1);
}

TEST(ProcessShareTest, TheFirstLauncherVariableWins) {
  ProcessShareTy S = shareWith(16, 16,
                               {{"OMPI_COMM_WORLD_LOCAL_SIZE", "2"},
                                {"SLURM_NTASKS_PER_NODE", "8"}});
  EXPECT_EQ(S.LocalRanks, 2u);
  EXPECT_EQ(S.RanksVariable, "OMPI_COMM_WORLD_LOCAL_SIZE");
}

TEST(ProcessShareTest, DefaultsFollowTheShare) {
  ProcessShareTy Alone = shareWith(32, 32, {});
  EXPECT_EQ(IOConfigTy::defaultThreads(Alone), 16u);
  EXPECT_EQ(PluginSettingsTy::defaultCopyThreads(Alone), 12u);
  ProcessShareTy EightCpus = shareWith(8, 8, {});
  EXPECT_EQ(PluginSettingsTy::defaultCopyThreads(EightCpus), 7u);
  EXPECT_EQ(PluginSettingsTy::defaultPinnedMax(Alone), 16ULL << 30);

  ProcessShareTy Eighth =
      shareWith(32, 32, {{"SLURM_NTASKS_PER_NODE", "8"}, {"SLURM_LOCALID", "7"}});
  EXPECT_EQ(IOConfigTy::defaultThreads(Eighth), 4u);
  EXPECT_EQ(PluginSettingsTy::defaultCopyThreads(Eighth), 3u);
  EXPECT_EQ(PluginSettingsTy::defaultPinnedMax(Eighth), 2ULL << 30);
  EXPECT_NE(PluginSettingsTy::defaultPinnedMaxOrigin(Eighth).find(
                "shared by 8 local ranks (SLURM_NTASKS_PER_NODE)"),
            std::string::npos);
  EXPECT_NE(IOConfigTy::defaultThreadsOrigin(Eighth).find("local rank share"),
            std::string::npos);

  // One CPU: one worker and no copy helper.
  ProcessShareTy One = shareWith(8, 1, {});
  EXPECT_EQ(IOConfigTy::defaultThreads(One), 1u);
  EXPECT_EQ(PluginSettingsTy::defaultCopyThreads(One), 0u);

  // Small nodes: the floor is the node's, divided among the ranks, and no
  // rank goes below the smallest cap.
  ProcessShareTy Small =
      shareWith(4, 4, {{"MPI_LOCALNRANKS", "4"}}, 1ULL << 30);
  EXPECT_EQ(PluginSettingsTy::defaultPinnedMax(Small),
            PluginSettingsTy::DefaultPinnedFloor / 4);
  ProcessShareTy Crowded =
      shareWith(4, 4, {{"MPI_LOCALNRANKS", "65536"}}, 1ULL << 30);
  EXPECT_EQ(PluginSettingsTy::defaultPinnedMax(Crowded),
            PluginSettingsTy::MinPinnedMax);
}

TEST(ProcessShareTest, DetectSeesThisProcess) {
  ProcessShareTy S = ProcessShareTy::detect();
  EXPECT_GE(S.OnlineCpus, 1u);
  EXPECT_GE(S.MaskCpus, 1u);
  EXPECT_LE(S.MaskCpus, S.OnlineCpus);
  EXPECT_TRUE(S.MaskProblem.empty()) << S.MaskProblem;
  EXPECT_GT(S.PhysicalMemory, 0u);
}

TEST(ThreadNameTest, NamesAreCutToWhatTheKernelKeeps) {
  EXPECT_EQ(makeThreadName("oio-io", 3), "oio-io-3");
  EXPECT_EQ(makeThreadName("oio-a-very-long-prefix", 12), "oio-a-very-long");
  EXPECT_EQ(makeThreadName("oio-a-very-long-prefix", 12).size(),
            MaxThreadNameLength);
}

TEST(ThreadNameTest, TheNameIsTheThreadsComm) {
  std::string Comm;
  std::thread T([&] {
    ASSERT_FALSE(bool(nameThisThread("oio-test", 7)));
    std::ifstream F("/proc/self/task/" + std::to_string(::syscall(SYS_gettid)) +
                    "/comm");
    std::getline(F, Comm);
  });
  T.join();
  EXPECT_EQ(Comm, "oio-test-7");
}

} // namespace

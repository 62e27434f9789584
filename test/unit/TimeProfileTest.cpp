// SPDX-License-Identifier: Apache-2.0
//
// TimeProfileTy: scopes record nothing when the profile is off or absent;
// with it on, concurrent scopes of entry points and stages are counted
// exactly, printed one line per name, and counting starts afresh after a
// print; figures wider than their columns stay apart.
#include "offloadio/Profile.h"

#include "ProfileOutput.h"

#include "gtest/gtest.h"

#include <string>
#include <thread>
#include <vector>

using namespace offloadio;

namespace {

TEST(TimeProfileTest, OffOrAbsentRecordsNothing) {
  TimeProfileTy Off(false);
  {
    TimeProfileTy::ScopeTy A(Off, "data_submit");
    TimeProfileTy::ScopeTy B(&Off, ProfileStage::FilePread);
    TimeProfileTy::ScopeTy C(nullptr, ProfileStage::FileDmaWait);
  }
  EXPECT_EQ(printedProfile(Off), "");
}

TEST(TimeProfileTest, ConcurrentScopesAreCountedExactlyAndReset) {
  TimeProfileTy On(true);
  constexpr int Threads = 8, PerThread = 1000;
  std::vector<std::thread> Pool;
  for (int T = 0; T < Threads; ++T)
    Pool.emplace_back([&On, T] {
      for (int I = 0; I < PerThread; ++I) {
        TimeProfileTy::ScopeTy Read(&On, ProfileStage::FilePread);
        if (I % 2 == 0) {
          TimeProfileTy::ScopeTy Wait(On, ProfileStage::FileDmaWait);
        }
        if (T == 0) {
          TimeProfileTy::ScopeTy Entry(On, "data_submit");
        }
      }
    });
  for (std::thread &T : Pool)
    T.join();
  std::string Out = printedProfile(On);
  EXPECT_NE(Out.find("profile: entry point or stage, calls, total ms, mean us"),
            std::string::npos)
      << Out;
  auto Calls = profileCalls(Out);
  EXPECT_EQ(Calls.size(), 3u) << Out;
  EXPECT_EQ(Calls[ProfileStage::FilePread], uint64_t(Threads * PerThread));
  EXPECT_EQ(Calls[ProfileStage::FileDmaWait],
            uint64_t(Threads * PerThread / 2));
  EXPECT_EQ(Calls["data_submit"], uint64_t(PerThread));
  // Counting starts afresh.
  EXPECT_EQ(printedProfile(On), "");
  { TimeProfileTy::ScopeTy Once(On, ProfileStage::UploadMemcpy); }
  Calls = profileCalls(printedProfile(On));
  EXPECT_EQ(Calls.size(), 1u);
  EXPECT_EQ(Calls[ProfileStage::UploadMemcpy], 1u);
}

TEST(TimeProfileTest, WideFiguresStaySeparated) {
  TimeProfileTy On(true);
  // One call of 1,234.5 s, another name of 2,000 calls of 150 ms: totals and
  // means wider than their columns.
  On.record("data_submit", 1234500000000ull);
  for (int I = 0; I < 2000; ++I)
    On.record("data_retrieve", 150000000ull);
  std::string Out = printedProfile(On);
  EXPECT_NE(Out.find("data_submit                    1 1234500.000 "
                     "1234500000.000\n"),
            std::string::npos)
      << Out;
  EXPECT_NE(Out.find("data_retrieve               2000  300000.000 "
                     "150000.000\n"),
            std::string::npos)
      << Out;
}

} // namespace

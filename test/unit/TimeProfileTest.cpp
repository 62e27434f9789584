// SPDX-License-Identifier: Apache-2.0
//
// TimeProfileTy: scopes record nothing when the profile is off or absent;
// with it on, concurrent scopes of entry points and stages are counted
// exactly, printed one line per name, and counting starts afresh after a
// print.
#include "offloadio/Profile.h"

#include "gtest/gtest.h"

#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace offloadio;

namespace {

/// Calls per name in a printAndReset() output.
std::map<std::string, uint64_t> callsIn(const std::string &Output) {
  std::map<std::string, uint64_t> Calls;
  std::istringstream Lines(Output);
  for (std::string Line; std::getline(Lines, Line);) {
    const std::string Marker = ": profile: ";
    size_t At = Line.find(Marker);
    EXPECT_NE(At, std::string::npos) << Line;
    if (At == std::string::npos)
      continue;
    std::string Rest = Line.substr(At + Marker.size());
    if (Rest.rfind("entry point or stage,", 0) == 0)
      continue;
    // "<name padded to 22> <calls> <total ms> <mean us>": the name may
    // hold spaces, the last three fields do not.
    std::istringstream Fields(Rest);
    std::vector<std::string> Words;
    for (std::string W; Fields >> W;)
      Words.push_back(W);
    EXPECT_GE(Words.size(), 4u) << Line;
    if (Words.size() < 4)
      continue;
    std::string Name = Words[0];
    for (size_t I = 1; I + 3 < Words.size(); ++I)
      Name += " " + Words[I];
    Calls[Name] = std::stoull(Words[Words.size() - 3]);
  }
  return Calls;
}

std::string printed(TimeProfileTy &Profile) {
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  Profile.printAndReset(OS, "test");
  OS.flush();
  return Out;
}

TEST(TimeProfileTest, OffOrAbsentRecordsNothing) {
  TimeProfileTy Off(false);
  {
    TimeProfileTy::ScopeTy A(Off, "data_submit");
    TimeProfileTy::ScopeTy B(&Off, ProfileStage::FilePread);
    TimeProfileTy::ScopeTy C(nullptr, ProfileStage::FileDmaWait);
  }
  EXPECT_EQ(printed(Off), "");
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
  std::string Out = printed(On);
  EXPECT_NE(Out.find("profile: entry point or stage, calls, total ms, mean us"),
            std::string::npos)
      << Out;
  auto Calls = callsIn(Out);
  EXPECT_EQ(Calls.size(), 3u) << Out;
  EXPECT_EQ(Calls[ProfileStage::FilePread], uint64_t(Threads * PerThread));
  EXPECT_EQ(Calls[ProfileStage::FileDmaWait],
            uint64_t(Threads * PerThread / 2));
  EXPECT_EQ(Calls["data_submit"], uint64_t(PerThread));
  // Counting starts afresh.
  EXPECT_EQ(printed(On), "");
  { TimeProfileTy::ScopeTy Once(On, ProfileStage::UploadMemcpy); }
  Calls = callsIn(printed(On));
  EXPECT_EQ(Calls.size(), 1u);
  EXPECT_EQ(Calls[ProfileStage::UploadMemcpy], 1u);
}

} // namespace

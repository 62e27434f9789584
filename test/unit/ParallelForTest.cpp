// SPDX-License-Identifier: Apache-2.0
//
// The copy threads' pool (ParallelFor.h): every iteration of concurrent
// loops runs once (random loops of random users against a count per
// iteration), the helpers grow with the users up to the cap, and a loop
// that arrives while another keeps every helper busy gets helpers before
// that one ends.
#include "offloadio/ParallelFor.h"

#include "gtest/gtest.h"

#include <atomic>
#include <chrono>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace offloadio;

namespace {

TEST(ParallelForTest, NoThreadsRunsEverythingOnTheCaller) {
  ParallelForTy Pool(0, 0);
  EXPECT_EQ(Pool.threadsPerUser(), 0u);
  std::vector<std::thread::id> Ran(50);
  Pool.run(0, Ran.size(), [&](size_t I) { Ran[I] = std::this_thread::get_id(); });
  for (const std::thread::id &Id : Ran)
    EXPECT_EQ(Id, std::this_thread::get_id());
  EXPECT_EQ(Pool.getNumStarted(), 0u);
}

TEST(ParallelForTest, HelpersGrowWithTheUsersUpToTheCap) {
  ParallelForTy Pool(2, 5);
  EXPECT_EQ(Pool.threadsPerUser(), 2u);
  EXPECT_EQ(Pool.threadsFor(0), 0u);
  EXPECT_EQ(Pool.threadsFor(2), 4u);
  EXPECT_EQ(Pool.threadsFor(9), 5u);
  auto Nothing = [](size_t) {};
  EXPECT_EQ(Pool.getNumStarted(), 0u);
  Pool.run(7, 4, Nothing);
  EXPECT_EQ(Pool.getNumStarted(), 2u);
  Pool.run(7, 4, Nothing);
  EXPECT_EQ(Pool.getNumStarted(), 2u);
  EXPECT_EQ(Pool.getNumUsers(), 1u);
  Pool.run(3, 4, Nothing);
  EXPECT_EQ(Pool.getNumStarted(), 4u);
  EXPECT_EQ(Pool.threadsPerUser(), 2u);
  Pool.run(1, 4, Nothing);
  Pool.run(0, 4, Nothing);
  EXPECT_EQ(Pool.getNumStarted(), 5u);
  EXPECT_EQ(Pool.getNumUsers(), 4u);
  // Four users share the cap's five helpers: one each.
  EXPECT_EQ(Pool.threadsPerUser(), 1u);
  // A loop of one iteration runs on its caller and counts no user.
  Pool.run(11, 1, Nothing);
  EXPECT_EQ(Pool.getNumUsers(), 4u);
}

TEST(ParallelForTest, ConcurrentRandomLoopsRunEachIterationOnce) {
  ParallelForTy Pool(3, 7);
  constexpr unsigned Callers = 6, LoopsEach = 40;
  std::vector<std::thread> Threads;
  std::atomic<unsigned> Failures{0};
  for (unsigned C = 0; C < Callers; ++C)
    Threads.emplace_back([&, C] {
      std::mt19937 Rng(C + 1);
      for (unsigned L = 0; L < LoopsEach; ++L) {
        size_t N = Rng() % 300;
        std::vector<std::atomic<unsigned>> Count(N);
        unsigned Spin = Rng() % 200;
        Pool.run(C % 4, N, [&](size_t I) {
          for (volatile unsigned K = 0; K < Spin; K = K + 1)
            ;
          Count[I].fetch_add(1, std::memory_order_relaxed);
        });
        for (size_t I = 0; I < N; ++I)
          Failures += Count[I].load() != 1;
      }
    });
  for (std::thread &T : Threads)
    T.join();
  EXPECT_EQ(Failures.load(), 0u);
  EXPECT_EQ(Pool.getNumStarted(), 7u);
}

TEST(ParallelForTest, ALaterLoopGetsHelpersWhileTheFirstStillRuns) {
  ParallelForTy Pool(2, 4);
  // Both users first, so that all four helpers exist.
  Pool.run(0, 2, [](size_t) {});
  Pool.run(1, 2, [](size_t) {});
  ASSERT_EQ(Pool.getNumStarted(), 4u);
  std::atomic<bool> FirstDone{false}, SecondStarted{false};
  std::atomic<unsigned> HelpedWhileFirstRan{0};
  std::thread First([&] {
    Pool.run(0, 4000, [&](size_t) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    });
    FirstDone = true;
  });
  // The first loop holds every helper by now.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::thread::id Caller = std::this_thread::get_id();
  Pool.run(1, 200, [&](size_t) {
    SecondStarted = true;
    if (std::this_thread::get_id() != Caller && !FirstDone)
      ++HelpedWhileFirstRan;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  });
  bool FirstStillRan = !FirstDone;
  First.join();
  EXPECT_TRUE(SecondStarted);
  EXPECT_TRUE(FirstStillRan) << "the first loop ended before the second: "
                                "the test proves nothing";
  EXPECT_GT(HelpedWhileFirstRan.load(), 0u);
}

} // namespace

namespace {

/// The CPUs each thread was last moved to, as the helpers see them.
class ThreadCpusTy final : public offloadio::AffinitySysTy {
public:
  int getThreadAffinity(offloadio::CpuSetTy &Cpus) override {
    Cpus = offloadio::CpuSetTy({0, 1, 2, 3, 4, 5, 6, 7});
    return 0;
  }
  int setThreadAffinity(const offloadio::CpuSetTy &Cpus) override {
    current() = Cpus.str();
    ++Moves;
    return 0;
  }
  /// "" for a thread never moved (the loops' callers).
  static std::string &current() {
    thread_local std::string Cpus;
    return Cpus;
  }
  std::atomic<unsigned> Moves{0};
};

} // namespace

TEST(ParallelForTest, HelpersRunEachLoopOnItsDevicesCpus) {
  // Two devices' loops at once, each with its placement: every iteration a
  // helper runs is on the CPUs of the loop's device, however often the
  // helpers switch loops; the callers stay where they are.
  ThreadCpusTy Sys;
  offloadio::DevicePlacementTy Near0, Near1;
  offloadio::CpuPlacementTy P0, P1;
  P0.Node = 0;
  P0.Cpus = offloadio::CpuSetTy({0, 1, 2, 3});
  P1.Node = 1;
  P1.Cpus = offloadio::CpuSetTy({4, 5, 6, 7});
  Near0.set(P0, nullptr, 0);
  Near1.set(P1, nullptr, 1);
  offloadio::ParallelForTy Pool(2, 4, &Sys);
  constexpr size_t N = 400;
  std::vector<std::string> Where0(N), Where1(N);
  auto Loop = [&](unsigned User, offloadio::DevicePlacementTy &Near,
                  std::vector<std::string> &Where) {
    Pool.run(
        User, N,
        [&](size_t I) {
          Where[I] = ThreadCpusTy::current();
          std::this_thread::sleep_for(std::chrono::microseconds(50));
        },
        &Near);
  };
  std::thread A([&] { Loop(0, Near0, Where0); });
  std::thread B([&] { Loop(1, Near1, Where1); });
  A.join();
  B.join();
  size_t Helped = 0;
  for (size_t I = 0; I < N; ++I) {
    EXPECT_TRUE(Where0[I].empty() || Where0[I] == P0.Cpus.str()) << Where0[I];
    EXPECT_TRUE(Where1[I].empty() || Where1[I] == P1.Cpus.str()) << Where1[I];
    Helped += !Where0[I].empty() + !Where1[I].empty();
  }
  EXPECT_GT(Helped, 0u);
  EXPECT_GT(Sys.Moves.load(), 0u);
  // A loop without a placement: helpers go back to their own mask.
  std::vector<std::string> Where(N);
  Pool.run(0, N, [&](size_t I) {
    Where[I] = ThreadCpusTy::current();
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  });
  for (const std::string &W : Where)
    EXPECT_TRUE(W.empty() || W == "0-7") << W;
}

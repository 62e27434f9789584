// SPDX-License-Identifier: Apache-2.0
//
// IOBusyMemoryTy: markings of memory in use by transfers, the wait of a
// free for them, and the hold-back of markings while a free runs; plus a
// randomised run of overlapping markings against a list of ranges, and
// frees among half a million markings.
#include "offloadio/io/IOBusyMemory.h"

#include "gtest/gtest.h"

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <random>
#include <thread>
#include <vector>

using namespace offloadio;

namespace {

const char *at(uintptr_t Addr) { return reinterpret_cast<const char *>(Addr); }


TEST(IOBusyMemoryTest, NothingBusyWaitsForNothing) {
  IOBusyMemoryTy B;
  EXPECT_FALSE(B.isBusy(at(0x1000), 4096));
  EXPECT_FALSE(B.waitUntilIdle(at(0x1000), 4096));
  EXPECT_EQ(B.busyRanges(), 0u);
}

TEST(IOBusyMemoryTest, OverlapIsHalfOpen) {
  IOBusyMemoryTy B;
  IOBusyMarkTy M(B, at(0x1000), 0x100);
  EXPECT_TRUE(B.isBusy(at(0x1000), 1));
  EXPECT_TRUE(B.isBusy(at(0x10ff), 1));
  EXPECT_TRUE(B.isBusy(at(0x800), 0x801));
  EXPECT_FALSE(B.isBusy(at(0x1100), 0x100));
  EXPECT_FALSE(B.isBusy(at(0x800), 0x800));
  EXPECT_FALSE(B.isBusy(at(0x1000), 0));
  // A range running past the end of the address space ends there.
  EXPECT_TRUE(B.isBusy(at(0x800), SIZE_MAX));
  EXPECT_FALSE(B.waitUntilIdle(at(0x1100), 0x100));
}

TEST(IOBusyMemoryTest, MarkReleasesOnResetDestructionAndMoves) {
  IOBusyMemoryTy B;
  {
    IOBusyMarkTy M(B, at(0x1000), 16);
    EXPECT_EQ(B.busyRanges(), 1u);
    IOBusyMarkTy N = std::move(M);
    EXPECT_EQ(B.busyRanges(), 1u);
    M.reset(); // Moved from: holds nothing.
    EXPECT_EQ(B.busyRanges(), 1u);
    IOBusyMarkTy O(B, at(0x2000), 16);
    N = std::move(O); // N's marking goes, O's moves in.
    EXPECT_EQ(B.busyRanges(), 1u);
    EXPECT_FALSE(B.isBusy(at(0x1000), 16));
    EXPECT_TRUE(B.isBusy(at(0x2000), 16));
    N.reset();
    EXPECT_EQ(B.busyRanges(), 0u);
    N.reset();
  }
  IOBusyMarkTy Empty;
  Empty.reset();
  EXPECT_EQ(B.busyRanges(), 0u);
}

TEST(IOBusyMemoryTest, WaitBlocksUntilEveryOverlappingMarkIsReleased) {
  IOBusyMemoryTy B;
  IOBusyMarkTy M1(B, at(0x1000), 0x1000), M2(B, at(0x1800), 0x1000);
  IOBusyMarkTy Other(B, at(0x8000), 0x1000);
  std::atomic<bool> Finished{false}, Waited{false};
  std::thread T([&] {
    Waited = B.waitUntilIdle(at(0x1000), 0x1000);
    Finished = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(Finished.load());
  M1.reset();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(Finished.load()) << "M2 still overlaps";
  M2.reset();
  T.join();
  EXPECT_TRUE(Waited.load());
  EXPECT_EQ(B.busyRanges(), 1u); // Other stays.
}

TEST(IOBusyMemoryTest, MarkingsWaitForAFreeInProgress) {
  IOBusyMemoryTy B;
  EXPECT_FALSE(B.beginFree(at(0x1000), 0x1000));
  std::atomic<bool> Marked{false};
  std::thread T([&] {
    IOBusyMarkTy M(B, at(0x1800), 16);
    Marked = true;
  });
  // Memory elsewhere is marked at once.
  { IOBusyMarkTy Elsewhere(B, at(0x3000), 16); }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(Marked.load());
  B.endFree(at(0x1000), 0x1000);
  T.join();
  EXPECT_TRUE(Marked.load());
  EXPECT_EQ(B.busyRanges(), 0u);
}

TEST(IOBusyMemoryTest, BeginFreeWaitsForMarkings) {
  IOBusyMemoryTy B;
  auto M = std::make_unique<IOBusyMarkTy>(B, at(0x1000), 64);
  std::atomic<bool> Started{false}, Finished{false}, Waited{false};
  std::thread T([&] {
    Started = true;
    Waited = B.beginFree(at(0x1000), 0x1000);
    Finished = true;
  });
  // The free must be waiting before the marking ends, or there is nothing
  // to wait for: on a loaded machine the thread may start late.
  while (!Started.load())
    std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(Finished.load());
  M.reset();
  T.join();
  EXPECT_TRUE(Waited.load());
  B.endFree(at(0x1000), 0x1000);
  IOBusyMarkTy After(B, at(0x1000), 64); // Not held back any more.
  EXPECT_EQ(B.busyRanges(), 1u);
}

TEST(IOBusyMemoryTest, RandomisedAgainstAListOfRanges) {
  IOBusyMemoryTy B;
  std::mt19937_64 Rng(7);
  struct ModelTy {
    uintptr_t Begin, End;
  };
  std::map<unsigned, std::pair<ModelTy, IOBusyMarkTy>> Marks;
  unsigned Next = 0;
  auto Random = [&](uintptr_t &Begin, size_t &Size) {
    Begin = 0x10000 + (Rng() % 4096) * 16;
    Size = Rng() % 5 == 0 ? 0 : 1 + Rng() % 2048;
  };
  for (int Op = 0; Op < 20000; ++Op) {
    uintptr_t Begin;
    size_t Size;
    Random(Begin, Size);
    if (Rng() % 2 || Marks.empty()) {
      Marks.emplace(Next++, std::make_pair(ModelTy{Begin, Begin + Size},
                                           IOBusyMarkTy(B, at(Begin), Size)));
    } else {
      auto It = Marks.begin();
      std::advance(It, Rng() % Marks.size());
      Marks.erase(It);
    }
    ASSERT_EQ(B.busyRanges(), Marks.size()) << "op " << Op;
    Random(Begin, Size);
    bool Expect = false;
    for (auto &[Id, M] : Marks)
      Expect |= M.first.Begin < Begin + Size && Begin < M.first.End;
    ASSERT_EQ(B.isBusy(at(Begin), Size), Expect) << "op " << Op;
    if (!Expect)
      ASSERT_FALSE(B.waitUntilIdle(at(Begin), Size));
  }
  Marks.clear();
  EXPECT_EQ(B.busyRanges(), 0u);
}

TEST(IOBusyMemoryTest, FreesAmongHalfAMillionMarkings) {
  // A batch marks every operation's buffer: each free, and each release a
  // free waits through, must not scan them all.
  constexpr size_t N = 500000;
  IOBusyMemoryTy B;
  std::vector<IOBusyMarkTy> Marks;
  Marks.reserve(N);
  for (size_t I = 0; I < N; ++I)
    Marks.emplace_back(B, at(0x10000 + 32 * I), 16);
  for (size_t I = 0; I < N; ++I) {
    ASSERT_TRUE(B.isBusy(at(0x10000 + 32 * I + 15), 1)) << I;
    ASSERT_FALSE(B.waitUntilIdle(at(0x10000 + 32 * I + 16), 16)) << I;
    ASSERT_FALSE(B.beginFree(at(0x10000 + 32 * I + 16), 16)) << I;
    B.endFree(at(0x10000 + 32 * I + 16), 16);
  }
  // A free of the last buffer waits through every release before it.
  std::atomic<bool> Waited{false};
  std::thread T([&] { Waited = B.beginFree(at(0x10000 + 32 * (N - 1)), 16); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  Marks.clear();
  T.join();
  EXPECT_TRUE(Waited.load());
  B.endFree(at(0x10000 + 32 * (N - 1)), 16);
  EXPECT_EQ(B.busyRanges(), 0u);
}

} // namespace

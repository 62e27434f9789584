// SPDX-License-Identifier: Apache-2.0
//
// IORangeIndexTy, the overlap index of IOBusyMemoryTy: random inserts,
// erases and overlap queries against a list of ranges, in windows small
// enough that ranges pile on each other, empty ranges and the end of the
// address space included; keys held twice or not at all; and half a
// million nested ranges, inserted and erased in order.
#include "offloadio/io/IORangeIndex.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <utility>
#include <vector>

using namespace offloadio;

namespace {

using ModelTy = std::map<uint64_t, std::pair<uintptr_t, uintptr_t>>;

bool modelOverlaps(const ModelTy &Model, uintptr_t Begin, uintptr_t End) {
  for (const auto &[Key, R] : Model)
    if (R.first < End && Begin < R.second)
      return true;
  return false;
}

TEST(IORangeIndexTest, RandomisedAgainstAListOfRanges) {
  for (uint64_t Seed = 0; Seed < 40; ++Seed) {
    std::mt19937_64 Rng(Seed);
    // Small windows pile ranges up; some seeds sit at the top of the
    // address space.
    uintptr_t Base = Seed % 4 == 3 ? UINTPTR_MAX - 256 : 0x1000;
    uintptr_t Window = Seed % 2 ? 64 : 256;
    auto Random = [&](uintptr_t &Begin, uintptr_t &End) {
      Begin = Base + Rng() % Window;
      uint64_t Size = Rng() % 6 == 0 ? 0 : 1 + Rng() % (Window / 4);
      End = Size > UINTPTR_MAX - Begin ? UINTPTR_MAX : Begin + Size;
    };
    IORangeIndexTy Index;
    ModelTy Model;
    for (int Op = 0; Op < 3000; ++Op) {
      uintptr_t Begin, End;
      Random(Begin, End);
      uint64_t Key = Rng() % 400;
      if (Rng() % 3) {
        bool Free = !Model.count(Key);
        ASSERT_EQ(Index.insert(Key, Begin, End), Free) << Seed << " " << Op;
        if (Free)
          Model[Key] = {Begin, End};
      } else {
        ASSERT_EQ(Index.erase(Key), Model.erase(Key) == 1) << Seed << " " << Op;
      }
      ASSERT_EQ(Index.size(), Model.size());
      for (int Q = 0; Q < 4; ++Q) {
        Random(Begin, End);
        ASSERT_EQ(Index.overlaps(Begin, End), modelOverlaps(Model, Begin, End))
            << "seed " << Seed << " op " << Op << " [" << Begin << ", " << End
            << ")";
      }
    }
  }
}

TEST(IORangeIndexTest, EmptyRangesOverlapOnlyWhatStrictlyContainsThem) {
  IORangeIndexTy Index;
  EXPECT_FALSE(Index.overlaps(0, UINTPTR_MAX));
  ASSERT_TRUE(Index.insert(1, 100, 100));
  EXPECT_TRUE(Index.overlaps(99, 101));
  EXPECT_FALSE(Index.overlaps(100, 101));
  EXPECT_FALSE(Index.overlaps(99, 100));
  EXPECT_FALSE(Index.overlaps(100, 100));
  ASSERT_TRUE(Index.insert(2, 200, 300));
  EXPECT_TRUE(Index.overlaps(250, 250));
  EXPECT_FALSE(Index.overlaps(200, 200));
  EXPECT_FALSE(Index.insert(2, 0, 1)) << "key 2 holds a range";
  EXPECT_TRUE(Index.erase(2));
  EXPECT_FALSE(Index.erase(2));
  EXPECT_FALSE(Index.overlaps(250, 250));
  EXPECT_EQ(Index.size(), 1u);
}

TEST(IORangeIndexTest, HalfAMillionNestedRangesInOrder) {
  // Sequential keys and starts, each range inside the one before: the
  // shapes that unbalance a tree without random priorities.
  constexpr uintptr_t N = 500000;
  IORangeIndexTy Index;
  for (uintptr_t I = 0; I < N; ++I)
    ASSERT_TRUE(Index.insert(I, I, 2 * N - I));
  for (uintptr_t I = 0; I < N; ++I)
    ASSERT_TRUE(Index.overlaps(I, I + 1)) << I;
  EXPECT_FALSE(Index.overlaps(2 * N, 3 * N));
  // Outermost first: the first byte of each erased range is free then.
  for (uintptr_t I = 0; I < N / 2; ++I) {
    ASSERT_TRUE(Index.erase(I));
    ASSERT_FALSE(Index.overlaps(I, I + 1)) << I;
    ASSERT_TRUE(Index.overlaps(I + 1, I + 2)) << I;
  }
  // Then innermost first.
  for (uintptr_t I = N; I-- > N / 2;)
    ASSERT_TRUE(Index.erase(I));
  EXPECT_EQ(Index.size(), 0u);
  EXPECT_FALSE(Index.overlaps(0, UINTPTR_MAX));
}

} // namespace

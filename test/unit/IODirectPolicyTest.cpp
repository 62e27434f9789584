// SPDX-License-Identifier: Apache-2.0
//
// The chunk layout of the O_DIRECT policy against a model: random ranges,
// geometries and chunk sizes; chunks tile the range in order, the middle's
// chunks start and end on aligned file offsets, head and tail are shorter
// than one block.
#include "offloadio/io/IODirectPolicy.h"

#include "gtest/gtest.h"

#include <random>

using namespace offloadio;

namespace {

TEST(IODirectPolicyTest, AlignedLayoutTilesTheRangeOnAlignedOffsets) {
  std::mt19937_64 Rng(11);
  for (int Case = 0; Case < 20000; ++Case) {
    size_t Geometry = size_t(512) << (Rng() % 4);
    size_t ChunkSize = Geometry * (1 + Rng() % 8);
    uint64_t Offset = Rng() % (1 << 16);
    size_t Count = Rng() % (1 << 16);
    auto L = IOChunkLayoutTy::aligned(Offset, Count, Geometry, ChunkSize);
    uint64_t FirstAligned = (Offset + Geometry - 1) / Geometry * Geometry;
    uint64_t LastAligned = (Offset + Count) / Geometry * Geometry;
    ASSERT_EQ(bool(L), FirstAligned < LastAligned);
    if (!L)
      continue;
    size_t Next = 0;
    for (size_t I = 0; I < L->numChunks(); ++I) {
      ASSERT_EQ(L->chunkOffset(I), Next) << "case " << Case;
      size_t Len = L->chunkLength(I);
      ASSERT_GT(Len, 0u);
      uint64_t Begin = Offset + Next, End = Begin + Len;
      if (L->inMiddle(I)) {
        EXPECT_EQ(Begin % Geometry, 0u);
        EXPECT_EQ(End % Geometry, 0u);
        EXPECT_LE(Len, ChunkSize);
      } else {
        EXPECT_LT(Len, Geometry);
      }
      Next += Len;
    }
    ASSERT_EQ(Next, Count);
  }
}

TEST(IODirectPolicyTest, PlainLayoutIsAllMiddleInChunks) {
  IOChunkLayoutTy L = IOChunkLayoutTy::plain(10000, 4096);
  ASSERT_EQ(L.numChunks(), 3u);
  EXPECT_EQ(L.chunkOffset(2), 8192u);
  EXPECT_EQ(L.chunkLength(2), 10000u - 8192);
  EXPECT_TRUE(L.inMiddle(0) && L.inMiddle(2));
  EXPECT_EQ(IOChunkLayoutTy::plain(0, 4096).numChunks(), 0u);
}

} // namespace

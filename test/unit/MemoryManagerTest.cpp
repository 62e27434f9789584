// SPDX-License-Identifier: Apache-2.0
//
// MemoryManagerTy against a fake backend allocator that hands out real heap
// blocks and records every call: bucket rounding, reuse, ownership checks,
// release, failures, and a randomised run against a simple model.
#include "offloadio/MemoryManager.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>

using namespace offloadio;

namespace {

/// Stands in for a vendor allocator. Blocks are real malloc memory, so a
/// sanitizer sees any write past a block's end, and every block is tracked
/// so that a double or foreign free is counted instead of crashing.
class FakeAllocatorTy final : public BlockAllocatorTy {
public:
  ~FakeAllocatorTy() override {
    for (auto &[Ptr, Size] : Live)
      std::free(Ptr);
  }

  Expected<void *> allocateBlock(size_t Size) override {
    std::lock_guard<std::mutex> Guard(Lock);
    ++Allocations;
    LastSize = Size;
    if (FailAllocations)
      return makeError(ErrorCode::OutOfResources,
                       "fake device out of memory for {0} bytes", Size);
    void *Ptr = std::malloc(Size);
    Live[Ptr] = Size;
    return Ptr;
  }

  Error freeBlock(void *Ptr) override {
    std::lock_guard<std::mutex> Guard(Lock);
    ++Frees;
    auto It = Live.find(Ptr);
    if (It == Live.end()) {
      ++BadFrees;
      return makeError(ErrorCode::InvalidArgument,
                       "fake free of unknown block {0}", Ptr);
    }
    if (FailFrees)
      return makeError(ErrorCode::BackendError, "fake free of {0} failed", Ptr);
    std::free(Ptr);
    Live.erase(It);
    return Error::success();
  }

  /// The size the block at \p Ptr was allocated with, 0 if not live.
  size_t sizeOf(void *Ptr) const {
    std::lock_guard<std::mutex> Guard(Lock);
    auto It = Live.find(Ptr);
    return It == Live.end() ? 0 : It->second;
  }
  size_t liveBlocks() const {
    std::lock_guard<std::mutex> Guard(Lock);
    return Live.size();
  }

  mutable std::mutex Lock;
  std::map<void *, size_t> Live;
  size_t Allocations = 0;
  size_t Frees = 0;
  size_t BadFrees = 0;
  size_t LastSize = 0;
  bool FailAllocations = false;
  bool FailFrees = false;
};

void *allocateOk(MemoryManagerTy &MM, size_t Size) {
  Expected<void *> Ptr = MM.allocate(Size);
  if (!Ptr) {
    ADD_FAILURE() << "allocate(" << Size
                  << ") failed: " << takeErrorMessage(Ptr.takeError());
    return nullptr;
  }
  EXPECT_NE(*Ptr, nullptr);
  return *Ptr;
}

bool freeOk(MemoryManagerTy &MM, void *Ptr) {
  Expected<bool> Owned = MM.free(Ptr);
  if (!Owned) {
    ADD_FAILURE() << "free failed: " << takeErrorMessage(Owned.takeError());
    return false;
  }
  return *Owned;
}

TEST(MemoryManagerTest, SizesRoundUpToPowerOfTwoBuckets) {
  FakeAllocatorTy A;
  MemoryManagerTy MM(A, 8192);
  const std::pair<size_t, size_t> Cases[] = {
      {1, 16},      {15, 16},     {16, 16},     {17, 32},
      {31, 32},     {32, 32},     {33, 64},     {100, 128},
      {4096, 4096}, {4097, 8192}, {8191, 8192}, {8192, 8192}};
  std::vector<void *> Ptrs;
  for (auto [Size, Bucket] : Cases) {
    size_t Before = A.Allocations;
    void *Ptr = allocateOk(MM, Size);
    // Nothing is cached yet, so each request reaches the allocator.
    EXPECT_EQ(A.Allocations, Before + 1) << Size;
    EXPECT_EQ(A.LastSize, Bucket) << "request of " << Size << " bytes";
    EXPECT_EQ(A.sizeOf(Ptr), Bucket);
    std::memset(Ptr, 0xab, Size);
    Ptrs.push_back(Ptr);
  }
  for (void *Ptr : Ptrs)
    EXPECT_TRUE(freeOk(MM, Ptr));
}

TEST(MemoryManagerTest, FreedBlocksAreReusedWithoutAllocating) {
  FakeAllocatorTy A;
  MemoryManagerTy MM(A, 8192);
  std::set<void *> First;
  for (int I = 0; I < 10; ++I)
    First.insert(allocateOk(MM, 64));
  ASSERT_EQ(First.size(), 10u);
  EXPECT_EQ(A.Allocations, 10u);
  for (void *Ptr : First)
    EXPECT_TRUE(freeOk(MM, Ptr));
  EXPECT_EQ(MM.cachedBlocks(), 10u);

  // Any size of the same bucket is served from the cache.
  std::set<void *> Second;
  for (int I = 0; I < 10; ++I)
    Second.insert(allocateOk(MM, 33 + I * 3));
  EXPECT_EQ(A.Allocations, 10u);
  EXPECT_EQ(Second, First);
  EXPECT_EQ(MM.cachedBlocks(), 0u);
  EXPECT_EQ(A.Frees, 0u);

  // One more needs the allocator again.
  void *Extra = allocateOk(MM, 64);
  EXPECT_EQ(A.Allocations, 11u);
  EXPECT_EQ(First.count(Extra), 0u);
  for (void *Ptr : Second)
    EXPECT_TRUE(freeOk(MM, Ptr));
  EXPECT_TRUE(freeOk(MM, Extra));
}

TEST(MemoryManagerTest, SmallerBlockNeverServesLargerRequest) {
  FakeAllocatorTy A;
  MemoryManagerTy MM(A, 8192);
  void *Small = allocateOk(MM, 64);
  EXPECT_TRUE(freeOk(MM, Small));
  void *Big = allocateOk(MM, 65);
  EXPECT_NE(Big, Small);
  EXPECT_EQ(A.Allocations, 2u);
  EXPECT_GE(A.sizeOf(Big), 65u);
  EXPECT_EQ(MM.cachedBlocks(), 1u);
  EXPECT_TRUE(freeOk(MM, Big));
}

TEST(MemoryManagerTest, FreeOfForeignPointerReturnsFalse) {
  FakeAllocatorTy A;
  MemoryManagerTy MM(A, 8192);
  int Local = 0;
  EXPECT_FALSE(freeOk(MM, &Local));
  EXPECT_FALSE(freeOk(MM, nullptr));
  // A block of the same allocator that did not come through the cache (a
  // large allocation, say) is the caller's to free.
  Expected<void *> Direct = A.allocateBlock(64);
  ASSERT_TRUE(bool(Direct));
  EXPECT_FALSE(freeOk(MM, *Direct));
  EXPECT_EQ(MM.cachedBlocks(), 0u);
  // An interior pointer of a cached block is not the block.
  void *Ptr = allocateOk(MM, 64);
  EXPECT_FALSE(freeOk(MM, static_cast<char *>(Ptr) + 8));
  EXPECT_TRUE(freeOk(MM, Ptr));
  EXPECT_EQ(MM.cachedBlocks(), 1u);
  ASSERT_FALSE(bool(A.freeBlock(*Direct)));
}

TEST(MemoryManagerTest, DoubleFreeIsRefusedAndNotCachedTwice) {
  FakeAllocatorTy A;
  MemoryManagerTy MM(A, 8192);
  void *Ptr = allocateOk(MM, 32);
  EXPECT_TRUE(freeOk(MM, Ptr));
  EXPECT_FALSE(freeOk(MM, Ptr));
  EXPECT_EQ(MM.cachedBlocks(), 1u);
  // Were it cached twice, two live allocations would share it.
  void *P1 = allocateOk(MM, 32);
  void *P2 = allocateOk(MM, 32);
  EXPECT_NE(P1, P2);
  EXPECT_TRUE(freeOk(MM, P1));
  EXPECT_TRUE(freeOk(MM, P2));
}

TEST(MemoryManagerTest, ThresholdZeroDisablesTheCache) {
  FakeAllocatorTy A;
  MemoryManagerTy MM(A, 0);
  for (size_t Size : {0, 1, 16, 8192})
    EXPECT_FALSE(MM.handles(Size)) << Size;
  Expected<void *> Ptr = MM.allocate(1);
  ASSERT_FALSE(bool(Ptr));
  EXPECT_EQ(takeErrorCode(Ptr.takeError()), ErrorCode::InvalidArgument);
  EXPECT_EQ(A.Allocations, 0u);
}

TEST(MemoryManagerTest, HandlesUpToTheThreshold) {
  FakeAllocatorTy A;
  MemoryManagerTy MM(A, 8192);
  EXPECT_FALSE(MM.handles(0));
  EXPECT_TRUE(MM.handles(1));
  EXPECT_TRUE(MM.handles(8192));
  EXPECT_FALSE(MM.handles(8193));
  Expected<void *> Ptr = MM.allocate(8193);
  ASSERT_FALSE(bool(Ptr));
  std::string Msg = takeErrorMessage(Ptr.takeError());
  EXPECT_NE(Msg.find("8193"), std::string::npos) << Msg;
  Expected<void *> Zero = MM.allocate(0);
  ASSERT_FALSE(bool(Zero));
  EXPECT_EQ(takeErrorCode(Zero.takeError()), ErrorCode::InvalidArgument);
  EXPECT_EQ(A.Allocations, 0u);
}

TEST(MemoryManagerTest, OddThresholdStillRoundsToBuckets) {
  FakeAllocatorTy A;
  MemoryManagerTy MM(A, 100);
  EXPECT_TRUE(MM.handles(100));
  EXPECT_FALSE(MM.handles(101));
  void *Ptr = allocateOk(MM, 100);
  EXPECT_EQ(A.LastSize, 128u);
  EXPECT_TRUE(freeOk(MM, Ptr));
}

TEST(MemoryManagerTest, ThresholdIsCappedAtTheLargestBucket) {
  FakeAllocatorTy A;
  MemoryManagerTy MM(A, 1 << 20);
  size_t Largest = MemoryManagerTy::MinBucketSize
                   << (MemoryManagerTy::NumBuckets - 1);
  EXPECT_EQ(Largest, 64u * 1024);
  EXPECT_TRUE(MM.handles(Largest));
  EXPECT_FALSE(MM.handles(Largest + 1));
  void *Ptr = allocateOk(MM, Largest);
  EXPECT_EQ(A.LastSize, Largest);
  EXPECT_TRUE(freeOk(MM, Ptr));
}

TEST(MemoryManagerTest, ReleaseAllFreesEveryCachedBlockExactlyOnce) {
  FakeAllocatorTy A;
  MemoryManagerTy MM(A, 8192);
  std::vector<void *> Cached, Held;
  for (int I = 0; I < 50; ++I) {
    void *Ptr =
        allocateOk(MM, std::min<size_t>(size_t(1) << (I % 13 + 1), 8192));
    (I % 5 < 3 ? Cached : Held).push_back(Ptr);
  }
  for (void *Ptr : Cached)
    EXPECT_TRUE(freeOk(MM, Ptr));
  EXPECT_EQ(MM.cachedBlocks(), Cached.size());

  ASSERT_FALSE(bool(MM.releaseAll()));
  EXPECT_EQ(A.Frees, Cached.size());
  EXPECT_EQ(A.BadFrees, 0u);
  EXPECT_EQ(MM.cachedBlocks(), 0u);
  for (void *Ptr : Cached)
    EXPECT_EQ(A.sizeOf(Ptr), 0u) << "cached block not freed";
  // Blocks still handed out are not touched.
  for (void *Ptr : Held)
    EXPECT_NE(A.sizeOf(Ptr), 0u) << "live block freed";

  // Nothing left to release.
  ASSERT_FALSE(bool(MM.releaseAll()));
  EXPECT_EQ(A.Frees, Cached.size());

  // The held blocks are still the cache's: they come back and go out.
  for (void *Ptr : Held)
    EXPECT_TRUE(freeOk(MM, Ptr));
  ASSERT_FALSE(bool(MM.releaseAll()));
  EXPECT_EQ(A.Frees, Cached.size() + Held.size());
  EXPECT_EQ(A.BadFrees, 0u);
  EXPECT_EQ(A.liveBlocks(), 0u);
}

TEST(MemoryManagerTest, UsableAfterReleaseAll) {
  FakeAllocatorTy A;
  MemoryManagerTy MM(A, 8192);
  EXPECT_TRUE(freeOk(MM, allocateOk(MM, 256)));
  ASSERT_FALSE(bool(MM.releaseAll()));
  void *Ptr = allocateOk(MM, 256);
  EXPECT_EQ(A.Allocations, 2u);
  EXPECT_NE(A.sizeOf(Ptr), 0u);
  EXPECT_TRUE(freeOk(MM, Ptr));
}

TEST(MemoryManagerTest, DestructorReleasesTheCache) {
  FakeAllocatorTy A;
  {
    MemoryManagerTy MM(A, 8192);
    std::vector<void *> Ptrs;
    for (size_t Size : {8, 64, 64, 1000, 8192})
      Ptrs.push_back(allocateOk(MM, Size));
    for (void *Ptr : Ptrs)
      EXPECT_TRUE(freeOk(MM, Ptr));
  }
  EXPECT_EQ(A.Frees, 5u);
  EXPECT_EQ(A.BadFrees, 0u);
  EXPECT_EQ(A.liveBlocks(), 0u);
}

TEST(MemoryManagerTest, AllocatorFailurePropagates) {
  FakeAllocatorTy A;
  MemoryManagerTy MM(A, 8192);
  void *Cached = allocateOk(MM, 64);
  EXPECT_TRUE(freeOk(MM, Cached));

  A.FailAllocations = true;
  Expected<void *> Ptr = MM.allocate(128);
  ASSERT_FALSE(bool(Ptr));
  Error Err = Ptr.takeError();
  llvm::handleAllErrors(std::move(Err), [](const OffloadErrorTy &E) {
    EXPECT_EQ(E.getCode(), ErrorCode::OutOfResources);
    EXPECT_NE(E.getMessage().find("fake device out of memory for 128 bytes"),
              std::string::npos)
        << E.getMessage();
  });
  // A cached block still serves its bucket without the allocator.
  size_t Before = A.Allocations;
  EXPECT_EQ(allocateOk(MM, 50), Cached);
  EXPECT_EQ(A.Allocations, Before);

  // Recovery: the failed request left no trace.
  A.FailAllocations = false;
  void *Ok = allocateOk(MM, 128);
  EXPECT_NE(A.sizeOf(Ok), 0u);
  EXPECT_TRUE(freeOk(MM, Ok));
  EXPECT_TRUE(freeOk(MM, Cached));
  EXPECT_EQ(MM.cachedBlocks(), 2u);
}

TEST(MemoryManagerTest, ReleaseAllReportsFreeFailures) {
  FakeAllocatorTy A;
  MemoryManagerTy MM(A, 8192);
  std::vector<void *> Ptrs;
  for (int I = 0; I < 3; ++I)
    Ptrs.push_back(allocateOk(MM, 16 << I));
  for (void *Ptr : Ptrs)
    EXPECT_TRUE(freeOk(MM, Ptr));
  A.FailFrees = true;
  Error Err = MM.releaseAll();
  ASSERT_TRUE(bool(Err));
  std::string Msg = takeErrorMessage(std::move(Err));
  EXPECT_NE(Msg.find("fake free of"), std::string::npos) << Msg;
  // Every block was attempted once, and none is handed out again.
  EXPECT_EQ(A.Frees, 3u);
  EXPECT_EQ(MM.cachedBlocks(), 0u);
  A.FailFrees = false;
}

/// One live block of the model.
struct ModelBlockTy {
  size_t Size;         ///< Requested.
  size_t Block;        ///< What the allocator gave.
  unsigned char Stamp; ///< Byte the block was filled with.
};
/// Live blocks of the model by start address.
using ModelTy = std::map<uintptr_t, ModelBlockTy>;

/// Whether [Start, Start + Size) overlaps a block of \p Model.
bool overlaps(const ModelTy &Model, uintptr_t Start, size_t Size) {
  auto It = Model.upper_bound(Start);
  if (It != Model.end() && It->first < Start + Size)
    return true;
  if (It == Model.begin())
    return false;
  --It;
  return It->first + It->second.Block > Start;
}

TEST(MemoryManagerTest, RandomisedAgainstModel) {
  FakeAllocatorTy A;
  MemoryManagerTy MM(A, 8192);
  std::mt19937_64 Rng(20240611);
  ModelTy Model;
  std::vector<uintptr_t> LiveList; // For picking a random live block.
  size_t ModelCached = 0;
  size_t ModelAllocations = 0;

  auto RandomSize = [&] {
    // Mostly small, the way map clauses of scalars and small arrays are.
    switch (Rng() % 4) {
    case 0:
      return size_t(1 + Rng() % 16);
    case 1:
      return size_t(1 + Rng() % 256);
    case 2:
      return size_t(1 + Rng() % 2048);
    default:
      return size_t(1 + Rng() % 8192);
    }
  };

  for (int Op = 0; Op < 20000; ++Op) {
    unsigned Choice = Rng() % 100;
    if (Choice < 50 || LiveList.empty()) {
      size_t Size = RandomSize();
      size_t CachedBefore = MM.cachedBlocks();
      size_t AllocsBefore = A.Allocations;
      void *Ptr = allocateOk(MM, Size);
      ASSERT_NE(Ptr, nullptr);
      uintptr_t P = reinterpret_cast<uintptr_t>(Ptr);
      size_t Block = A.sizeOf(Ptr);
      ASSERT_GE(Block, Size) << "block too small at op " << Op;
      ASSERT_FALSE(overlaps(Model, P, Block))
          << "block aliases a live block at op " << Op;
      if (A.Allocations == AllocsBefore) {
        // Served from the cache.
        ASSERT_EQ(MM.cachedBlocks(), CachedBefore - 1);
        --ModelCached;
      } else {
        ++ModelAllocations;
      }
      // The block is ours: write it all (a sanitizer checks the bounds)
      // and stamp it so that a later check sees no one else wrote it.
      unsigned char Stamp = static_cast<unsigned char>(Rng());
      std::memset(Ptr, Stamp, Size);
      Model[P] = {Size, Block, Stamp};
      LiveList.push_back(P);
    } else if (Choice < 95) {
      size_t Index = Rng() % LiveList.size();
      uintptr_t P = LiveList[Index];
      LiveList[Index] = LiveList.back();
      LiveList.pop_back();
      ModelBlockTy B = Model[P];
      // The contents survived: nobody else was handed this block.
      const unsigned char *Bytes = reinterpret_cast<unsigned char *>(P);
      for (size_t I = 0; I < B.Size; ++I)
        ASSERT_EQ(Bytes[I], B.Stamp) << "block overwritten at op " << Op;
      Model.erase(P);
      ASSERT_TRUE(freeOk(MM, reinterpret_cast<void *>(P)));
      ++ModelCached;
    } else if (Choice < 99) {
      // Foreign pointer: an address inside a live block, or a stack one.
      int Local;
      void *Foreign = &Local;
      if (!LiveList.empty())
        Foreign =
            reinterpret_cast<void *>(LiveList[Rng() % LiveList.size()] + 1);
      ASSERT_FALSE(freeOk(MM, Foreign));
    } else {
      size_t FreesBefore = A.Frees;
      ASSERT_FALSE(bool(MM.releaseAll()));
      ASSERT_EQ(A.Frees - FreesBefore, ModelCached);
      ModelCached = 0;
    }
    ASSERT_EQ(MM.cachedBlocks(), ModelCached) << "op " << Op;
    // Every allocator block is either live in the model or cached.
    ASSERT_EQ(A.liveBlocks(), Model.size() + ModelCached) << "op " << Op;
  }
  EXPECT_EQ(A.Allocations, ModelAllocations);
  EXPECT_EQ(A.BadFrees, 0u);

  for (uintptr_t P : LiveList)
    EXPECT_TRUE(freeOk(MM, reinterpret_cast<void *>(P)));
  ASSERT_FALSE(bool(MM.releaseAll()));
  EXPECT_EQ(A.liveBlocks(), 0u);
  EXPECT_EQ(A.Frees, A.Allocations);
  EXPECT_EQ(A.BadFrees, 0u);
}

TEST(MemoryManagerTest, ConcurrentAllocateAndFree) {
  // Each thread stamps its blocks with its id and checks the stamp before
  // freeing: a block handed to two threads at once shows up as a foreign
  // stamp.
  constexpr int NumThreads = 4;
  constexpr int Iterations = 5000;
  FakeAllocatorTy A;
  MemoryManagerTy MM(A, 4096);
  std::atomic<int> Clobbered{0};
  std::atomic<int> Failures{0};
  auto Body = [&](int T) {
    std::mt19937 Rng(T);
    std::vector<std::pair<void *, size_t>> Mine;
    for (int I = 0; I < Iterations; ++I) {
      if (Mine.size() < 8 && (Mine.empty() || Rng() % 2)) {
        size_t Size = 1 + Rng() % 4096;
        Expected<void *> Ptr = MM.allocate(Size);
        if (!Ptr) {
          llvm::consumeError(Ptr.takeError());
          ++Failures;
          continue;
        }
        std::memset(*Ptr, T + 1, Size);
        Mine.push_back({*Ptr, Size});
      } else {
        size_t Index = Rng() % Mine.size();
        auto [Ptr, Size] = Mine[Index];
        Mine.erase(Mine.begin() + Index);
        const unsigned char *Bytes = static_cast<unsigned char *>(Ptr);
        for (size_t B = 0; B < Size; ++B)
          if (Bytes[B] != T + 1) {
            ++Clobbered;
            break;
          }
        Expected<bool> Owned = MM.free(Ptr);
        if (!Owned || !*Owned) {
          if (!Owned)
            llvm::consumeError(Owned.takeError());
          ++Failures;
        }
      }
    }
    for (auto [Ptr, Size] : Mine) {
      Expected<bool> Owned = MM.free(Ptr);
      if (!Owned || !*Owned) {
        if (!Owned)
          llvm::consumeError(Owned.takeError());
        ++Failures;
      }
    }
  };
  std::vector<std::thread> Threads;
  for (int T = 0; T < NumThreads; ++T)
    Threads.emplace_back(Body, T);
  for (auto &Th : Threads)
    Th.join();
  EXPECT_EQ(Clobbered, 0);
  EXPECT_EQ(Failures, 0);
  EXPECT_EQ(MM.cachedBlocks(), A.liveBlocks());
  ASSERT_FALSE(bool(MM.releaseAll()));
  EXPECT_EQ(A.liveBlocks(), 0u);
  EXPECT_EQ(A.BadFrees, 0u);
}

} // namespace

// The bookkeeping the file engine's buffer checks rest on: a block handed
// out reports the size asked for (not its bucket's), and a freed block that
// the cache keeps reports none and is cached, until it is handed out again.
TEST(MemoryManagerTest, RequestedSizeAndCachedStateAgainstModel) {
  FakeAllocatorTy A;
  MemoryManagerTy MM(A, 8192);
  std::mt19937_64 Rng(20250113);
  std::map<void *, size_t> Live; // Model: handed out, with the size asked.
  std::set<void *> Freed;        // Model: in the cache.
  std::vector<void *> LiveList;

  auto Check = [&](void *Ptr, int Op) {
    auto Requested = MM.requestedSize(Ptr);
    auto It = Live.find(Ptr);
    if (It != Live.end()) {
      ASSERT_TRUE(Requested.has_value()) << "op " << Op;
      ASSERT_EQ(*Requested, It->second) << "op " << Op;
      ASSERT_FALSE(MM.isCached(Ptr)) << "op " << Op;
    } else {
      ASSERT_FALSE(Requested.has_value()) << "op " << Op;
      ASSERT_EQ(MM.isCached(Ptr), Freed.count(Ptr) == 1) << "op " << Op;
    }
  };

  for (int Op = 0; Op < 20000; ++Op) {
    void *Touched;
    if (Rng() % 100 < 55 || LiveList.empty()) {
      size_t Size = 1 + Rng() % (Rng() % 2 ? 64 : 8192);
      Touched = allocateOk(MM, Size);
      ASSERT_NE(Touched, nullptr);
      ASSERT_EQ(Live.count(Touched), 0u) << "handed out twice at op " << Op;
      Freed.erase(Touched);
      Live[Touched] = Size;
      LiveList.push_back(Touched);
    } else {
      size_t Index = Rng() % LiveList.size();
      Touched = LiveList[Index];
      LiveList[Index] = LiveList.back();
      LiveList.pop_back();
      Live.erase(Touched);
      Freed.insert(Touched);
      ASSERT_TRUE(freeOk(MM, Touched));
    }
    Check(Touched, Op);
    // Interior pointers are not blocks.
    ASSERT_FALSE(MM.requestedSize(static_cast<char *>(Touched) + 1));
    if (Op % 500 == 0) {
      for (auto &[Ptr, Size] : Live)
        Check(Ptr, Op);
      for (void *Ptr : Freed)
        Check(Ptr, Op);
    }
  }
  for (void *Ptr : LiveList)
    EXPECT_TRUE(freeOk(MM, Ptr));
  ASSERT_FALSE(bool(MM.releaseAll()));
  // Released blocks are nobody's.
  for (void *Ptr : Freed) {
    EXPECT_FALSE(MM.isCached(Ptr));
    EXPECT_FALSE(MM.requestedSize(Ptr).has_value());
  }
}

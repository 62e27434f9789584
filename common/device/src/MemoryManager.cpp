// SPDX-License-Identifier: Apache-2.0
#include "offloadio/MemoryManager.h"

#include "llvm/Support/MathExtras.h"

using namespace offloadio;

BlockAllocatorTy::~BlockAllocatorTy() = default;

MemoryManagerTy::MemoryManagerTy(BlockAllocatorTy &Allocator, size_t Threshold)
    : Allocator(Allocator),
      Threshold(std::min(Threshold, bucketSize(NumBuckets - 1))) {}

MemoryManagerTy::~MemoryManagerTy() { llvm::consumeError(releaseAll()); }

unsigned MemoryManagerTy::bucketFor(size_t Size) {
  size_t Rounded = std::max<size_t>(llvm::PowerOf2Ceil(Size), MinBucketSize);
  return llvm::Log2_64(Rounded / MinBucketSize);
}

Expected<void *> MemoryManagerTy::allocate(size_t Size) {
  if (!handles(Size))
    return makeError(ErrorCode::InvalidArgument,
                     "memory manager cannot serve {0} bytes (threshold {1})",
                     Size, Threshold);
  unsigned Bucket = bucketFor(Size);
  {
    std::lock_guard<std::mutex> Guard(Lock);
    auto &List = FreeLists[Bucket];
    if (!List.empty()) {
      void *Ptr = List.back();
      List.pop_back();
      Cached.erase(Ptr);
      Owned[Ptr] = {Bucket, Size};
      return Ptr;
    }
  }
  // Allocate outside the lock: vendor allocators can be slow.
  auto Ptr = Allocator.allocateBlock(bucketSize(Bucket));
  if (!Ptr)
    return Ptr.takeError();
  std::lock_guard<std::mutex> Guard(Lock);
  Owned[*Ptr] = {Bucket, Size};
  return *Ptr;
}

Expected<bool> MemoryManagerTy::free(void *Ptr) {
  std::lock_guard<std::mutex> Guard(Lock);
  auto It = Owned.find(Ptr);
  if (It == Owned.end())
    return false;
  FreeLists[It->second.Bucket].push_back(Ptr);
  Cached.insert(Ptr);
  Owned.erase(It);
  return true;
}

Error MemoryManagerTy::releaseAll() {
  TeardownTy Teardown;
  releaseAll(Teardown);
  return Teardown.takeForEnclosing();
}

void MemoryManagerTy::releaseAll(TeardownTy &Teardown) {
  std::vector<void *> ToFree;
  {
    std::lock_guard<std::mutex> Guard(Lock);
    for (auto &List : FreeLists) {
      ToFree.insert(ToFree.end(), List.begin(), List.end());
      List.clear();
    }
    Cached.clear();
  }
  // A driver that has shut down took the blocks left with it.
  for (void *Ptr : ToFree)
    Teardown.run([&] { return Allocator.freeBlock(Ptr); });
}

size_t MemoryManagerTy::cachedBlocks() const {
  std::lock_guard<std::mutex> Guard(Lock);
  size_t N = 0;
  for (auto &List : FreeLists)
    N += List.size();
  return N;
}

bool MemoryManagerTy::isCached(const void *Ptr) const {
  std::lock_guard<std::mutex> Guard(Lock);
  return Cached.count(Ptr);
}

std::optional<size_t> MemoryManagerTy::requestedSize(const void *Ptr) const {
  std::lock_guard<std::mutex> Guard(Lock);
  auto It = Owned.find(Ptr);
  if (It == Owned.end())
    return std::nullopt;
  return It->second.Requested;
}

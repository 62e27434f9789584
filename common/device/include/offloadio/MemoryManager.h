// SPDX-License-Identifier: Apache-2.0
//
// A per-device cache of small device allocations. Small omp_target_alloc and
// map-clause allocations are frequent; vendor allocators are slow and often
// synchronise the device, so freed small blocks are kept for reuse.
#ifndef OFFLOADIO_MEMORYMANAGER_H
#define OFFLOADIO_MEMORYMANAGER_H

#include "offloadio/Error.h"
#include "offloadio/Teardown.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <array>
#include <cstddef>
#include <mutex>
#include <optional>
#include <vector>

namespace offloadio {

/// The backend allocator the manager draws from (device memory only).
class BlockAllocatorTy {
public:
  virtual ~BlockAllocatorTy();
  /// Allocate \p Size bytes of device memory.
  virtual Expected<void *> allocateBlock(size_t Size) = 0;
  /// Free a block returned by allocateBlock.
  virtual Error freeBlock(void *Ptr) = 0;
};

/// Size-bucketed cache of device blocks up to a threshold.
class MemoryManagerTy {
public:
  /// Number of buckets: 16 B, 32 B, ... up to 64 KiB at most.
  static constexpr unsigned NumBuckets = 13;
  /// Smallest bucket size.
  static constexpr size_t MinBucketSize = 16;

  /// \p Threshold is the largest size served from the cache (0 disables it).
  MemoryManagerTy(BlockAllocatorTy &Allocator, size_t Threshold);
  ~MemoryManagerTy();

  /// Whether a request of \p Size bytes is served by the cache.
  bool handles(size_t Size) const { return Size > 0 && Size <= Threshold; }

  /// Allocate \p Size bytes; \p Size must satisfy handles(). The block may
  /// be larger (its bucket's size); requestedSize() remembers \p Size.
  Expected<void *> allocate(size_t Size);

  /// Give back \p Ptr. Returns false if the cache does not own it, in which
  /// case the caller frees it directly.
  Expected<bool> free(void *Ptr);

  /// Free every cached block back to the allocator; a teardown
  /// (TeardownTy): the driver's first answer that it has shut down drops
  /// the blocks left from the books without a call, and is returned.
  Error releaseAll();
  /// releaseAll() as a step of \p Teardown: once the driver has shut down
  /// (before or during it), no call reaches it.
  void releaseAll(TeardownTy &Teardown);

  /// Number of blocks currently cached (not handed out).
  size_t cachedBlocks() const;
  /// Whether \p Ptr is a block the cache holds for reuse, that is, one
  /// already freed: freeing it again must not reach the allocator.
  bool isCached(const void *Ptr) const;
  /// The size asked of allocate() for the block starting at \p Ptr, while
  /// the block is handed out; nothing for blocks the cache does not own and
  /// for blocks it holds freed. Buffer checks use it, not the block's size.
  std::optional<size_t> requestedSize(const void *Ptr) const;

private:
  static unsigned bucketFor(size_t Size);
  static size_t bucketSize(unsigned Bucket) { return MinBucketSize << Bucket; }

  BlockAllocatorTy &Allocator;
  size_t Threshold;
  mutable std::mutex Lock;
  std::array<std::vector<void *>, NumBuckets> FreeLists;
  /// A block handed out.
  struct OwnedBlockTy {
    unsigned Bucket;  ///< Its bucket.
    size_t Requested; ///< The size asked for.
  };
  /// Every live block the cache handed out.
  llvm::DenseMap<const void *, OwnedBlockTy> Owned;
  /// Every block in FreeLists, for isCached.
  llvm::DenseSet<const void *> Cached;
};

} // namespace offloadio

#endif // OFFLOADIO_MEMORYMANAGER_H

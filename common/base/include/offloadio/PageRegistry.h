// SPDX-License-Identifier: Apache-2.0
//
// Page-granular locking of host memory, shared by the byte-exact regions the
// pinned map keeps.
//
// What pins memory (a GPU driver's registration, mlock) works on whole
// pages, while the pinned map keeps exact byte ranges: two regions may share
// a page, and a region may start in a page that another region already
// pinned. Unpinning one of them must not unpin the page under the other, and
// a driver may refuse to pin a page twice. So the registry locks each page
// once, as part of a "chunk" (one PageLockOpsTy::lockPages call over pages
// nobody locked before), and counts how many pins use each chunk; a chunk is
// unlocked when its last user goes. One pin may span several chunks, which
// is why contiguousBytes() exists (a CUDA copy may not cross from one
// registration into another).
#ifndef OFFLOADIO_PAGEREGISTRY_H
#define OFFLOADIO_PAGEREGISTRY_H

#include "offloadio/Error.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <shared_mutex>

namespace offloadio {

/// Backend seam of PageRegistryTy: locks and unlocks page-aligned ranges.
/// Called with the registry's exclusive lock held; must not call back into
/// the registry.
class PageLockOpsTy {
public:
  virtual ~PageLockOpsTy();
  /// Lock the pages of [Ptr, Ptr+Size) (page aligned). Returns true when the
  /// backend found them locked already by someone else: they are used as
  /// they are and never unlocked by the registry.
  virtual Expected<bool> lockPages(void *Ptr, size_t Size) = 0;
  /// Unlock pages that lockPages locked, exactly that call's range.
  virtual Error unlockPages(void *Ptr, size_t Size) = 0;
};

/// Reference-counted page locks of byte-exact ranges. Thread-safe.
class PageRegistryTy {
public:
  /// \p PageSize is the host page size (a power of two); \p Ops must outlive
  /// the registry.
  PageRegistryTy(PageLockOpsTy &Ops, size_t PageSize)
      : Ops(Ops), PageSize(PageSize) {}
  PageRegistryTy(const PageRegistryTy &) = delete;
  PageRegistryTy &operator=(const PageRegistryTy &) = delete;

  /// Lock the pages of [HstPtr, HstPtr+Size) not locked yet and count one
  /// more user of every chunk they belong to. The same range may be pinned
  /// several times; each pin needs its own unpin. On failure nothing
  /// changes.
  Error pin(void *HstPtr, size_t Size);

  /// Undo one pin() of exactly [HstPtr, HstPtr+Size); chunks left without
  /// users are unlocked. Unpinning a range that is not pinned does nothing,
  /// so a caller may repeat an unpin that failed.
  Error unpin(void *HstPtr, size_t Size);

  /// How many of the \p Size bytes from \p Ptr lie in one chunk: up to the
  /// end of the chunk containing \p Ptr, or, outside every chunk, up to the
  /// next one.
  size_t contiguousBytes(const void *Ptr, size_t Size) const;

  /// Number of chunks (for tests and diagnostics).
  size_t numChunks() const;

  /// The page size given at construction.
  size_t getPageSize() const { return PageSize; }

private:
  /// One lockPages call's pages, and the pins that use them.
  struct ChunkTy {
    uintptr_t End;
    uint64_t Users;
    /// The backend said the pages were locked already: never unlocked here.
    bool Foreign;
  };
  using ChunkMapTy = std::map<uintptr_t, ChunkTy>;

  /// The first chunk that ends after \p Addr.
  ChunkMapTy::iterator firstEndingAfter(uintptr_t Addr);
  /// Lock the gaps of [Begin, End) and count one user on every chunk of
  /// it. On failure nothing changes.
  Error acquire(uintptr_t Begin, uintptr_t End);
  /// Drop one user of every chunk of [Begin, End), unlocking those left
  /// without users. The counts stay consistent even if the backend fails.
  Error release(uintptr_t Begin, uintptr_t End);

  PageLockOpsTy &Ops;
  const uintptr_t PageSize;
  /// Shared for contiguousBytes (the copy path), exclusive for changes.
  mutable std::shared_mutex Lock;
  /// Chunks keyed by their first byte; page aligned, pairwise disjoint.
  ChunkMapTy Chunks;
  /// Whether Chunks is non-empty: copies skip the lookup when nothing is
  /// locked.
  std::atomic<bool> HasChunks{false};
  /// Pinned ranges not yet unpinned, with their pin counts.
  std::map<std::pair<uintptr_t, size_t>, unsigned> Pins;
};

} // namespace offloadio

#endif // OFFLOADIO_PAGEREGISTRY_H

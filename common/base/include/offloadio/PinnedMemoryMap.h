// SPDX-License-Identifier: Apache-2.0
//
// The plugin-wide map of locked (pinned) host regions. Every plugin keeps the
// same rules: exact byte ranges, no page rounding, a reference count per
// region, a lock that falls wholly inside a region shares it, and any other
// intersection is refused rather than silently merged or extended. An unlock
// names the pointer a lock was taken at, so that a stray pointer into a
// region cannot release someone else's lock.
#ifndef OFFLOADIO_PINNEDMEMORYMAP_H
#define OFFLOADIO_PINNEDMEMORYMAP_H

#include "offloadio/Error.h"

#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <shared_mutex>
#include <vector>

namespace offloadio {

/// Backend seam: pins and unpins host memory for the plugin's devices.
///
/// PinnedMemoryMapTy calls these while holding its exclusive lock, so calls
/// from one map are never concurrent, and an implementation must not call
/// back into the map that invokes it.
class PinningOpsTy {
public:
  virtual ~PinningOpsTy();

  /// Pin [HstPtr, HstPtr+Size) and return its device-accessible address
  /// (may differ from HstPtr).
  virtual Expected<void *> pinHostMemory(void *HstPtr, size_t Size) = 0;

  /// Undo pinHostMemory for exactly that region.
  virtual Error unpinHostMemory(void *HstPtr, void *DevAccessiblePtr,
                                size_t Size) = 0;
};

/// A snapshot of one region.
struct PinnedRegionInfoTy {
  /// First host byte of the region.
  void *HstPtr = nullptr;
  /// Device-accessible address of the first byte.
  void *DevAccessiblePtr = nullptr;
  /// Length of the region in bytes.
  size_t Size = 0;
  /// Outstanding locks; an external region counts its registration as one.
  uint64_t References = 0;
  /// True for memory registered with registerExternal, which the map never
  /// pins or unpins itself.
  bool External = false;
};

/// One contiguous piece of a host range, as a transfer sees it.
struct PinnedSegmentTy {
  /// First host byte of the segment.
  const char *HstPtr = nullptr;
  /// Length of the segment in bytes.
  size_t Size = 0;
  /// Device-accessible address of HstPtr, or nullptr if not locked.
  void *DevAccessiblePtr = nullptr;
};

/// Sorted, non-overlapping map of locked host ranges with reference counts.
///
/// All members are thread-safe. Queries take a shared lock and cost one
/// O(log n) search; lock and unlock take the exclusive lock, and keep it
/// across the PinningOpsTy call so that no other thread can observe, share
/// or pin over a region whose pinning has not finished, or re-pin a range
/// whose unpinning has not finished.
class PinnedMemoryMapTy {
public:
  /// Create an empty map that pins and unpins through \p Ops, which must
  /// outlive the map.
  explicit PinnedMemoryMapTy(PinningOpsTy &Ops);

  /// Release what is left as releaseAll() does, consuming any error. \p Ops
  /// must still work here; an owner whose backend (or whose overriding
  /// PinningOpsTy methods) goes away first calls releaseAll() before that.
  ~PinnedMemoryMapTy();

  PinnedMemoryMapTy(const PinnedMemoryMapTy &) = delete;
  PinnedMemoryMapTy &operator=(const PinnedMemoryMapTy &) = delete;

  /// Lock [HstPtr, HstPtr+Size) and return the device-accessible address of
  /// HstPtr. A range wholly inside an existing region (an identical one
  /// included) takes one more reference on it without pinning. A range that
  /// intersects a region any other way is refused with ErrorCode::Overlap.
  /// Otherwise the range is pinned through the backend and inserted with one
  /// reference; a pinning failure leaves the map unchanged. When the range
  /// shared an existing region and \p Shared is not null, *Shared describes
  /// that region as it was before this lock (else it is left alone).
  Expected<void *> lock(void *HstPtr, size_t Size,
                        PinnedRegionInfoTy *Shared = nullptr);

  /// Release one lock taken at \p HstPtr: a lock of the region that starts
  /// there, or a lock of a sub-buffer that starts there inside a region. A
  /// pointer at which no outstanding lock was taken (any other byte of a
  /// region, or a region start whose own locks are all released while
  /// sub-buffer locks remain) is refused with ErrorCode::NotFound and
  /// changes nothing, as is a pointer outside every region. The last
  /// reference unpins and removes the region; if unpinning fails the region
  /// and the lock are kept. An external region's registration reference
  /// cannot be dropped here.
  Error unlock(void *HstPtr);

  /// Insert [HstPtr, HstPtr+Size), which the runtime already allocated
  /// pinned, as an external region with one reference; the map will never
  /// pin or unpin it. Any intersection with an existing region is
  /// ErrorCode::Overlap.
  Error registerExternal(void *HstPtr, void *DevAccessiblePtr, size_t Size);

  /// Remove the external region that starts exactly at \p HstPtr. Fails
  /// with ErrorCode::Busy while user locks inside it remain.
  Error unregisterExternal(void *HstPtr);

  /// Teardown: unpin every locked region (external ones were never pinned
  /// here), then forget every region, external ones included. Returns every
  /// unpinning failure, joined; the map is empty afterwards regardless.
  Error releaseAll();

  /// The region containing \p Ptr, if any.
  std::optional<PinnedRegionInfoTy> lookup(const void *Ptr) const;

  /// Split [HstPtr, HstPtr+Size) into at most \p MaxSegs consecutive
  /// segments, each wholly inside one locked region (DevAccessiblePtr is the
  /// region's plus the offset) or wholly unlocked, and return how many were
  /// written to \p Segs. When more would be needed, the last one written
  /// ends where it naturally ends and the caller asks again from there.
  /// Returns 0 for Size 0, MaxSegs 0, or a range whose end is not
  /// representable.
  size_t segments(const void *HstPtr, size_t Size, PinnedSegmentTy *Segs,
                  size_t MaxSegs) const;

  /// Number of regions.
  size_t size() const;

  /// Every region, sorted by start.
  std::vector<PinnedRegionInfoTy> snapshot() const;

  /// Print every region, one a line, for debugging.
  void dump(llvm::raw_ostream &OS) const;

private:
  /// What the map keeps for a region; its start is the key.
  struct RegionTy {
    /// One past the last byte.
    uintptr_t End;
    /// Device-accessible address of the first byte.
    void *DevAccessiblePtr;
    /// Outstanding locks, the registration of an external region included.
    uint64_t References;
    /// Of References, the locks taken at a pointer past the first byte
    /// (InteriorLocks holds them by pointer); the rest, less an external
    /// region's registration, were taken at the first byte.
    uint64_t SubBufferLocks;
    /// Registered by registerExternal, so never pinned or unpinned here.
    bool External;
  };
  /// Regions keyed by their first byte.
  using RegionMapTy = std::map<uintptr_t, RegionTy>;

  /// Of \p Region's locks, those taken at \p Start, its first byte.
  static uint64_t locksAtStart(const RegionTy &Region) {
    return Region.References - Region.SubBufferLocks -
           (Region.External ? 1 : 0);
  }

  /// Convert an entry to its public snapshot.
  static PinnedRegionInfoTy toInfo(const RegionMapTy::value_type &Entry);

  /// The backend that pins and unpins.
  PinningOpsTy &Ops;
  /// Guards Regions; shared for queries, exclusive for changes.
  mutable std::shared_mutex Mutex;
  /// The regions, sorted by start and pairwise disjoint.
  RegionMapTy Regions;
  /// Outstanding sub-buffer locks (taken inside a region, past its first
  /// byte) by the pointer they were taken at, for every region at once:
  /// regions are disjoint, so a pointer belongs to one region at most.
  std::map<uintptr_t, uint64_t> InteriorLocks;
};

} // namespace offloadio

#endif // OFFLOADIO_PINNEDMEMORYMAP_H

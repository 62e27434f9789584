// SPDX-License-Identifier: Apache-2.0
//
// Page-granular registration of host memory with the CUDA driver, shared by
// the byte-exact regions the framework pins.
//
// The driver registers whole pages and refuses to register a page twice
// (CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED), while the plugin's pinned map
// keeps exact byte ranges: two regions may share a page, and a region may
// start in a page that another region already registered. So the registry
// registers each page once, as part of a "chunk" (one cuMemHostRegister
// call over pages nobody registered before), and counts how many pinned
// regions use each chunk. A region can therefore consist of several chunks,
// and the driver refuses a cuMemcpyAsync whose host side crosses from one
// registration into another (CUDA_ERROR_INVALID_VALUE, seen on an H200):
// streams ask contiguousBytes() and split such copies.
#ifndef OFFLOADIO_CUDA_CUDAHOSTREGISTRY_H
#define OFFLOADIO_CUDA_CUDAHOSTREGISTRY_H

#include "CUDAApi.h"

#include <atomic>
#include <map>
#include <shared_mutex>

namespace offloadio {
namespace cuda {

/// The plugin's registrations of host memory. Thread-safe.
class CUDAHostRegistryTy {
public:
  /// \p PageSize is the host page size (a power of two).
  CUDAHostRegistryTy(const CUDAApiTy &Api, size_t PageSize)
      : Api(Api), PageSize(PageSize) {}
  CUDAHostRegistryTy(const CUDAHostRegistryTy &) = delete;
  CUDAHostRegistryTy &operator=(const CUDAHostRegistryTy &) = delete;

  /// Register the pages of [HstPtr, HstPtr+Size) not registered yet, count
  /// one more user of every registration they belong to, and return the
  /// device address of \p HstPtr. A context must be current (registrations
  /// are PORTABLE: valid for every context). The same range may be pinned
  /// several times; each pin needs its own unpin.
  Expected<void *> pin(void *HstPtr, size_t Size);

  /// Undo one pin() of exactly [HstPtr, HstPtr+Size); registrations left
  /// without users are unregistered. Unpinning a range that is not pinned
  /// does nothing, so a caller may repeat an unpin that failed.
  Error unpin(void *HstPtr, size_t Size);

  /// How many of the \p Size bytes from \p Ptr one driver call may treat as
  /// one host range: up to the end of the registration containing \p Ptr,
  /// or, outside our registrations, up to the next one.
  size_t contiguousBytes(const void *Ptr, size_t Size) const;

  /// Number of registrations (for tests and diagnostics).
  size_t numRegistrations() const;

private:
  /// One cuMemHostRegister call's pages, and the pins that use them.
  struct ChunkTy {
    uintptr_t End;
    uint64_t Users;
    /// The driver said the pages were registered already (by the program
    /// itself, say): used as they are, never unregistered by us.
    bool Foreign;
  };
  using ChunkMapTy = std::map<uintptr_t, ChunkTy>;

  /// The first chunk that ends after \p Addr.
  ChunkMapTy::iterator firstEndingAfter(uintptr_t Addr);
  /// Register the gaps of [Begin, End) and count one user on every chunk
  /// of it. On failure nothing changes.
  Error acquire(uintptr_t Begin, uintptr_t End);
  /// Drop one user of every chunk of [Begin, End), unregistering those
  /// left without users. The counts stay consistent even if the driver
  /// fails.
  Error release(uintptr_t Begin, uintptr_t End);

  const CUDAApiTy &Api;
  const uintptr_t PageSize;
  /// Shared for contiguousBytes (the copy path), exclusive for changes.
  mutable std::shared_mutex Lock;
  /// Chunks keyed by their first byte; page aligned, pairwise disjoint.
  ChunkMapTy Chunks;
  /// Whether Chunks is non-empty: copies skip the lookup when nothing is
  /// registered.
  std::atomic<bool> HasChunks{false};
  /// Pinned ranges not yet unpinned, with their pin counts.
  std::map<std::pair<uintptr_t, size_t>, unsigned> Pins;
};

} // namespace cuda
} // namespace offloadio

#endif // OFFLOADIO_CUDA_CUDAHOSTREGISTRY_H

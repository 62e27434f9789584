// SPDX-License-Identifier: Apache-2.0
//
// Pinning for the host plugin. A GPU driver pins the pages of a locked
// range and refuses memory it cannot pin; the host analogue is mlock(2),
// which RLIMIT_MEMLOCK limits as it limits a driver's pinning. So a lock is
// refused where a device's lock would be: memory that is not mapped,
// readable and writable, or pages the process may not lock any more.
#ifndef OFFLOADIO_HOST_HOSTPINNING_H
#define OFFLOADIO_HOST_HOSTPINNING_H

#include "offloadio/Error.h"
#include "offloadio/PageRegistry.h"

namespace offloadio {
namespace host {

/// Fail unless every byte of [HstPtr, HstPtr+Size) is mapped readable and
/// writable in this process (/proc/self/maps); the message names the first
/// part of the range that is not, and why.
Error checkReadWriteMapped(const void *HstPtr, size_t Size);

/// mlock-based pinning of byte-exact ranges. Thread-safe.
class HostPinningTy final : private PageLockOpsTy {
public:
  /// \p PageSize is the host page size (a power of two).
  explicit HostPinningTy(size_t PageSize) : Pages(*this, PageSize) {}

  /// Check the range (checkReadWriteMapped) and lock its pages; the same
  /// range may be pinned several times, each pin needing its own unpin.
  Error pin(void *HstPtr, size_t Size);
  /// Undo one pin of exactly that range; pages still used by other pins
  /// stay locked.
  Error unpin(void *HstPtr, size_t Size) { return Pages.unpin(HstPtr, Size); }

private:
  /// mlock. Pages the program locked itself cannot be told apart, so none
  /// is foreign.
  Expected<bool> lockPages(void *Ptr, size_t Size) override;
  /// munlock.
  Error unlockPages(void *Ptr, size_t Size) override;

  PageRegistryTy Pages;
};

} // namespace host
} // namespace offloadio

#endif // OFFLOADIO_HOST_HOSTPINNING_H

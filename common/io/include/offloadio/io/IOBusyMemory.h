// SPDX-License-Identifier: Apache-2.0
//
// Device memory that transfers in flight read into or write from. A request
// marks its buffer busy from submission until its last byte has landed;
// freeing memory waits until no busy range overlaps it, so that a transfer
// never touches memory after the program freed it (and perhaps allocated
// it again).
#ifndef OFFLOADIO_IO_IOBUSYMEMORY_H
#define OFFLOADIO_IO_IOBUSYMEMORY_H

#include "offloadio/io/IORangeIndex.h"

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace offloadio {

/// Ranges of memory in use by transfers, with a wait for a range to become
/// free. Ranges may overlap (two requests into one buffer); each marking is
/// released once, by its ticket.
class IOBusyMemoryTy {
public:
  /// A marking; 0 is never handed out.
  using TicketTy = uint64_t;

  /// Mark [\p Begin, \p Begin + \p Size) busy; waits while a free of
  /// memory overlapping it runs (beginFree to endFree), so that a transfer
  /// submitted during a free finds the memory freed, not half freed.
  TicketTy acquire(const void *Begin, size_t Size);
  /// Release a marking from acquire; 0 is ignored.
  void release(TicketTy Ticket);
  /// Block until no busy range overlaps [\p Begin, \p Begin + \p Size);
  /// a range running past the end of the address space ends there. Returns
  /// whether it had to wait.
  bool waitUntilIdle(const void *Begin, size_t Size);
  /// A free of [\p Begin, \p Begin + \p Size): waitUntilIdle, then hold
  /// new markings of the range back until endFree with the same arguments.
  /// Returns whether it had to wait.
  bool beginFree(const void *Begin, size_t Size);
  /// The free of beginFree is done.
  void endFree(const void *Begin, size_t Size);
  /// Whether a marking overlaps [\p Begin, \p Begin + \p Size) now.
  bool isBusy(const void *Begin, size_t Size) const;
  /// Number of markings held.
  size_t busyRanges() const;

private:
  struct RangeTy {
    uintptr_t Begin, End;
  };
  /// Whether a marking overlaps [Begin, End); with Lock held.
  bool overlapsLocked(uintptr_t Begin, uintptr_t End) const;
  /// Whether a free in progress overlaps [Begin, End); with Lock held.
  bool freeingLocked(uintptr_t Begin, uintptr_t End) const;

  mutable std::mutex Lock;
  std::condition_variable Released;
  /// Markings by ticket. A batch marks every operation's buffer, so they
  /// may be many, and overlap each other any way.
  IORangeIndexTy Ranges;
  TicketTy NextTicket = 1;
  /// Frees in progress (beginFree to endFree).
  std::vector<RangeTy> Freeing;
};

/// A marking of IOBusyMemoryTy, released when reset or destroyed.
class IOBusyMarkTy {
public:
  IOBusyMarkTy() = default;
  /// Mark [\p Begin, \p Begin + \p Size) busy in \p Owner.
  IOBusyMarkTy(IOBusyMemoryTy &Owner, const void *Begin, size_t Size)
      : Owner(&Owner), Ticket(Owner.acquire(Begin, Size)) {}
  IOBusyMarkTy(IOBusyMarkTy &&Other) noexcept
      : Owner(Other.Owner), Ticket(Other.Ticket) {
    Other.Ticket = 0;
  }
  IOBusyMarkTy &operator=(IOBusyMarkTy &&Other) noexcept {
    if (this != &Other) {
      reset();
      Owner = Other.Owner;
      Ticket = Other.Ticket;
      Other.Ticket = 0;
    }
    return *this;
  }
  IOBusyMarkTy(const IOBusyMarkTy &) = delete;
  IOBusyMarkTy &operator=(const IOBusyMarkTy &) = delete;
  ~IOBusyMarkTy() { reset(); }

  /// Release the marking now, if held.
  void reset() {
    if (Ticket)
      Owner->release(Ticket);
    Ticket = 0;
  }

private:
  IOBusyMemoryTy *Owner = nullptr;
  IOBusyMemoryTy::TicketTy Ticket = 0;
};

} // namespace offloadio

#endif // OFFLOADIO_IO_IOBUSYMEMORY_H

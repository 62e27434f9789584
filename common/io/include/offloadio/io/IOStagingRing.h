// SPDX-License-Identifier: Apache-2.0
//
// A worker's ring of pinned staging buffers, each with the event of the
// last copy out of or into it. Taking the next buffer waits only when the
// ring has wrapped onto a buffer whose copy may still run; nothing else
// waits, so a worker enqueues its next copy while earlier ones are in
// flight.
//
// The ring holds what its transfers use, no more: a buffer is added only
// when the next one is still in flight (up to the ring's depth), and each
// is as large as the transfer asks (its chunk, or the whole request when
// that is smaller), a buffer too small for a later transfer being replaced
// by a larger one. Buffers are kept from one transfer to the next, so
// steady transfers pin nothing. Buffers are leases of the device's pinned
// pool (PinnedPoolTy). While the ring is idle (markIdle) the pinned budget
// may take its buffers back for another holder (PinnedReclaimableTy); when
// the budget cannot give the buffer a transfer asks for, an empty ring
// takes a smaller one (OnRefusalTy::ShrinkThenWait), and the transfer moves
// its chunks through it in pieces; a ring that has buffers makes do with
// them (OnRefusalTy::MakeDo).
//
// @code
//   auto Slot = Ring.next(ChunkSize);          // waits only on wrap
//   size_t N = std::min(Len, (*Slot)->Size);   // may be a piece of Len
//   pread(..., (*Slot)->Buffer, N, ...);
//   Stream.copyAsync(Dev, (*Slot)->Buffer, N, CopyKindTy::HostToDevice);
//   Stream.recordEvent(*(*Slot)->Event);
//   (*Slot)->InFlight = true;
//   ...
//   Stream.synchronize(); Ring.retireAll();   // once every copy must land
//   Ring.markIdle();                          // between transfers
// @endcode
#ifndef OFFLOADIO_IO_IOSTAGINGRING_H
#define OFFLOADIO_IO_IOSTAGINGRING_H

#include "offloadio/Error.h"
#include "offloadio/PinnedBudget.h"
#include "offloadio/PinnedPool.h"
#include "offloadio/Stream.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace offloadio {

class IODeviceTy;

/// One buffer of the ring.
struct IOStagingSlotTy {
  /// The memory as allocated, and its bytes in the pinned budget.
  PinnedLeaseTy Lease;
  void *Buffer = nullptr; ///< Lease's memory rounded up to BufferAlign.
  size_t Size = 0;        ///< Usable bytes of Buffer, a multiple of BufferAlign.
  EventTy *Event = nullptr;
  /// A copy recorded on Event may still use Buffer.
  bool InFlight = false;
};

/// Pinned buffers of one worker, used round robin.
class IOStagingRingTy final : public PinnedReclaimableTy {
public:
  /// Staging buffers start on a page and hold whole pages: O_DIRECT reads
  /// and writes them.
  static constexpr size_t BufferAlign = 4096;
  /// The smallest buffer an empty ring takes when the budget cannot give
  /// the size asked for (or that size, if smaller).
  static constexpr size_t MinFallbackSize = 64 << 10;
  /// A ring adds buffers beyond its first only while this share of the
  /// budget's cap stays free after them, for other workers' first buffers.
  static constexpr uint64_t GrowthReserve = 4;

  /// At most \p Depth buffers from \p Device, allocated as next() needs
  /// them; registered with the device's pinned budget.
  IOStagingRingTy(IODeviceTy &Device, unsigned Depth);
  /// Frees the buffers; their copies must be complete.
  ~IOStagingRingTy() override;
  IOStagingRingTy(const IOStagingRingTy &) = delete;
  IOStagingRingTy &operator=(const IOStagingRingTy &) = delete;

  /// The next buffer, for a transfer that moves up to \p Want bytes at a
  /// time; waits for its copy only if the ring wrapped onto it while in
  /// flight. A new buffer is added instead while the ring is below its
  /// depth and the next one is in flight; a buffer smaller than \p Want is
  /// replaced by one of \p Want bytes (rounded up to BufferAlign). Where the
  /// budget has no room for those (GrowthReserve), the ring makes do with
  /// the buffers it has (it then waits on wrap more often, and the caller
  /// moves \p Want bytes in pieces of the buffer's Size). An empty ring
  /// takes a smaller buffer, down to MinFallbackSize, and waits while other
  /// workers' busy rings hold the budget (PinnedBudgetTy::waitForRoom); with
  /// nothing to be had it fails with the budget's error, as it does when an
  /// allocation fails.
  Expected<IOStagingSlotTy *> next(size_t Want);
  /// Every copy recorded so far is complete (the caller synchronised the
  /// stream): no buffer is in flight.
  void retireAll();
  /// The owner is done with the ring until its next call: no copy is in
  /// flight. The budget may take the buffers back until then.
  void markIdle();

  /// Free every buffer and give back every event; their copies must be
  /// complete.
  Error clear();

  /// While idle (markIdle), free every buffer; otherwise nothing.
  size_t reclaimIdle() override;
  /// While busy, the bytes of its buffers: the owner goes idle once its
  /// transfers are done.
  size_t busyBytes() const override;

  /// Buffers held.
  size_t size() const { return Slots.size(); }
  /// Usable bytes of all buffers held.
  size_t bytes() const;

private:
  /// Who uses the slots: the owner (any call of it makes the ring Busy),
  /// nobody (Idle), or a reclaim.
  enum StateTy : unsigned { Idle, Busy, Reclaiming };
  /// Make the ring the owner's again; waits while a reclaim frees it.
  void own();
  /// Lease a buffer of \p Size usable bytes from the device's pinned pool,
  /// reacting to a refusal as \p OnRefusal says (a smaller buffer, down to
  /// MinFallbackSize, for Shrink*; null for MakeDo).
  Expected<std::unique_ptr<IOStagingSlotTy>> allocate(size_t Size,
                                                      OnRefusalTy OnRefusal);
  /// The first buffer of an empty ring (next()).
  Expected<IOStagingSlotTy *> first(size_t Want);
  /// Whether the budget has room for a buffer of \p Size beyond the first
  /// (GrowthReserve).
  bool roomToGrow(size_t Size) const;
  /// Put \p Slot in the ring at \p Index, before what is there (\p Insert)
  /// or in its place; returns it.
  IOStagingSlotTy *adopt(std::unique_ptr<IOStagingSlotTy> Slot, size_t Index,
                         bool Insert);
  /// Free \p Slot's memory and event; its copy must be complete.
  Error release(IOStagingSlotTy &Slot);
  /// What the budget is told the buffers are for.
  std::string purpose() const;

  IODeviceTy &Device;
  unsigned Depth;
  std::vector<std::unique_ptr<IOStagingSlotTy>> Slots;
  size_t NextSlot = 0;
  /// The budget refused this busy period's growth: no more tries until the
  /// ring has been idle, so that a full budget costs one refusal, not one
  /// per chunk.
  bool GrowthRefused = false;
  std::atomic<unsigned> State{Idle};
  /// The buffers' bytes in the budget, for busyBytes() from other threads.
  std::atomic<size_t> HeldBytes{0};
};

} // namespace offloadio

#endif // OFFLOADIO_IO_IOSTAGINGRING_H

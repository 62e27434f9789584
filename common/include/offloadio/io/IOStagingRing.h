// SPDX-License-Identifier: Apache-2.0
//
// A worker's ring of pinned staging buffers, each with the event of the
// last copy out of or into it. Taking the next buffer waits only when the
// ring has wrapped onto a buffer whose copy may still run; nothing else
// waits, so a worker enqueues its next copy while earlier ones are in
// flight.
//
// @code
//   if (auto Err = Ring.reserve(ChunkSize, Stream)) ...
//   auto Slot = Ring.next();                  // waits only on wrap
//   pread(..., (*Slot)->Buffer, ...);
//   Stream.copyAsync(Dev, (*Slot)->Buffer, N, CopyKindTy::HostToDevice);
//   Stream.recordEvent(*(*Slot)->Event);
//   (*Slot)->InFlight = true;
//   ...
//   Stream.synchronize(); Ring.retireAll();   // once every copy must land
// @endcode
#ifndef OFFLOADIO_IO_IOSTAGINGRING_H
#define OFFLOADIO_IO_IOSTAGINGRING_H

#include "offloadio/Error.h"
#include "offloadio/PinnedBudget.h"
#include "offloadio/Stream.h"

#include <cstddef>
#include <vector>

namespace offloadio {

class IODeviceTy;

/// One buffer of the ring.
struct IOStagingSlotTy {
  void *Base = nullptr;   ///< As allocated.
  void *Buffer = nullptr; ///< Base rounded up to IOStagingRingTy::BufferAlign.
  EventTy *Event = nullptr;
  /// A copy recorded on Event may still use Buffer.
  bool InFlight = false;
  /// The buffer's bytes in the pinned budget.
  PinnedReservationTy Reservation;
};

/// Pinned buffers of one worker, used round robin.
class IOStagingRingTy {
public:
  /// Staging buffers start on a page: O_DIRECT reads and writes them.
  static constexpr size_t BufferAlign = 4096;

  /// \p Depth buffers of at least \p MinSlotSize bytes each, from
  /// \p Device, allocated by reserve().
  IOStagingRingTy(IODeviceTy &Device, unsigned Depth, size_t MinSlotSize)
      : Device(Device), Depth(Depth), MinSlotSize(MinSlotSize) {}
  /// Frees the buffers; their copies must be complete.
  ~IOStagingRingTy();
  IOStagingRingTy(const IOStagingRingTy &) = delete;
  IOStagingRingTy &operator=(const IOStagingRingTy &) = delete;

  /// Have Depth buffers of at least \p SlotSize bytes. Buffers too small
  /// are replaced once \p Stream, which copies out of them, is idle. On
  /// failure the buffers allocated so far stay; a later call goes on.
  /// When the pinned budget refuses a buffer the ring makes do with those
  /// it has (it then waits on wrap more often); with none it fails.
  Error reserve(size_t SlotSize, StreamTy &Stream);
  /// The next buffer; waits for its copy only if the ring wrapped onto it
  /// while in flight. Only after a successful reserve().
  Expected<IOStagingSlotTy *> next();
  /// Every copy recorded so far is complete (the caller synchronised the
  /// stream): no buffer is in flight.
  void retireAll();

  /// Free every buffer and give back every event; their copies must be
  /// complete.
  Error clear();

  /// Buffers held.
  size_t size() const { return Slots.size(); }
  /// Usable bytes of each buffer.
  size_t slotSize() const { return SlotSize; }

private:
  IODeviceTy &Device;
  unsigned Depth;
  size_t MinSlotSize;
  size_t SlotSize = 0;
  std::vector<IOStagingSlotTy> Slots;
  size_t NextSlot = 0;
};

} // namespace offloadio

#endif // OFFLOADIO_IO_IOSTAGINGRING_H

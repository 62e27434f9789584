// SPDX-License-Identifier: Apache-2.0
#include "offloadio/io/IOStagingRing.h"
#include "offloadio/Profile.h"
#include "offloadio/io/IODevice.h"

#include <algorithm>
#include <cstdint>
#include <string>

using namespace offloadio;

IOStagingRingTy::~IOStagingRingTy() { llvm::consumeError(clear()); }

Error IOStagingRingTy::clear() {
  Error Err = Error::success();
  for (IOStagingSlotTy &S : Slots) {
    Err = llvm::joinErrors(std::move(Err), Device.freePinnedHost(S.Base));
    Device.releaseEvent(S.Event);
  }
  Slots.clear();
  NextSlot = 0;
  return Err;
}

Error IOStagingRingTy::reserve(size_t Size, StreamTy &Stream) {
  if (!Slots.empty() && SlotSize < Size) {
    // A request with larger chunks (an O_DIRECT middle): the ring grows
    // once, after the copies out of its buffers have finished.
    if (auto Err = Stream.synchronize())
      return Err;
    if (auto Err = clear())
      return Err;
  }
  if (Slots.empty())
    SlotSize = std::max(Size, MinSlotSize);
  while (Slots.size() < Depth) {
    auto Reserved = Device.getPinnedBudget().reserve(
        SlotSize + BufferAlign,
        "a file-engine staging buffer of device " +
            std::to_string(Device.getDeviceId()));
    if (!Reserved) {
      if (Slots.empty())
        return Reserved.takeError();
      llvm::consumeError(Reserved.takeError());
      break;
    }
    auto Buffer = Device.allocatePinnedHost(SlotSize + BufferAlign);
    if (!Buffer)
      return Buffer.takeError();
    auto Event = Device.acquireEvent();
    if (!Event) {
      llvm::consumeError(Device.freePinnedHost(*Buffer));
      return Event.takeError();
    }
    IOStagingSlotTy Slot;
    Slot.Base = *Buffer;
    uintptr_t Addr = reinterpret_cast<uintptr_t>(*Buffer);
    Slot.Buffer = reinterpret_cast<void *>((Addr + BufferAlign - 1) /
                                           BufferAlign * BufferAlign);
    Slot.Event = *Event;
    Slot.Reservation = std::move(*Reserved);
    Slots.push_back(std::move(Slot));
  }
  return Error::success();
}

Expected<IOStagingSlotTy *> IOStagingRingTy::next() {
  IOStagingSlotTy &Slot = Slots[NextSlot];
  NextSlot = (NextSlot + 1) % Slots.size();
  if (Slot.InFlight) {
    // The ring wrapped onto a buffer whose copy may still run: the only
    // place a worker waits for the device.
    TimeProfileTy::ScopeTy Timed(Device.getProfile(),
                                 ProfileStage::FileDmaWait);
    Slot.InFlight = false;
    if (auto Err = Slot.Event->synchronize())
      return std::move(Err);
  }
  return &Slot;
}

void IOStagingRingTy::retireAll() {
  for (IOStagingSlotTy &S : Slots)
    S.InFlight = false;
}

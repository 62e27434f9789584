// SPDX-License-Identifier: Apache-2.0
#include "offloadio/io/IOStagingRing.h"
#include "offloadio/Profile.h"
#include "offloadio/io/IODevice.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <thread>

using namespace offloadio;

IOStagingRingTy::IOStagingRingTy(IODeviceTy &Device, unsigned Depth)
    : Device(Device), Depth(std::max(1u, Depth)) {
  Device.getPinnedPool().getBudget().addReclaimable(*this);
}

IOStagingRingTy::~IOStagingRingTy() {
  // No reclaim runs once the budget has let go of the ring.
  Device.getPinnedPool().getBudget().removeReclaimable(*this);
  llvm::consumeError(clear());
}

std::string IOStagingRingTy::purpose() const {
  return "a file-engine staging buffer of device " +
         std::to_string(Device.getDeviceId());
}

void IOStagingRingTy::own() {
  unsigned S = State.load(std::memory_order_acquire);
  while (S != Busy) {
    if (S == Idle) {
      // Acquire: what a reclaim freed is gone before the owner looks.
      if (State.compare_exchange_weak(S, Busy, std::memory_order_acquire)) {
        GrowthRefused = false;
        return;
      }
      continue;
    }
    // A reclaim is freeing the buffers: it waits for nothing, so this is
    // short.
    std::this_thread::yield();
    S = State.load(std::memory_order_acquire);
  }
}

void IOStagingRingTy::markIdle() {
  // Release: the owner's changes to the slots happen before a reclaim
  // reads them.
  State.store(Idle, std::memory_order_release);
}

size_t IOStagingRingTy::reclaimIdle() {
  unsigned Expected = Idle;
  if (!State.compare_exchange_strong(Expected, Reclaiming,
                                     std::memory_order_acquire))
    return 0;
  size_t Bytes = 0;
  // The owner retired every copy before it went idle; a buffer still
  // marked in flight would be one whose copy may run, and stays.
  auto Keep = std::stable_partition(
      Slots.begin(), Slots.end(), [](const auto &S) { return S->InFlight; });
  for (auto It = Keep; It != Slots.end(); ++It) {
    Bytes += (*It)->Lease.size();
    // A buffer whose free fails is gone from the ring all the same: nothing
    // would retry the free.
    llvm::consumeError(release(**It));
  }
  Slots.erase(Keep, Slots.end());
  NextSlot = 0;
  State.store(Idle, std::memory_order_release);
  return Bytes;
}

size_t IOStagingRingTy::busyBytes() const {
  return State.load(std::memory_order_acquire) == Busy
             ? HeldBytes.load(std::memory_order_relaxed)
             : 0;
}

bool IOStagingRingTy::roomToGrow(size_t Size) const {
  const PinnedBudgetTy &Budget = Device.getPinnedPool().getBudget();
  return Budget.room() >=
         Size + BufferAlign + Budget.getStats().Cap / GrowthReserve;
}

IOStagingSlotTy *IOStagingRingTy::adopt(std::unique_ptr<IOStagingSlotTy> Slot,
                                        size_t Index, bool Insert) {
  HeldBytes.fetch_add(Slot->Lease.size(), std::memory_order_relaxed);
  if (Insert)
    Slots.insert(Slots.begin() + Index, std::move(Slot));
  else
    Slots[Index] = std::move(Slot);
  return Slots[Index].get();
}

Error IOStagingRingTy::release(IOStagingSlotTy &Slot) {
  size_t Bytes = Slot.Lease.size();
  Error Err = Slot.Lease.release();
  Device.releaseEvent(Slot.Event);
  HeldBytes.fetch_sub(Bytes, std::memory_order_relaxed);
  Slot.Buffer = nullptr;
  Slot.Event = nullptr;
  return Err;
}

Error IOStagingRingTy::clear() {
  own();
  Error Err = Error::success();
  for (auto &S : Slots)
    Err = llvm::joinErrors(std::move(Err), release(*S));
  Slots.clear();
  NextSlot = 0;
  return Err;
}

size_t IOStagingRingTy::bytes() const {
  size_t Bytes = 0;
  for (const auto &S : Slots)
    Bytes += S->Size;
  return Bytes;
}

Expected<std::unique_ptr<IOStagingSlotTy>>
IOStagingRingTy::allocate(size_t Size, OnRefusalTy OnRefusal) {
  std::string Purpose = purpose();
  PinnedRequestTy Request;
  // BufferAlign more than the buffer: its start is rounded up to a page.
  Request.Bytes = Size + BufferAlign;
  Request.OnRefusal = OnRefusal;
  Request.Purpose = Purpose;
  Request.Self = this;
  Request.MinBytes = std::min(Size, MinFallbackSize) + BufferAlign;
  auto Lease = Device.getPinnedPool().acquire(Request);
  if (!Lease)
    return Lease.takeError();
  if (!*Lease)
    return nullptr;
  auto Event = Device.acquireEvent();
  if (!Event)
    return Event.takeError();
  auto Slot = std::make_unique<IOStagingSlotTy>();
  uintptr_t Addr = reinterpret_cast<uintptr_t>(Lease->get());
  Slot->Buffer = reinterpret_cast<void *>((Addr + BufferAlign - 1) /
                                          BufferAlign * BufferAlign);
  // A shrunk lease is a whole number of pages, as the request was.
  Slot->Size = Lease->size() - BufferAlign;
  Slot->Event = *Event;
  Slot->Lease = std::move(*Lease);
  return std::move(Slot);
}

Expected<IOStagingSlotTy *> IOStagingRingTy::next(size_t Want) {
  own();
  Want = std::max<size_t>(Want, 1);
  Want = (Want + BufferAlign - 1) / BufferAlign * BufferAlign;
  if (Slots.empty())
    return first(Want);
  if (!GrowthRefused && Slots.size() < Depth && Slots[NextSlot]->InFlight) {
    // A new buffer goes before the one in flight, which stays the next to
    // be reused: the ring keeps its order of use. MakeDo: a ring that the
    // budget cannot grow goes on with the buffers it has (it waits on wrap
    // more often); a failed allocation is an error.
    std::unique_ptr<IOStagingSlotTy> New;
    if (roomToGrow(Want)) {
      auto Slot = allocate(Want, OnRefusalTy::MakeDo);
      if (!Slot)
        return Slot.takeError();
      New = std::move(*Slot);
    }
    if (New) {
      IOStagingSlotTy *Adopted = adopt(std::move(New), NextSlot, true);
      NextSlot = (NextSlot + 1) % Slots.size();
      return Adopted;
    }
    GrowthRefused = true;
  }
  size_t Index = NextSlot;
  NextSlot = (NextSlot + 1) % Slots.size();
  IOStagingSlotTy *Slot = Slots[Index].get();
  if (Slot->InFlight) {
    // The ring wrapped onto a buffer whose copy may still run: the only
    // place a worker waits for the device.
    TimeProfileTy::ScopeTy Timed(Device.getProfile(),
                                 ProfileStage::FileDmaWait);
    Slot->InFlight = false;
    if (auto Err = Slot->Event->synchronize())
      return std::move(Err);
  }
  if (Slot->Size >= Want || GrowthRefused)
    return Slot;
  // Too small for this transfer: replaced, if the budget has room for the
  // larger buffer beside it. MakeDo: else the transfer goes in pieces.
  std::unique_ptr<IOStagingSlotTy> Larger;
  if (roomToGrow(Want)) {
    auto Leased = allocate(Want, OnRefusalTy::MakeDo);
    if (!Leased)
      return Leased.takeError();
    Larger = std::move(*Leased);
  }
  if (!Larger) {
    GrowthRefused = true;
    return Slot;
  }
  Error Err = release(*Slot);
  Slot = adopt(std::move(Larger), Index, false);
  if (Err)
    return std::move(Err);
  return Slot;
}

Expected<IOStagingSlotTy *> IOStagingRingTy::first(size_t Want) {
  // ShrinkThenWait: a transfer needs one buffer, of any size; where busy
  // workers hold the budget, their buffers come back when they go idle, so
  // wait for that rather than fail. This ring holds nothing, so no worker
  // waits for it.
  auto Slot = allocate(Want, OnRefusalTy::ShrinkThenWait);
  if (!Slot)
    return Slot.takeError();
  NextSlot = 0;
  return adopt(std::move(*Slot), 0, true);
}

void IOStagingRingTy::retireAll() {
  own();
  for (auto &S : Slots)
    S->InFlight = false;
}

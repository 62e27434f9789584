// SPDX-License-Identifier: Apache-2.0
#include "offloadio/StagingPool.h"

#include <cstring>

using namespace offloadio;

StagingPoolTy::StagingPoolTy(size_t BufferSize, unsigned MaxBuffers,
                             AllocFnTy Alloc, FreeFnTy Free,
                             PinnedBudgetTy *Budget, std::string Purpose)
    : BufferSize(BufferSize), MaxBuffers(std::max(1u, MaxBuffers)),
      Alloc(std::move(Alloc)), Free(std::move(Free)), Budget(Budget),
      Purpose(std::move(Purpose)) {
  All.reserve(this->MaxBuffers);
  Available.reserve(this->MaxBuffers);
}

StagingPoolTy::~StagingPoolTy() { llvm::consumeError(clear()); }

Expected<StagingBufferTy *> StagingPoolTy::acquire() { return take(true); }

Expected<StagingBufferTy *> StagingPoolTy::tryAcquire() { return take(false); }

Expected<StagingBufferTy *> StagingPoolTy::take(bool Wait) {
  std::unique_lock<std::mutex> Guard(Lock);
  // The buffer of the oldest copy still reading one, once that copy is
  // done: the ring wrapped. Waited for outside the lock, since callbacks
  // ahead of that copy on its stream may release buffers of this pool. A
  // failed copy is its stream's error, reported to whoever waits for that
  // stream; the buffer is free either way.
  auto TakeOldest = [&] {
    InFlightTy Oldest = std::move(InFlight.front());
    InFlight.pop_front();
    Guard.unlock();
    llvm::consumeError(Oldest.Done->synchronize());
    return Oldest.Buffer;
  };
  // A free buffer, or room under the cap to allocate one. Room also comes
  // back when an allocation under way fails: a waiter that counted on that
  // buffer being returned one day would otherwise wait forever. Buffers
  // whose copies are done are reused before new ones are allocated.
  auto Ready = [&] {
    if (Available.empty())
      reclaimCompletedLocked();
    return !Available.empty() || All.size() + Pending < MaxBuffers;
  };
  while (!Ready()) {
    if (!Wait)
      return nullptr;
    if (!InFlight.empty())
      return TakeOldest();
    Returned.wait(Guard);
  }
  PinnedReservationTy Reservation;
  while (Available.empty() && Budget) {
    auto Reserved = Budget->reserve(BufferSize, Purpose);
    if (Reserved) {
      Reservation = std::move(*Reserved);
      break;
    }
    // Buffers of ours that are out come back (see the header), and the
    // room they hold is this pool's; with none out, nothing would.
    if (!Wait) {
      llvm::consumeError(Reserved.takeError());
      return nullptr;
    }
    // With none out and none being allocated, nothing would come back.
    if (All.empty() && Pending == 0)
      return Reserved.takeError();
    llvm::consumeError(Reserved.takeError());
    if (!InFlight.empty())
      return TakeOldest();
    Returned.wait(Guard, [&] {
      return !Available.empty() || !InFlight.empty() ||
             (All.empty() && Pending == 0);
    });
  }
  if (!Available.empty()) {
    StagingBufferTy *Buffer = Available.back();
    Available.pop_back();
    return Buffer;
  }
  // Allocate outside the lock: vendor allocators (cuMemAllocHost) may wait
  // for streams whose completion callbacks need this lock to release
  // buffers.
  ++Pending;
  Guard.unlock();
  auto Ptr = Alloc(BufferSize);
  auto Buffer = std::make_unique<StagingBufferTy>();
  Guard.lock();
  --Pending;
  if (!Ptr) {
    Guard.unlock();
    // Waiters at the cap and waiters on the budget share the variable:
    // wake all, so that the one this room or outcome serves is among them.
    Returned.notify_all();
    return Ptr.takeError();
  }
  Buffer->Pool = this;
  Buffer->Ptr = *Ptr;
  Buffer->Reservation = std::move(Reservation);
  All.push_back(std::move(Buffer));
  return All.back().get();
}

Error StagingPoolTy::releaseCallback(void *Data) {
  auto *Buffer = static_cast<StagingBufferTy *>(Data);
  Buffer->Pool->release(Buffer);
  return Error::success();
}

Error StagingPoolTy::copyOutCallback(void *Data) {
  auto *Buffer = static_cast<StagingBufferTy *>(Data);
  std::memcpy(Buffer->CopyOutDst, Buffer->Ptr, Buffer->CopyOutSize);
  Buffer->Pool->release(Buffer);
  return Error::success();
}

void StagingPoolTy::release(StagingBufferTy *Buffer) {
  {
    std::lock_guard<std::mutex> Guard(Lock);
    Available.push_back(Buffer);
  }
  Returned.notify_all();
}

void StagingPoolTy::releaseAfter(StagingBufferTy *Buffer,
                                 PoolLeaseTy<EventTy> Done) {
  {
    std::lock_guard<std::mutex> Guard(Lock);
    InFlight.push_back({Buffer, std::move(Done)});
  }
  // A waiter at the cap can now wait for this copy instead.
  Returned.notify_all();
}

void StagingPoolTy::reclaimCompletedLocked() {
  // Copies on one stream complete in order, so the first incomplete event
  // ends the scan; one that fails to answer is asked again next time.
  while (!InFlight.empty()) {
    Expected<bool> Done = InFlight.front().Done->query();
    if (!Done) {
      llvm::consumeError(Done.takeError());
      return;
    }
    if (!*Done)
      return;
    Available.push_back(InFlight.front().Buffer);
    InFlight.pop_front();
  }
}

unsigned StagingPoolTy::allocated() const {
  std::lock_guard<std::mutex> Guard(Lock);
  return All.size();
}

Error StagingPoolTy::clear() {
  std::unique_lock<std::mutex> Guard(Lock);
  // Copies still reading buffers handed over with releaseAfter(): wait for
  // them (outside the lock, as in take()), which also gives their events
  // back before the device's event pool goes.
  while (!InFlight.empty()) {
    InFlightTy Oldest = std::move(InFlight.front());
    InFlight.pop_front();
    Guard.unlock();
    llvm::consumeError(Oldest.Done->synchronize());
    Oldest.Done.reset();
    Guard.lock();
    Available.push_back(Oldest.Buffer);
  }
  if (Available.size() != All.size())
    return makeError(ErrorCode::Busy,
                     "staging pool cleared with {0} of {1} buffers in use",
                     All.size() - Available.size(), All.size());
  Error Result = Error::success();
  for (auto &Buffer : All)
    if (auto Err = Free(Buffer->Ptr))
      Result = llvm::joinErrors(std::move(Result), std::move(Err));
  All.clear();
  Available.clear();
  return Result;
}

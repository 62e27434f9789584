// SPDX-License-Identifier: Apache-2.0
#include "offloadio/StagingPool.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

using namespace offloadio;

StagingPoolTy::StagingPoolTy(size_t BufferSize, unsigned MaxBuffers,
                             PinnedPoolTy &Pinned, std::string Purpose)
    : BufferSize(Pinned.getBudget().fitBuffer(BufferSize)),
      MaxBuffers(std::max(1u, MaxBuffers)), Pinned(Pinned),
      Purpose(std::move(Purpose)) {
  All.reserve(this->MaxBuffers);
  Available.reserve(this->MaxBuffers);
  Pinned.getBudget().addReclaimable(*this);
}

StagingPoolTy::~StagingPoolTy() {
  Pinned.getBudget().removeReclaimable(*this);
  llvm::consumeError(clear());
}

Expected<StagingBufferTy *> StagingPoolTy::acquire() { return take(true); }

Expected<StagingBufferTy *> StagingPoolTy::tryAcquire() { return take(false); }

Expected<StagingBufferTy *> StagingPoolTy::take(bool Wait) {
  std::unique_lock<std::mutex> Guard(Lock, std::defer_lock);
  // Whether the budget refused this call's buffer already: its later tries
  // ask again for the same buffer, one refused request in the stats.
  PinnedTryTy Try = PinnedTryTy::First;
  for (unsigned Round = 0;; ++Round) {
    // Buffers whose copies are done are reused before new ones are
    // allocated.
    reclaimCompleted();
    Guard.lock();
    if (!Available.empty()) {
      StagingBufferTy *Buffer = Available.back();
      Available.pop_back();
      return Buffer;
    }
    // Room under the cap, and in the budget, to allocate one. Room also
    // comes back when an allocation under way fails: a waiter that counted
    // on that buffer being returned one day would otherwise wait forever.
    if (All.size() + Pending < MaxBuffers) {
      // Leased outside the lock: a refusal has the budget's other holders
      // free their idle memory, another pool taking its own lock and
      // calling the vendor's free, and vendor allocators (cuMemAllocHost)
      // may wait for streams whose completion callbacks need this lock to
      // release buffers. Counted as pending meanwhile, so that the room
      // under the cap stays this caller's.
      ++Pending;
      Guard.unlock();
      // MakeDo: buffers of ours that are out come back (see the header),
      // and a caller of tryAcquire() has its own answer to a refusal.
      auto Lease = Pinned.acquire(
          {BufferSize, OnRefusalTy::MakeDo, Purpose, this, 0, Try});
      if (Lease && !*Lease)
        Try = PinnedTryTy::Again;
      if (Lease && !*Lease && Wait) {
        Guard.lock();
        bool NoneOut = All.empty() && Pending == 1 && Freeing == 0;
        Guard.unlock();
        // Wait: with none of ours out and none being allocated, only other
        // holders' busy memory may come back; the refusal stands if not
        // enough of it will.
        if (NoneOut)
          Lease = Pinned.acquire(
              {BufferSize, OnRefusalTy::Wait, Purpose, this, 0, Try});
      }
      auto Buffer = std::make_unique<StagingBufferTy>();
      Guard.lock();
      --Pending;
      if (!Lease) {
        Guard.unlock();
        // Waiters at the cap and waiters on the budget share the variable:
        // wake all, so that the one this room or outcome serves is among
        // them.
        Returned.notify_all();
        return Lease.takeError();
      }
      if (*Lease) {
        Buffer->Pool = this;
        Buffer->Ptr = Lease->get();
        Buffer->Lease = std::move(*Lease);
        All.push_back(std::move(Buffer));
        return All.back().get();
      }
      // A waiter that counted on this allocation looks again.
      Returned.notify_all();
      // A buffer released while the lock was dropped for the lease notified
      // no one: it is taken here, or the wait below could outlast the last
      // buffer out.
      if (!Available.empty()) {
        StagingBufferTy *Buffer = Available.back();
        Available.pop_back();
        return Buffer;
      }
    }
    if (!Wait)
      return nullptr;
    if (All.empty() && Pending == 0 && Freeing == 0 &&
        InFlightCount.load(std::memory_order_acquire) == 0) {
      // Nothing of the pool's is out: its last buffer was released and then
      // freed by reclaimIdle() while the lock was dropped, so no release()
      // will come. Ask the budget again (then waiting on it, or refused).
      // Buffers being freed (Freeing) give their room back first.
      Guard.unlock();
      continue;
    }
    if (InFlightCount.load(std::memory_order_acquire) == 0) {
      // Only release() and releaseAfter() bring a buffer back now; both
      // notify under Lock, so nothing is missed between the checks above
      // and this wait.
      Returned.wait(Guard);
      Guard.unlock();
      continue;
    }
    // The ring wrapped: copies in flight on any of the device's streams,
    // which complete in any order among streams. Poll them all (above),
    // backing off, rather than wait for one that may sit behind other work.
    Guard.unlock();
    if (Round < 4)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(
          std::chrono::microseconds(25u << std::min(Round - 4, 5u)));
  }
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
    std::lock_guard<std::mutex> Guard(InFlightLock);
    InFlight.push_back({Buffer, std::move(Done)});
    InFlightCount.fetch_add(1, std::memory_order_release);
  }
  // A caller waiting at the cap can now wait for this copy instead. Taking
  // Lock orders this with its check of InFlightCount before it waits.
  { std::lock_guard<std::mutex> Guard(Lock); }
  Returned.notify_all();
}

void StagingPoolTy::reclaimCompleted() {
  if (InFlightCount.load(std::memory_order_acquire) == 0)
    return;
  std::vector<InFlightTy> Done;
  {
    // Every entry is asked: copies on different streams complete in any
    // order. A copy whose event fails to answer is taken as over: its
    // failure is its stream's error, reported to whoever waits for that
    // stream, and nothing reads the buffer any more.
    std::lock_guard<std::mutex> Guard(InFlightLock);
    for (auto It = InFlight.begin(); It != InFlight.end();) {
      Expected<bool> Complete = It->Done->query();
      if (!Complete)
        llvm::consumeError(Complete.takeError());
      else if (!*Complete) {
        ++It;
        continue;
      }
      Done.push_back(std::move(*It));
      It = InFlight.erase(It);
      InFlightCount.fetch_sub(1, std::memory_order_release);
    }
  }
  if (Done.empty())
    return;
  {
    std::lock_guard<std::mutex> Guard(Lock);
    for (InFlightTy &Entry : Done)
      Available.push_back(Entry.Buffer);
  }
  Returned.notify_all();
}

size_t StagingPoolTy::reclaimIdle() {
  reclaimCompleted();
  std::vector<std::unique_ptr<StagingBufferTy>> Idle;
  {
    std::lock_guard<std::mutex> Guard(Lock);
    for (StagingBufferTy *Buffer : Available) {
      auto It = std::find_if(All.begin(), All.end(), [&](const auto &Held) {
        return Held.get() == Buffer;
      });
      Idle.push_back(std::move(*It));
      All.erase(It);
    }
    Available.clear();
    Freeing += Idle.size();
  }
  if (Idle.empty())
    return 0;
  size_t Bytes = 0;
  for (const auto &Buffer : Idle) {
    Bytes += Buffer->Lease.size();
    // The buffer leaves the pool whether or not the free succeeds: nothing
    // could use it again, and nothing would retry the free.
    llvm::consumeError(Buffer->Lease.release());
  }
  {
    std::lock_guard<std::mutex> Guard(Lock);
    Freeing -= Idle.size();
  }
  // Room under the cap, and in the budget, for callers waiting there: only
  // now, so that a caller that finds none of the pool's buffers left also
  // finds their bytes back in the budget.
  Returned.notify_all();
  return Bytes;
}

StagingBufferTy *StagingPoolTy::takeOldest(bool Wait, TeardownTy &Teardown) {
  InFlightTy Oldest;
  {
    std::lock_guard<std::mutex> Guard(InFlightLock);
    if (InFlight.empty())
      return nullptr;
    Oldest = std::move(InFlight.front());
    InFlight.pop_front();
    InFlightCount.fetch_sub(1, std::memory_order_release);
  }
  // A failed copy is its caller's to report; only a driver that has shut
  // down matters here.
  if (Wait)
    Teardown.addDriverAnswerOnly(Oldest.Done->synchronize());
  return Oldest.Buffer;
}

unsigned StagingPoolTy::allocated() const {
  std::lock_guard<std::mutex> Guard(Lock);
  return All.size();
}

Error StagingPoolTy::clear() {
  TeardownTy Teardown;
  clear(Teardown);
  return Teardown.takeForEnclosing();
}

void StagingPoolTy::clear(TeardownTy &Teardown) {
  // Copies still reading buffers handed over with releaseAfter(): wait for
  // them, which also gives their events back before the device's event
  // pool goes. A driver that has shut down finished them all.
  while (StagingBufferTy *Buffer =
             takeOldest(!Teardown.driverGone(), Teardown)) {
    std::lock_guard<std::mutex> Guard(Lock);
    Available.push_back(Buffer);
  }
  std::lock_guard<std::mutex> Guard(Lock);
  if (Available.size() != All.size()) {
    Teardown.add(
        makeError(ErrorCode::Busy,
                  "staging pool cleared with {0} of {1} buffers in use",
                  All.size() - Available.size(), All.size()));
    return;
  }
  // The memory of a driver that has shut down went with it.
  for (auto &Buffer : All) {
    if (Teardown.driverGone())
      Buffer->Lease.abandon();
    else
      Teardown.add(Buffer->Lease.release());
  }
  All.clear();
  Available.clear();
}

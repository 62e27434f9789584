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
  // A free buffer, or room under the cap to allocate one. Room also comes
  // back when an allocation under way fails: a waiter that counted on that
  // buffer being returned one day would otherwise wait forever.
  auto Ready = [&] {
    return !Available.empty() || All.size() + Pending < MaxBuffers;
  };
  if (!Wait && !Ready())
    return nullptr;
  Returned.wait(Guard, Ready);
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
    Returned.wait(Guard, [&] {
      return !Available.empty() || (All.empty() && Pending == 0);
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

unsigned StagingPoolTy::allocated() const {
  std::lock_guard<std::mutex> Guard(Lock);
  return All.size();
}

Error StagingPoolTy::clear() {
  std::lock_guard<std::mutex> Guard(Lock);
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

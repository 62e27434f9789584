// SPDX-License-Identifier: Apache-2.0
#include "offloadio/PinnedPool.h"

#include <algorithm>

using namespace offloadio;

PinnedAllocatorTy::~PinnedAllocatorTy() = default;

llvm::StringRef offloadio::onRefusalName(OnRefusalTy OnRefusal) {
  switch (OnRefusal) {
  case OnRefusalTy::Fail:
    return "fail";
  case OnRefusalTy::Wait:
    return "wait";
  case OnRefusalTy::Shrink:
    return "shrink";
  case OnRefusalTy::ShrinkThenWait:
    return "shrink-then-wait";
  case OnRefusalTy::MakeDo:
    return "make-do";
  case OnRefusalTy::CopyUnpinned:
    return "copy-unpinned";
  }
  return "unknown";
}

PinnedLeaseTy::PinnedLeaseTy(PinnedLeaseTy &&Other) noexcept
    : Allocator(Other.Allocator), Ptr(Other.Ptr), Bytes(Other.Bytes),
      Reservation(std::move(Other.Reservation)) {
  Other.Allocator = nullptr;
  Other.Ptr = nullptr;
  Other.Bytes = 0;
}

PinnedLeaseTy &PinnedLeaseTy::operator=(PinnedLeaseTy &&Other) noexcept {
  if (this != &Other) {
    llvm::consumeError(release());
    Allocator = Other.Allocator;
    Ptr = Other.Ptr;
    Bytes = Other.Bytes;
    Reservation = std::move(Other.Reservation);
    Other.Allocator = nullptr;
    Other.Ptr = nullptr;
    Other.Bytes = 0;
  }
  return *this;
}

PinnedLeaseTy::~PinnedLeaseTy() { llvm::consumeError(release()); }

Error PinnedLeaseTy::release() {
  Error Err = Error::success();
  if (Ptr)
    Err = Allocator->freePinned(Ptr, Bytes);
  // The memory is gone before its bytes are: the account never shows less
  // than what is pinned.
  Reservation.release();
  Allocator = nullptr;
  Ptr = nullptr;
  Bytes = 0;
  return Err;
}

void PinnedLeaseTy::abandon() {
  Ptr = nullptr;
  llvm::consumeError(release());
}

Expected<PinnedReservationTy>
PinnedPoolTy::reserve(const PinnedRequestTy &Request, bool Smaller,
                      size_t MinBytes, PinnedTryTy Try) {
  auto Reserved =
      Budget.reserve(Request.Bytes, Request.Purpose, Request.Self, Try);
  if (Reserved || !Smaller)
    return Reserved;
  // Half of what is left, so that other holders find room too.
  uint64_t Half = Budget.room() / 2 / ShrinkGranule * ShrinkGranule;
  size_t Shrunk = size_t(std::max<uint64_t>(Half, MinBytes));
  if (Shrunk >= Request.Bytes)
    return Reserved;
  // The same request, refused (and counted) just now.
  auto Again =
      Budget.reserve(Shrunk, Request.Purpose, Request.Self, PinnedTryTy::Again);
  if (!Again) {
    // The caller hears of the size it asked for, not of the share.
    llvm::consumeError(Again.takeError());
    return Reserved;
  }
  llvm::consumeError(Reserved.takeError());
  return Again;
}

Expected<PinnedLeaseTy> PinnedPoolTy::acquire(const PinnedRequestTy &Request) {
  const OnRefusalTy OnRefusal = Request.OnRefusal;
  const bool Smaller = OnRefusal == OnRefusalTy::Shrink ||
                       OnRefusal == OnRefusalTy::ShrinkThenWait;
  const bool Waits =
      OnRefusal == OnRefusalTy::Wait || OnRefusal == OnRefusalTy::ShrinkThenWait;
  size_t MinBytes = std::min(
      Request.MinBytes ? Request.MinBytes : ShrinkGranule, Request.Bytes);
  auto Reserved = reserve(Request, Smaller, MinBytes, Request.Try);
  // Waiters wait for the least they can work with; the caller holds none of
  // the budget's busy memory itself (PinnedBudgetTy::waitForRoom). Each
  // try after a wait asks again for what was refused once.
  while (!Reserved && Waits &&
         Budget.waitForRoom(Smaller ? MinBytes : Request.Bytes, Request.Self)) {
    llvm::consumeError(Reserved.takeError());
    Reserved = reserve(Request, Smaller, MinBytes, PinnedTryTy::Again);
  }
  if (!Reserved) {
    if (OnRefusal != OnRefusalTy::MakeDo &&
        OnRefusal != OnRefusalTy::CopyUnpinned)
      return Reserved.takeError();
    llvm::consumeError(Reserved.takeError());
    return PinnedLeaseTy();
  }
  auto Ptr = Allocator.allocatePinned(Reserved->size());
  if (!Ptr)
    return Ptr.takeError(); // The reservation goes back with Reserved.
  return PinnedLeaseTy(Allocator, *Ptr, std::move(*Reserved));
}

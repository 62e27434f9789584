// SPDX-License-Identifier: Apache-2.0
#include "offloadio/PageRegistry.h"

#include "llvm/ADT/SmallVector.h"

#include <mutex>

using namespace offloadio;

// Out of line so that the vtable has one home.
PageLockOpsTy::~PageLockOpsTy() = default;

PageRegistryTy::ChunkMapTy::iterator
PageRegistryTy::firstEndingAfter(uintptr_t Addr) {
  auto It = Chunks.upper_bound(Addr);
  if (It != Chunks.begin() && std::prev(It)->second.End > Addr)
    --It;
  return It;
}

Error PageRegistryTy::acquire(uintptr_t Begin, uintptr_t End) {
  // Lock the gaps between existing chunks, remembering them so that a
  // failure undoes exactly what this call did.
  llvm::SmallVector<uintptr_t, 4> Added;
  auto Undo = [&] {
    for (uintptr_t Start : Added) {
      auto It = Chunks.find(Start);
      if (!It->second.Foreign)
        llvm::consumeError(Ops.unlockPages(reinterpret_cast<void *>(Start),
                                           It->second.End - Start));
      Chunks.erase(It);
    }
  };
  uintptr_t Cursor = Begin;
  for (auto It = firstEndingAfter(Begin); Cursor < End;) {
    uintptr_t GapEnd = (It != Chunks.end() && It->first < End)
                           ? std::max(It->first, Cursor)
                           : End;
    if (Cursor < GapEnd) {
      auto Foreign =
          Ops.lockPages(reinterpret_cast<void *>(Cursor), GapEnd - Cursor);
      if (!Foreign) {
        Undo();
        return Foreign.takeError();
      }
      Chunks.emplace(Cursor, ChunkTy{GapEnd, 0, *Foreign});
      Added.push_back(Cursor);
    }
    if (It == Chunks.end() || It->first >= End)
      break;
    Cursor = It->second.End;
    ++It;
  }
  for (auto It = firstEndingAfter(Begin); It != Chunks.end() && It->first < End;
       ++It)
    ++It->second.Users;
  return Error::success();
}

Error PageRegistryTy::release(uintptr_t Begin, uintptr_t End) {
  Error Result = Error::success();
  auto It = firstEndingAfter(Begin);
  while (It != Chunks.end() && It->first < End) {
    ChunkTy &Chunk = It->second;
    if (--Chunk.Users > 0) {
      ++It;
      continue;
    }
    // On failure the chunk is forgotten all the same: its pages are in a
    // state we cannot know, and keeping it would leave the counts of the
    // other chunks inconsistent with the ranges still pinned.
    if (!Chunk.Foreign)
      if (auto Err = Ops.unlockPages(reinterpret_cast<void *>(It->first),
                                     Chunk.End - It->first))
        Result = llvm::joinErrors(std::move(Result), std::move(Err));
    It = Chunks.erase(It);
  }
  return Result;
}

Error PageRegistryTy::pin(void *HstPtr, size_t Size) {
  auto Addr = reinterpret_cast<uintptr_t>(HstPtr);
  if (Size == 0 || Size > UINTPTR_MAX - Addr - PageSize)
    return makeError(ErrorCode::InvalidArgument, "cannot pin {0} bytes at {1}",
                     Size, HstPtr);
  uintptr_t Begin = Addr & ~(PageSize - 1);
  uintptr_t End = (Addr + Size + PageSize - 1) & ~(PageSize - 1);

  std::unique_lock<std::shared_mutex> Guard(Lock);
  if (auto Err = acquire(Begin, End))
    return Err;
  ++Pins[{Addr, Size}];
  // Release: a copy that sees the flag also sees the chunks (it takes the
  // lock before looking at them anyway).
  HasChunks.store(true, std::memory_order_release);
  return Error::success();
}

Error PageRegistryTy::unpin(void *HstPtr, size_t Size) {
  auto Addr = reinterpret_cast<uintptr_t>(HstPtr);
  std::unique_lock<std::shared_mutex> Guard(Lock);
  auto Pin = Pins.find({Addr, Size});
  if (Pin == Pins.end())
    return Error::success();
  // Forget the pin before calling the backend: if unlocking fails, the
  // caller may unpin again, and that must not release the pages twice.
  if (--Pin->second == 0)
    Pins.erase(Pin);
  uintptr_t Begin = Addr & ~(PageSize - 1);
  uintptr_t End = (Addr + Size + PageSize - 1) & ~(PageSize - 1);
  Error Err = release(Begin, End);
  HasChunks.store(!Chunks.empty(), std::memory_order_release);
  return Err;
}

size_t PageRegistryTy::contiguousBytes(const void *Ptr, size_t Size) const {
  // Acquire pairs with the release in pin(); a stale "false" only means a
  // copy that started before the pin finished, which cannot involve it.
  if (!HasChunks.load(std::memory_order_acquire))
    return Size;
  auto Addr = reinterpret_cast<uintptr_t>(Ptr);
  std::shared_lock<std::shared_mutex> Guard(Lock);
  auto It = Chunks.upper_bound(Addr);
  uintptr_t Limit;
  if (It != Chunks.begin() && std::prev(It)->second.End > Addr)
    Limit = std::prev(It)->second.End; // Inside a chunk.
  else if (It != Chunks.end())
    Limit = It->first; // Outside, up to the next chunk.
  else
    return Size;
  return std::min<size_t>(Size, Limit - Addr);
}

size_t PageRegistryTy::numChunks() const {
  std::shared_lock<std::shared_mutex> Guard(Lock);
  return Chunks.size();
}

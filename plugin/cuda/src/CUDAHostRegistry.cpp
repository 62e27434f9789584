// SPDX-License-Identifier: Apache-2.0
#include "CUDAHostRegistry.h"

#include "llvm/ADT/SmallVector.h"

#include <mutex>

using namespace offloadio;
using namespace offloadio::cuda;

CUDAHostRegistryTy::ChunkMapTy::iterator
CUDAHostRegistryTy::firstEndingAfter(uintptr_t Addr) {
  auto It = Chunks.upper_bound(Addr);
  if (It != Chunks.begin() && std::prev(It)->second.End > Addr)
    --It;
  return It;
}

Error CUDAHostRegistryTy::acquire(uintptr_t Begin, uintptr_t End) {
  // Register the gaps between existing chunks, remembering them so that a
  // failure undoes exactly what this call did.
  llvm::SmallVector<uintptr_t, 4> Added;
  auto Undo = [&] {
    for (uintptr_t Start : Added) {
      auto It = Chunks.find(Start);
      if (!It->second.Foreign)
        Api.cuMemHostUnregister(reinterpret_cast<void *>(Start));
      Chunks.erase(It);
    }
  };
  uintptr_t Cursor = Begin;
  for (auto It = firstEndingAfter(Begin); Cursor < End;) {
    uintptr_t GapEnd = (It != Chunks.end() && It->first < End)
                           ? std::max(It->first, Cursor)
                           : End;
    if (Cursor < GapEnd) {
      void *Ptr = reinterpret_cast<void *>(Cursor);
      size_t Bytes = GapEnd - Cursor;
      CUresult Result = Api.cuMemHostRegister(Ptr, Bytes,
                                              CU_MEMHOSTREGISTER_PORTABLE |
                                                  CU_MEMHOSTREGISTER_DEVICEMAP);
      bool Foreign = Result == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
      if (!Foreign)
        if (auto Err = checkCU(Api, Result, "cuMemHostRegister",
                               "{0} bytes at {1} (pages of a pinned range)",
                               Bytes, Ptr)) {
          Undo();
          return Err;
        }
      Chunks.emplace(Cursor, ChunkTy{GapEnd, 0, Foreign});
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

Error CUDAHostRegistryTy::release(uintptr_t Begin, uintptr_t End) {
  Error Result = Error::success();
  auto It = firstEndingAfter(Begin);
  while (It != Chunks.end() && It->first < End) {
    ChunkTy &Chunk = It->second;
    if (--Chunk.Users > 0) {
      ++It;
      continue;
    }
    if (!Chunk.Foreign) {
      void *Ptr = reinterpret_cast<void *>(It->first);
      // On failure the chunk is forgotten all the same: its pages are in a
      // state we cannot know, and keeping it would leave the counts of the
      // other chunks inconsistent with the ranges still pinned.
      if (auto Err =
              checkCU(Api, Api.cuMemHostUnregister(Ptr), "cuMemHostUnregister",
                      "{0} bytes at {1}", Chunk.End - It->first, Ptr))
        Result = llvm::joinErrors(std::move(Result), std::move(Err));
    }
    It = Chunks.erase(It);
  }
  return Result;
}

Expected<void *> CUDAHostRegistryTy::pin(void *HstPtr, size_t Size) {
  auto Addr = reinterpret_cast<uintptr_t>(HstPtr);
  if (Size == 0 || Size > UINTPTR_MAX - Addr - PageSize)
    return makeError(ErrorCode::InvalidArgument, "cannot pin {0} bytes at {1}",
                     Size, HstPtr);
  uintptr_t Begin = Addr & ~(PageSize - 1);
  uintptr_t End = (Addr + Size + PageSize - 1) & ~(PageSize - 1);

  std::unique_lock<std::shared_mutex> Guard(Lock);
  if (auto Err = acquire(Begin, End))
    return std::move(Err);
  auto Fail = [&](Error Err) -> Error {
    llvm::consumeError(release(Begin, End));
    HasChunks.store(!Chunks.empty(), std::memory_order_release);
    return Err;
  };
  // The device address of the first byte; with unified addressing (every
  // 64-bit system current drivers support) it is the host address itself.
  // A range over several registrations is usable as one only if the device
  // sees it contiguously, so check the last byte too.
  CUdeviceptr First = 0, Last = 0;
  if (auto Err = checkCU(Api, Api.cuMemHostGetDevicePointer(&First, HstPtr, 0),
                         "cuMemHostGetDevicePointer", "{0} ({1} bytes pinned)",
                         HstPtr, Size))
    return Fail(std::move(Err));
  void *LastByte = static_cast<char *>(HstPtr) + Size - 1;
  if (auto Err = checkCU(Api, Api.cuMemHostGetDevicePointer(&Last, LastByte, 0),
                         "cuMemHostGetDevicePointer",
                         "{0} (last byte of {1} bytes pinned at {2})", LastByte,
                         Size, HstPtr))
    return Fail(std::move(Err));
  if (Last - First != Size - 1)
    return Fail(makeError(ErrorCode::Unsupported,
                          "pinned range {0} ({1} bytes) is not contiguous in "
                          "the device address space ({2:x} .. {3:x})",
                          HstPtr, Size, First, Last));
  ++Pins[{Addr, Size}];
  // Release: a copy that sees the flag also sees the chunks (it takes the
  // lock before looking at them anyway).
  HasChunks.store(true, std::memory_order_release);
  return reinterpret_cast<void *>(First);
}

Error CUDAHostRegistryTy::unpin(void *HstPtr, size_t Size) {
  auto Addr = reinterpret_cast<uintptr_t>(HstPtr);
  std::unique_lock<std::shared_mutex> Guard(Lock);
  auto Pin = Pins.find({Addr, Size});
  if (Pin == Pins.end())
    return Error::success();
  // Forget the pin before calling the driver: if unregistering fails, the
  // caller may unpin again, and that must not release the pages twice.
  if (--Pin->second == 0)
    Pins.erase(Pin);
  uintptr_t Begin = Addr & ~(PageSize - 1);
  uintptr_t End = (Addr + Size + PageSize - 1) & ~(PageSize - 1);
  Error Err = release(Begin, End);
  HasChunks.store(!Chunks.empty(), std::memory_order_release);
  return Err;
}

size_t CUDAHostRegistryTy::contiguousBytes(const void *Ptr, size_t Size) const {
  // Acquire pairs with the release in pin(); a stale "false" only means a
  // copy that started before the pin finished, which cannot involve it.
  if (!HasChunks.load(std::memory_order_acquire))
    return Size;
  auto Addr = reinterpret_cast<uintptr_t>(Ptr);
  std::shared_lock<std::shared_mutex> Guard(Lock);
  auto It = Chunks.upper_bound(Addr);
  uintptr_t Limit;
  if (It != Chunks.begin() && std::prev(It)->second.End > Addr)
    Limit = std::prev(It)->second.End; // Inside a registration.
  else if (It != Chunks.end())
    Limit = It->first; // Unregistered, up to the next registration.
  else
    return Size;
  return std::min<size_t>(Size, Limit - Addr);
}

size_t CUDAHostRegistryTy::numRegistrations() const {
  std::shared_lock<std::shared_mutex> Guard(Lock);
  return Chunks.size();
}

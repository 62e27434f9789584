// SPDX-License-Identifier: Apache-2.0
#include "offloadio/PinnedMemoryMap.h"

#include <algorithm>
#include <iterator>
#include <mutex>

using namespace offloadio;

// Out of line so that the vtable has one home.
PinningOpsTy::~PinningOpsTy() = default;

namespace {

/// "[0x1000, 0x1010) (16 bytes)": every message names ranges this way so that
/// logs from different plugins read the same.
std::string formatRange(uintptr_t Start, uintptr_t End) {
  return llvm::formatv("[{0:x}, {1:x}) ({2} bytes)", Start, End, End - Start)
      .str();
}

/// Reject what no plugin can lock. The exclusive end must be representable,
/// because every comparison in the map is made against it.
Error checkRange(const char *What, const void *HstPtr, size_t Size) {
  uintptr_t Start = reinterpret_cast<uintptr_t>(HstPtr);
  if (!HstPtr)
    return makeError(ErrorCode::InvalidArgument,
                     "cannot {0} a null pointer ({1} bytes)", What, Size);
  if (Size == 0)
    return makeError(ErrorCode::InvalidArgument,
                     "cannot {0} {1:x}: the size is 0", What, Start);
  if (Size > UINTPTR_MAX - Start)
    return makeError(ErrorCode::InvalidArgument,
                     "cannot {0} {1:x} ({2} bytes): the range wraps around "
                     "the end of the address space",
                     What, Start, Size);
  return Error::success();
}

/// Prefix a backend error with what the map was doing, keeping its code and
/// errno so that the C boundary still reports the backend's cause.
Error addContext(Error Err, const std::string &Context) {
  ErrorCode Code = ErrorCode::Internal;
  int Errno = 0;
  std::string Msg;
  llvm::handleAllErrors(
      std::move(Err),
      [&](const OffloadErrorTy &E) {
        Code = E.getCode();
        Errno = E.getErrno();
        Msg = E.getMessage();
      },
      [&](const llvm::ErrorInfoBase &E) { Msg = E.message(); });
  if (Code == ErrorCode::Success)
    Code = ErrorCode::Internal;
  return llvm::make_error<OffloadErrorTy>(Code, Context + ": " + Msg, Errno);
}

/// The region containing \p Addr, or end(). Templated over constness so that
/// readers and writers share one search.
template <typename MapTy>
auto findContaining(MapTy &Regions, uintptr_t Addr)
    -> decltype(Regions.begin()) {
  auto It = Regions.upper_bound(Addr);
  if (It == Regions.begin())
    return Regions.end();
  --It;
  return Addr < It->second.End ? It : Regions.end();
}

/// The lowest region that [Start, End) intersects, or end(). Regions are
/// disjoint and sorted, so only two can qualify first: the last one starting
/// at or before Start (if it reaches past Start), else the first one starting
/// after Start (if it starts before End). Anything further right would start
/// after that one, so checking these two also catches a region that begins
/// inside the new range.
template <typename MapTy>
auto findIntersecting(MapTy &Regions, uintptr_t Start, uintptr_t End)
    -> decltype(Regions.begin()) {
  auto It = Regions.upper_bound(Start);
  if (It != Regions.begin()) {
    auto Prev = std::prev(It);
    if (Start < Prev->second.End)
      return Prev;
  }
  if (It != Regions.end() && It->first < End)
    return It;
  return Regions.end();
}

} // namespace

PinnedMemoryMapTy::PinnedMemoryMapTy(PinningOpsTy &Ops) : Ops(Ops) {}

PinnedMemoryMapTy::~PinnedMemoryMapTy() {
  // Nobody is left to report to; the process is usually exiting.
  llvm::consumeError(releaseAll());
}

PinnedRegionInfoTy
PinnedMemoryMapTy::toInfo(const RegionMapTy::value_type &Entry) {
  PinnedRegionInfoTy Info;
  Info.HstPtr = reinterpret_cast<void *>(Entry.first);
  Info.DevAccessiblePtr = Entry.second.DevAccessiblePtr;
  Info.Size = Entry.second.End - Entry.first;
  Info.References = Entry.second.References;
  Info.External = Entry.second.External;
  return Info;
}

Expected<void *> PinnedMemoryMapTy::lock(void *HstPtr, size_t Size,
                                         PinnedRegionInfoTy *Shared) {
  if (Error Err = checkRange("lock", HstPtr, Size))
    return Err;
  uintptr_t Start = reinterpret_cast<uintptr_t>(HstPtr);
  uintptr_t End = Start + Size;

  std::unique_lock<std::shared_mutex> Guard(Mutex);
  auto It = findIntersecting(Regions, Start, End);
  if (It != Regions.end()) {
    RegionTy &Region = It->second;
    // Regions are disjoint, so a containing region is the only one the range
    // can intersect, and findIntersecting has returned it.
    if (It->first <= Start && End <= Region.End) {
      if (Shared)
        *Shared = toInfo(*It);
      // A sub-buffer's lock is released at its own pointer, so remember
      // where it was taken.
      if (Start != It->first) {
        ++InteriorLocks[Start];
        ++Region.SubBufferLocks;
      }
      ++Region.References;
      return static_cast<char *>(Region.DevAccessiblePtr) + (Start - It->first);
    }
    return makeError(ErrorCode::Overlap,
                     "cannot lock {0}: it overlaps the {1} region {2} ({3} "
                     "references); extending or partially overlapping a "
                     "locked region is not allowed",
                     formatRange(Start, End),
                     Region.External ? "external" : "locked",
                     formatRange(It->first, Region.End), Region.References);
  }

  // Pin under the exclusive lock: a concurrent lock of the same or an
  // overlapping range must not pin it a second time, and no reader may see
  // the region before it is usable.
  Expected<void *> DevOrErr = Ops.pinHostMemory(HstPtr, Size);
  if (!DevOrErr)
    return addContext(DevOrErr.takeError(),
                      llvm::formatv("cannot lock {0}: pinning failed",
                                    formatRange(Start, End))
                          .str());
  if (!*DevOrErr) {
    // A null address would make segments() report the region as unlocked.
    llvm::consumeError(Ops.unpinHostMemory(HstPtr, nullptr, Size));
    return makeError(ErrorCode::BackendError,
                     "cannot lock {0}: the backend returned a null "
                     "device-accessible address",
                     formatRange(Start, End));
  }
  Regions.emplace_hint(It, Start, RegionTy{End, *DevOrErr, 1, 0, false});
  return *DevOrErr;
}

Error PinnedMemoryMapTy::unlock(void *HstPtr) {
  if (!HstPtr)
    return makeError(ErrorCode::InvalidArgument,
                     "cannot unlock a null pointer");
  uintptr_t Addr = reinterpret_cast<uintptr_t>(HstPtr);

  std::unique_lock<std::shared_mutex> Guard(Mutex);
  auto It = findContaining(Regions, Addr);
  if (It == Regions.end())
    return makeError(ErrorCode::NotFound,
                     "cannot unlock {0:x}: no locked region contains it", Addr);
  RegionTy &Region = It->second;
  if (Region.External && Region.References <= 1)
    return makeError(ErrorCode::NotFound,
                     "cannot unlock {0:x}: the external region {1} has no "
                     "user locks; release it with unregisterExternal",
                     Addr, formatRange(It->first, Region.End));
  // Only a pointer that a lock was taken at releases one: any other byte
  // of the region (a stray or offset pointer) would release a lock that
  // belongs to someone else, and the owner's own unlock would then fail.
  auto Interior = InteriorLocks.end();
  if (Addr != It->first) {
    Interior = InteriorLocks.find(Addr);
    if (Interior == InteriorLocks.end())
      return makeError(
          ErrorCode::NotFound,
          "cannot unlock {0:x}: it lies inside the {1} region {2} ({3} "
          "references), but no lock was taken there; unlock the pointer "
          "that was locked ({4:x} for the region itself)",
          Addr, Region.External ? "external" : "locked",
          formatRange(It->first, Region.End), Region.References, It->first);
  } else if (locksAtStart(Region) == 0) {
    return makeError(ErrorCode::NotFound,
                     "cannot unlock {0:x}: every lock taken there is "
                     "released; the {1} locks left on the region {2} are "
                     "locks of sub-buffers inside it, each released at its "
                     "own pointer",
                     Addr, Region.SubBufferLocks,
                     formatRange(It->first, Region.End));
  }
  // Called once the lock is certainly released.
  auto forgetInterior = [&] {
    if (Interior == InteriorLocks.end())
      return;
    --Region.SubBufferLocks;
    if (--Interior->second == 0)
      InteriorLocks.erase(Interior);
  };
  if (Region.References > 1) {
    forgetInterior();
    --Region.References;
    return Error::success();
  }

  // Unpin before erasing, still under the exclusive lock, so that a
  // concurrent lock of the same range cannot pin it while the backend still
  // has it pinned. On failure the region and its reference stay, so that the
  // map keeps describing what the backend holds.
  if (Error Err =
          Ops.unpinHostMemory(reinterpret_cast<void *>(It->first),
                              Region.DevAccessiblePtr, Region.End - It->first))
    return addContext(std::move(Err),
                      llvm::formatv("cannot unlock {0}: unpinning failed",
                                    formatRange(It->first, Region.End))
                          .str());
  forgetInterior();
  Regions.erase(It);
  return Error::success();
}

Error PinnedMemoryMapTy::registerExternal(void *HstPtr, void *DevAccessiblePtr,
                                          size_t Size) {
  if (Error Err = checkRange("register", HstPtr, Size))
    return Err;
  uintptr_t Start = reinterpret_cast<uintptr_t>(HstPtr);
  uintptr_t End = Start + Size;
  if (!DevAccessiblePtr)
    return makeError(ErrorCode::InvalidArgument,
                     "cannot register {0}: the device-accessible address is "
                     "null",
                     formatRange(Start, End));

  std::unique_lock<std::shared_mutex> Guard(Mutex);
  auto It = findIntersecting(Regions, Start, End);
  if (It != Regions.end())
    return makeError(
        ErrorCode::Overlap,
        "cannot register the external region {0}: it overlaps "
        "the {1} region {2} ({3} references)",
        formatRange(Start, End), It->second.External ? "external" : "locked",
        formatRange(It->first, It->second.End), It->second.References);
  Regions.emplace_hint(It, Start, RegionTy{End, DevAccessiblePtr, 1, 0, true});
  return Error::success();
}

Error PinnedMemoryMapTy::unregisterExternal(void *HstPtr) {
  if (!HstPtr)
    return makeError(ErrorCode::InvalidArgument,
                     "cannot unregister a null pointer");
  uintptr_t Start = reinterpret_cast<uintptr_t>(HstPtr);

  std::unique_lock<std::shared_mutex> Guard(Mutex);
  auto It = Regions.find(Start);
  if (It == Regions.end())
    return makeError(ErrorCode::NotFound,
                     "cannot unregister {0:x}: no external region starts "
                     "there",
                     Start);
  RegionTy &Region = It->second;
  if (!Region.External)
    return makeError(ErrorCode::NotFound,
                     "cannot unregister {0}: it is a locked region, not an "
                     "external one",
                     formatRange(Start, Region.End));
  if (Region.References > 1)
    return makeError(ErrorCode::Busy,
                     "cannot unregister the external region {0}: it still has "
                     "{1} user locks",
                     formatRange(Start, Region.End), Region.References - 1);
  Regions.erase(It);
  return Error::success();
}

Error PinnedMemoryMapTy::releaseAll() {
  std::unique_lock<std::shared_mutex> Guard(Mutex);
  Error Result = Error::success();
  for (const auto &[Start, Region] : Regions) {
    if (Region.External)
      continue;
    if (Error Err =
            Ops.unpinHostMemory(reinterpret_cast<void *>(Start),
                                Region.DevAccessiblePtr, Region.End - Start))
      Result = llvm::joinErrors(
          std::move(Result),
          addContext(std::move(Err),
                     llvm::formatv("cannot release {0} ({1} references): "
                                   "unpinning failed",
                                   formatRange(Start, Region.End),
                                   Region.References)
                         .str()));
  }
  // Keeping a region whose unpinning failed would only make the destructor
  // try again on a backend that already refused.
  Regions.clear();
  InteriorLocks.clear();
  return Result;
}

std::optional<PinnedRegionInfoTy>
PinnedMemoryMapTy::lookup(const void *Ptr) const {
  std::shared_lock<std::shared_mutex> Guard(Mutex);
  auto It = findContaining(Regions, reinterpret_cast<uintptr_t>(Ptr));
  if (It == Regions.end())
    return std::nullopt;
  return toInfo(*It);
}

size_t PinnedMemoryMapTy::segments(const void *HstPtr, size_t Size,
                                   PinnedSegmentTy *Segs,
                                   size_t MaxSegs) const {
  uintptr_t Cur = reinterpret_cast<uintptr_t>(HstPtr);
  if (Size == 0 || MaxSegs == 0 || !Segs || Size > UINTPTR_MAX - Cur)
    return 0;
  uintptr_t End = Cur + Size;

  std::shared_lock<std::shared_mutex> Guard(Mutex);
  // Position It on the region containing Cur if there is one, else on the
  // first region after Cur; from there the walk only moves right, so a range
  // inside one region costs this single search.
  auto It = Regions.upper_bound(Cur);
  if (It != Regions.begin() && Cur < std::prev(It)->second.End)
    --It;

  size_t N = 0;
  while (Cur < End && N < MaxSegs) {
    PinnedSegmentTy &Seg = Segs[N++];
    uintptr_t SegEnd;
    if (It != Regions.end() && It->first <= Cur) {
      SegEnd = std::min(End, It->second.End);
      Seg.DevAccessiblePtr =
          static_cast<char *>(It->second.DevAccessiblePtr) + (Cur - It->first);
      ++It;
    } else {
      SegEnd = It == Regions.end() ? End : std::min(End, It->first);
      Seg.DevAccessiblePtr = nullptr;
    }
    Seg.HstPtr = reinterpret_cast<const char *>(Cur);
    Seg.Size = SegEnd - Cur;
    Cur = SegEnd;
  }
  return N;
}

size_t PinnedMemoryMapTy::size() const {
  std::shared_lock<std::shared_mutex> Guard(Mutex);
  return Regions.size();
}

std::vector<PinnedRegionInfoTy> PinnedMemoryMapTy::snapshot() const {
  std::shared_lock<std::shared_mutex> Guard(Mutex);
  std::vector<PinnedRegionInfoTy> Result;
  Result.reserve(Regions.size());
  for (const auto &Entry : Regions)
    Result.push_back(toInfo(Entry));
  return Result;
}

void PinnedMemoryMapTy::dump(llvm::raw_ostream &OS) const {
  std::shared_lock<std::shared_mutex> Guard(Mutex);
  OS << llvm::formatv("pinned memory map: {0} regions\n", Regions.size());
  for (const auto &[Start, Region] : Regions)
    OS << llvm::formatv("  {0} -> {1:x}, {2} references ({3} of "
                        "sub-buffers){4}\n",
                        formatRange(Start, Region.End),
                        reinterpret_cast<uintptr_t>(Region.DevAccessiblePtr),
                        Region.References, Region.SubBufferLocks,
                        Region.External ? ", external" : "");
}

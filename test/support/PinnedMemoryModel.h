// SPDX-License-Identifier: Apache-2.0
//
// The reference model of PinnedMemoryMapTy's rules and a fake pinning
// backend, shared by the randomised unit test (test/unit) and the fuzzers
// (test/fuzz), so that both check the map against the same statement of its
// rules. Host addresses are never dereferenced here.
#ifndef OFFLOADIO_TEST_SUPPORT_PINNEDMEMORYMODEL_H
#define OFFLOADIO_TEST_SUPPORT_PINNEDMEMORYMODEL_H

#include "offloadio/Error.h"
#include "offloadio/PinnedMemoryMap.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <string>
#include <vector>

namespace offloadio {
namespace test {

/// The device address a translating backend gives [Start, Start+Size):
/// Start + DevOffset, unless that range would wrap around the end of the
/// address space (no real mapping does), in which case Start itself.
inline uintptr_t translatedAddress(uintptr_t Start, size_t Size,
                                   uintptr_t DevOffset) {
  if (DevOffset > UINTPTR_MAX - Start || Size > UINTPTR_MAX - Start - DevOffset)
    return Start;
  return Start + DevOffset;
}

/// A backend that pins nothing: it returns translatedAddress() as the device
/// address, records every call, and keeps the set of pinned ranges, flagging
/// any call a real backend would reject (a pin over a pinned range, an
/// unpin of a range that is not pinned or with the wrong address). Since an
/// unpinned range is forgotten, a second unpin of it is a violation too:
/// together with an empty Pinned at the end, every range is unpinned exactly
/// once.
class FakePinningOpsTy : public PinningOpsTy {
public:
  /// One backend call.
  struct CallTy {
    /// Pin (true) or unpin (false).
    bool IsPin;
    /// Host address passed.
    uintptr_t HstPtr;
    /// Device address passed (unpin only).
    uintptr_t DevPtr;
    /// Size passed.
    size_t Size;
  };

  /// Translate every pinned range by \p DevOffset (translatedAddress).
  explicit FakePinningOpsTy(uintptr_t DevOffset) : DevOffset(DevOffset) {}

  Expected<void *> pinHostMemory(void *HstPtr, size_t Size) override {
    uintptr_t Start = reinterpret_cast<uintptr_t>(HstPtr);
    Calls.push_back({true, Start, 0, Size});
    if (FailNextPin) {
      FailNextPin = false;
      return makeError(ErrorCode::BackendError, "fake pin of {0:x} failed",
                       Start);
    }
    auto It = Pinned.upper_bound(Start + Size - 1);
    if (It != Pinned.begin() &&
        std::prev(It)->first + std::prev(It)->second > Start)
      Violations.push_back(
          llvm::formatv("pin overlaps a pinned range at {0:x}", Start).str());
    Pinned[Start] = Size;
    if (NullNextPin) {
      NullNextPin = false;
      return nullptr;
    }
    return reinterpret_cast<void *>(translatedAddress(Start, Size, DevOffset));
  }

  Error unpinHostMemory(void *HstPtr, void *DevPtr, size_t Size) override {
    uintptr_t Start = reinterpret_cast<uintptr_t>(HstPtr);
    uintptr_t Dev = reinterpret_cast<uintptr_t>(DevPtr);
    Calls.push_back({false, Start, Dev, Size});
    if (FailNextUnpin) {
      FailNextUnpin = false;
      return makeError(ErrorCode::BackendError, "fake unpin of {0:x} failed",
                       Start);
    }
    auto It = Pinned.find(Start);
    if (It == Pinned.end() || It->second != Size)
      Violations.push_back(
          llvm::formatv("unpin of a range not pinned: [{0:x}, +{1})", Start,
                        Size)
              .str());
    else if (DevPtr && Dev != translatedAddress(Start, Size, DevOffset))
      Violations.push_back(
          llvm::formatv("unpin with the wrong device pointer at {0:x}", Start)
              .str());
    if (It != Pinned.end())
      Pinned.erase(It);
    return Error::success();
  }

  /// Pin calls so far, failed ones included.
  size_t numPins() const {
    return std::count_if(Calls.begin(), Calls.end(),
                         [](const CallTy &C) { return C.IsPin; });
  }
  /// Unpin calls so far, failed ones included.
  size_t numUnpins() const { return Calls.size() - numPins(); }

  /// How pinned ranges are translated.
  const uintptr_t DevOffset;
  /// Every call, in order.
  std::vector<CallTy> Calls;
  /// Pinned ranges: start -> size.
  std::map<uintptr_t, size_t> Pinned;
  /// What a real backend would have rejected.
  std::vector<std::string> Violations;
  /// Make the next pin fail without pinning.
  bool FailNextPin = false;
  /// Make the next unpin fail without unpinning.
  bool FailNextUnpin = false;
  /// Make the next pin pin, but report a null device address.
  bool NullNextPin = false;
};

/// The map's rules, written as plainly as possible: an unsorted vector
/// scanned from the front on every call. Locked regions get the device
/// address translatedAddress(Start, Size, DevOffset), as FakePinningOpsTy
/// (or, with DevOffset 0, a backend that does not translate) hands out.
class PinnedMemoryModelTy {
public:
  /// One region.
  struct RegionTy {
    /// First byte.
    uintptr_t Start;
    /// One past the last byte.
    uintptr_t End;
    /// Device address of Start.
    uintptr_t Dev;
    /// Outstanding locks; the registration of an external region counts.
    uint64_t References;
    /// Registered with registerExternal.
    bool External;
    /// The pointer each outstanding lock was taken at, one entry a lock
    /// (the registration of an external region has none).
    std::vector<uintptr_t> LockStarts;
  };

  /// New locked regions are translated by \p DevOffset.
  explicit PinnedMemoryModelTy(uintptr_t DevOffset) : DevOffset(DevOffset) {}

  /// A range the map accepts at all: not null, not empty, end representable.
  static bool validRange(uintptr_t Start, size_t Size) {
    return Start != 0 && Size != 0 && Size <= UINTPTR_MAX - Start;
  }

  /// Index of the region containing Addr, or -1.
  int containing(uintptr_t Addr) const {
    for (size_t I = 0; I < Regions.size(); ++I)
      if (Regions[I].Start <= Addr && Addr < Regions[I].End)
        return I;
    return -1;
  }

  /// Whether [Start, End) shares a byte with any region.
  bool intersectsAny(uintptr_t Start, uintptr_t End) const {
    for (const RegionTy &R : Regions)
      if (R.Start < End && Start < R.End)
        return true;
    return false;
  }

  /// lock(): returns the code, and the device address on success. With
  /// \p PinFails the backend is taken to refuse a new region.
  ErrorCode lock(uintptr_t Start, size_t Size, bool PinFails, uintptr_t &Dev) {
    if (!validRange(Start, Size))
      return ErrorCode::InvalidArgument;
    uintptr_t End = Start + Size;
    for (RegionTy &R : Regions) {
      if (R.Start <= Start && End <= R.End) {
        ++R.References;
        R.LockStarts.push_back(Start);
        Dev = R.Dev + (Start - R.Start);
        return ErrorCode::Success;
      }
    }
    if (intersectsAny(Start, End))
      return ErrorCode::Overlap;
    if (PinFails)
      return ErrorCode::BackendError;
    Dev = translatedAddress(Start, Size, DevOffset);
    Regions.push_back({Start, End, Dev, 1, false, {Start}});
    return ErrorCode::Success;
  }

  /// unlock(); with \p UnpinFails the backend refuses a last unpin. Only a
  /// pointer that an outstanding lock was taken at releases one.
  ErrorCode unlock(uintptr_t Addr, bool UnpinFails) {
    if (!Addr)
      return ErrorCode::InvalidArgument;
    int I = containing(Addr);
    if (I < 0)
      return ErrorCode::NotFound;
    RegionTy &R = Regions[I];
    auto Lock = std::find(R.LockStarts.begin(), R.LockStarts.end(), Addr);
    if (Lock == R.LockStarts.end())
      return ErrorCode::NotFound;
    if (R.References == 1) {
      if (UnpinFails)
        return ErrorCode::BackendError;
      Regions.erase(Regions.begin() + I);
      return ErrorCode::Success;
    }
    R.LockStarts.erase(Lock);
    --R.References;
    return ErrorCode::Success;
  }

  /// A pointer an outstanding lock of region \p I was taken at, or 0 if it
  /// has none.
  uintptr_t lockStart(size_t I, uint64_t Pick) const {
    const std::vector<uintptr_t> &Starts = Regions[I].LockStarts;
    return Starts.empty() ? 0 : Starts[Pick % Starts.size()];
  }

  /// registerExternal().
  ErrorCode registerExternal(uintptr_t Start, uintptr_t Dev, size_t Size) {
    if (!validRange(Start, Size) || !Dev)
      return ErrorCode::InvalidArgument;
    if (intersectsAny(Start, Start + Size))
      return ErrorCode::Overlap;
    Regions.push_back({Start, Start + Size, Dev, 1, true, {}});
    return ErrorCode::Success;
  }

  /// unregisterExternal().
  ErrorCode unregisterExternal(uintptr_t Start) {
    if (!Start)
      return ErrorCode::InvalidArgument;
    for (size_t I = 0; I < Regions.size(); ++I) {
      if (Regions[I].Start != Start)
        continue;
      if (!Regions[I].External)
        return ErrorCode::NotFound;
      if (Regions[I].References > 1)
        return ErrorCode::Busy;
      Regions.erase(Regions.begin() + I);
      return ErrorCode::Success;
    }
    return ErrorCode::NotFound;
  }

  /// releaseAll(), with a backend that unpins everything.
  void releaseAll() { Regions.clear(); }

  /// segments(), returned as a vector.
  std::vector<PinnedSegmentTy> segments(uintptr_t Start, size_t Size,
                                        size_t MaxSegs) const {
    std::vector<PinnedSegmentTy> Result;
    if (Size == 0 || MaxSegs == 0 || Size > UINTPTR_MAX - Start)
      return Result;
    uintptr_t Cur = Start, End = Start + Size;
    while (Cur < End && Result.size() < MaxSegs) {
      PinnedSegmentTy Seg;
      Seg.HstPtr = reinterpret_cast<const char *>(Cur);
      int I = containing(Cur);
      uintptr_t SegEnd = End;
      if (I >= 0) {
        SegEnd = std::min(End, Regions[I].End);
        Seg.DevAccessiblePtr =
            reinterpret_cast<void *>(Regions[I].Dev + (Cur - Regions[I].Start));
      } else {
        for (const RegionTy &R : Regions)
          if (R.Start > Cur && R.Start < SegEnd)
            SegEnd = R.Start;
      }
      Seg.Size = SegEnd - Cur;
      Result.push_back(Seg);
      Cur = SegEnd;
    }
    return Result;
  }

  /// How many bytes of [Start, Start+Size) lie in some region.
  size_t lockedBytes(uintptr_t Start, size_t Size) const {
    if (Size > UINTPTR_MAX - Start)
      return 0;
    size_t Bytes = 0;
    for (const RegionTy &R : Regions) {
      uintptr_t Lo = std::max(Start, R.Start);
      uintptr_t Hi = std::min(Start + Size, R.End);
      if (Lo < Hi)
        Bytes += Hi - Lo;
    }
    return Bytes;
  }

  /// The ranges a backend should hold pinned: start -> size of every
  /// region that is not external.
  std::map<uintptr_t, size_t> pinned() const {
    std::map<uintptr_t, size_t> Result;
    for (const RegionTy &R : Regions)
      if (!R.External)
        Result[R.Start] = R.End - R.Start;
    return Result;
  }

  /// The regions sorted by start, as PinnedMemoryMapTy::snapshot() lists
  /// them.
  std::vector<RegionTy> sorted() const {
    std::vector<RegionTy> Result = Regions;
    std::sort(
        Result.begin(), Result.end(),
        [](const RegionTy &A, const RegionTy &B) { return A.Start < B.Start; });
    return Result;
  }

  /// How new locked regions are translated.
  const uintptr_t DevOffset;
  /// The regions, in no particular order.
  std::vector<RegionTy> Regions;
};

} // namespace test
} // namespace offloadio

#endif // OFFLOADIO_TEST_SUPPORT_PINNEDMEMORYMODEL_H

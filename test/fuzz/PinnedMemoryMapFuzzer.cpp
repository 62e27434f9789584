// SPDX-License-Identifier: Apache-2.0
//
// Fuzzes PinnedMemoryMapTy against the reference model the unit test uses
// (test/support/PinnedMemoryModel.h). The input is decoded into up to
// MaxOps operations: locks of new ranges and of sub-buffers, unlocks by start
// or interior pointer, lookups, segment walks, external registrations,
// releaseAll, with addresses near existing regions, in a dense low arena, at
// the top of the address space, null, or raw; and sizes of 0, up to a
// region's end and a little past it, up to the end of the address space and
// past it, near SIZE_MAX, or raw. Backend failures (pin refused, null device
// address, unpin refused) are injected on demand.
//
// After every operation the map must agree with the model: the same result
// and device address, the same regions with the same reference counts, the
// backend holding exactly the model's locked ranges, and no backend call
// where none is due. At the end the map is released or destroyed, and every
// range the fake backend pinned must have been unpinned exactly once.
#include "offloadio/PinnedMemoryMap.h"

#include "FuzzCheck.h"
#include "PinnedMemoryModel.h"

#include "llvm/Support/raw_ostream.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

using namespace offloadio;
using offloadio::test::codeOf;

namespace {

/// Device addresses are host addresses plus this, so that a map returning
/// the host pointer where a device one is due gets caught.
constexpr uintptr_t DevAlias = 0x100000000000;
/// External registrations use another alias, so that their addresses cannot
/// pass for what the fake backend would have returned.
constexpr uintptr_t ExtAlias = 0x200000000000;
/// Most ranges fall in a small arena here, so that they collide often.
constexpr uintptr_t ArenaBase = 0x10000;
/// Operations per input. Every check compares whole region lists, so this
/// bounds the cost of an input at a few hundred thousand steps.
constexpr size_t MaxOps = 256;

void *ptr(uintptr_t Addr) { return reinterpret_cast<void *>(Addr); }
uintptr_t addr(const void *Ptr) { return reinterpret_cast<uintptr_t>(Ptr); }

/// One input's run: a map over a fake backend, the model, and the decoder.
class MapFuzzerTy {
public:
  MapFuzzerTy(const uint8_t *Data, size_t Size)
      : Input(Data, Size), Ops(DevAlias), Model(DevAlias) {
    Map.emplace(Ops);
  }

  void run();

private:
  uintptr_t pickAddr();
  size_t pickSize(uintptr_t Start);

  void lock(uintptr_t Start, size_t Size);
  void lockSubBuffer();
  void unlock(uintptr_t Addr);
  void lookup(uintptr_t Addr);
  void segments(uintptr_t Start, size_t Size);
  void registerExternal(uintptr_t Start, size_t Size);
  void unregisterExternal(uintptr_t Start);
  void releaseAll();
  void dump();

  /// The map, its backend and the model describe the same regions.
  void checkState(unsigned Op);
  /// Release or destroy the map; every pin must have been undone once.
  void finish();

  FuzzedDataProvider Input;
  test::FakePinningOpsTy Ops;
  /// Optional so that finish() can destroy it before the last checks.
  std::optional<PinnedMemoryMapTy> Map;
  test::PinnedMemoryModelTy Model;
};

uintptr_t MapFuzzerTy::pickAddr() {
  switch (Input.ConsumeIntegralInRange<unsigned>(0, 7)) {
  case 0:
  case 1:
  case 2:
    return pickNearRegion(Input, Model.Regions, ArenaBase);
  case 3:
    return ArenaBase + Input.ConsumeIntegral<uint16_t>();
  case 4:
    return ArenaBase + Input.ConsumeIntegral<uint8_t>();
  case 5:
    return UINTPTR_MAX - Input.ConsumeIntegral<uint16_t>();
  case 6:
    return Input.ConsumeIntegralInRange<uintptr_t>(0, 64);
  default:
    return Input.ConsumeIntegral<uintptr_t>();
  }
}

size_t MapFuzzerTy::pickSize(uintptr_t Start) {
  switch (Input.ConsumeIntegralInRange<unsigned>(0, 6)) {
  case 0:
    return 1 + Input.ConsumeIntegral<uint8_t>();
  case 1: {
    // To the end of the containing region, or a little short or past it.
    int I = Model.containing(Start);
    size_t Room = I >= 0 ? Model.Regions[I].End - Start
                         : 1 + Input.ConsumeIntegral<uint8_t>();
    return Room + size_t(Input.ConsumeIntegralInRange<int>(-2, 2));
  }
  case 2:
    return SIZE_MAX - Input.ConsumeIntegral<uint8_t>();
  case 3:
    // Exactly to the top of the address space, or wrapping past it.
    return (UINTPTR_MAX - Start) +
           size_t(Input.ConsumeIntegralInRange<int>(-1, 2));
  case 4:
    return 0;
  case 5:
    return Input.ConsumeIntegral<uint16_t>();
  default:
    return Input.ConsumeIntegral<size_t>();
  }
}

void MapFuzzerTy::lock(uintptr_t Start, size_t Size) {
  uint8_t Fault = Input.ConsumeIntegral<uint8_t>();
  bool FailPin = Fault < 16;
  bool NullPin = Fault >= 16 && Fault < 24;
  size_t CallsBefore = Ops.Calls.size();
  size_t RegionsBefore = Model.Regions.size();
  uintptr_t WantDev = 0;
  ErrorCode Want = Model.lock(Start, Size, FailPin || NullPin, WantDev);

  Ops.FailNextPin = FailPin;
  Ops.NullNextPin = NullPin;
  Expected<void *> Got = Map->lock(ptr(Start), Size);
  // Unused when the range was shared or refused; must not leak into the
  // next pin.
  Ops.FailNextPin = Ops.NullNextPin = false;
  uintptr_t GotDev = Got ? addr(*Got) : 0;
  ErrorCode GotCode = Got ? ErrorCode::Success : codeOf(Got.takeError());
  OFFLOADIO_FUZZ_CHECK(GotCode == Want,
                       "lock [{0:x}, +{1:x}): map says '{2}', model '{3}'",
                       Start, Size, describe(GotCode), describe(Want));
  OFFLOADIO_FUZZ_CHECK(GotDev == (Want == ErrorCode::Success ? WantDev : 0),
                       "lock [{0:x}, +{1:x}): device address {2:x}, model "
                       "{3:x}",
                       Start, Size, GotDev, WantDev);

  // A new region is pinned once; a refused pin was tried once; a null
  // address was pinned and unpinned at once; a shared or refused range
  // never reaches the backend.
  size_t WantCalls = 0;
  if (Want == ErrorCode::Success && Model.Regions.size() > RegionsBefore)
    WantCalls = 1;
  else if (Want == ErrorCode::BackendError)
    WantCalls = FailPin ? 1 : 2;
  OFFLOADIO_FUZZ_CHECK(Ops.Calls.size() - CallsBefore == WantCalls,
                       "lock [{0:x}, +{1:x}) ('{2}'): {3} backend calls, "
                       "expected {4}",
                       Start, Size, describe(Want),
                       Ops.Calls.size() - CallsBefore, WantCalls);
}

void MapFuzzerTy::lockSubBuffer() {
  if (Model.Regions.empty())
    return lock(pickAddr(), pickSize(0));
  const auto &R = Model.Regions[Input.ConsumeIntegralInRange<size_t>(
      0, Model.Regions.size() - 1)];
  uintptr_t Offset =
      Input.ConsumeIntegralInRange<uintptr_t>(0, R.End - R.Start - 1);
  size_t Size =
      Input.ConsumeIntegralInRange<size_t>(1, R.End - R.Start - Offset);
  lock(R.Start + Offset, Size);
}

void MapFuzzerTy::unlock(uintptr_t Addr) {
  bool FailUnpin = Input.ConsumeIntegral<uint8_t>() < 16;
  size_t CallsBefore = Ops.Calls.size();
  size_t RegionsBefore = Model.Regions.size();
  ErrorCode Want = Model.unlock(Addr, FailUnpin);

  Ops.FailNextUnpin = FailUnpin;
  ErrorCode Got = codeOf(Map->unlock(ptr(Addr)));
  Ops.FailNextUnpin = false;
  OFFLOADIO_FUZZ_CHECK(Got == Want, "unlock {0:x}: map says '{1}', model '{2}'",
                       Addr, describe(Got), describe(Want));
  // Only the last reference reaches the backend, once.
  bool Last =
      Model.Regions.size() < RegionsBefore || Want == ErrorCode::BackendError;
  OFFLOADIO_FUZZ_CHECK(Ops.Calls.size() - CallsBefore == size_t(Last),
                       "unlock {0:x} ('{1}'): {2} backend calls", Addr,
                       describe(Want), Ops.Calls.size() - CallsBefore);
}

void MapFuzzerTy::lookup(uintptr_t Addr) {
  int I = Model.containing(Addr);
  std::optional<PinnedRegionInfoTy> Info = Map->lookup(ptr(Addr));
  OFFLOADIO_FUZZ_CHECK(Info.has_value() == (I >= 0),
                       "lookup {0:x}: map found {1}, model {2}", Addr,
                       Info.has_value(), I >= 0);
  if (!Info)
    return;
  const auto &R = Model.Regions[I];
  OFFLOADIO_FUZZ_CHECK(
      addr(Info->HstPtr) == R.Start && Info->Size == R.End - R.Start &&
          addr(Info->DevAccessiblePtr) == R.Dev &&
          Info->References == R.References && Info->External == R.External,
      "lookup {0:x}: map [{1:x}, +{2:x}) dev {3:x} refs {4} "
      "ext {5}; model [{6:x}, {7:x}) dev {8:x} refs {9} ext "
      "{10}",
      Addr, addr(Info->HstPtr), Info->Size, addr(Info->DevAccessiblePtr),
      Info->References, Info->External, R.Start, R.End, R.Dev, R.References,
      R.External);
}

void MapFuzzerTy::segments(uintptr_t Start, size_t Size) {
  size_t MaxSegs = Input.ConsumeIntegralInRange<size_t>(0, 9);
  if (MaxSegs > 0 && Input.ConsumeIntegral<uint8_t>() < 8) {
    // No output array: nothing may be written.
    size_t N = Map->segments(ptr(Start), Size, nullptr, MaxSegs);
    OFFLOADIO_FUZZ_CHECK(N == 0, "segments into null: {0}", N);
    return;
  }
  // Exactly MaxSegs elements on the heap, so that ASan sees a write past
  // the end.
  std::vector<PinnedSegmentTy> Got(MaxSegs);
  size_t N = Map->segments(ptr(Start), Size, Got.data(), MaxSegs);
  std::vector<PinnedSegmentTy> Want = Model.segments(Start, Size, MaxSegs);
  OFFLOADIO_FUZZ_CHECK(N == Want.size(),
                       "segments [{0:x}, +{1:x}) max {2}: map {3}, model {4}",
                       Start, Size, MaxSegs, N, Want.size());
  for (size_t I = 0; I < N; ++I)
    OFFLOADIO_FUZZ_CHECK(
        Got[I].HstPtr == Want[I].HstPtr && Got[I].Size == Want[I].Size &&
            Got[I].DevAccessiblePtr == Want[I].DevAccessiblePtr,
        "segments [{0:x}, +{1:x}) #{2}: map {3:x} +{4:x} dev "
        "{5:x}; model {6:x} +{7:x} dev {8:x}",
        Start, Size, I, addr(Got[I].HstPtr), Got[I].Size,
        addr(Got[I].DevAccessiblePtr), addr(Want[I].HstPtr), Want[I].Size,
        addr(Want[I].DevAccessiblePtr));
}

void MapFuzzerTy::registerExternal(uintptr_t Start, size_t Size) {
  // Runtime-pinned memory has a device range that does not wrap either.
  uintptr_t Dev = Input.ConsumeIntegral<uint8_t>() < 8
                      ? 0
                      : test::translatedAddress(Start, Size, ExtAlias);
  size_t CallsBefore = Ops.Calls.size();
  ErrorCode Want = Model.registerExternal(Start, Dev, Size);
  ErrorCode Got = codeOf(Map->registerExternal(ptr(Start), ptr(Dev), Size));
  OFFLOADIO_FUZZ_CHECK(Got == Want,
                       "register [{0:x}, +{1:x}) dev {2:x}: map says '{3}', "
                       "model '{4}'",
                       Start, Size, Dev, describe(Got), describe(Want));
  OFFLOADIO_FUZZ_CHECK(Ops.Calls.size() == CallsBefore,
                       "register [{0:x}, +{1:x}) called the backend", Start,
                       Size);
}

void MapFuzzerTy::unregisterExternal(uintptr_t Start) {
  size_t CallsBefore = Ops.Calls.size();
  ErrorCode Want = Model.unregisterExternal(Start);
  ErrorCode Got = codeOf(Map->unregisterExternal(ptr(Start)));
  OFFLOADIO_FUZZ_CHECK(Got == Want,
                       "unregister {0:x}: map says '{1}', model '{2}'", Start,
                       describe(Got), describe(Want));
  OFFLOADIO_FUZZ_CHECK(Ops.Calls.size() == CallsBefore,
                       "unregister {0:x} called the backend", Start);
}

void MapFuzzerTy::releaseAll() {
  size_t Pinned = Model.pinned().size();
  size_t CallsBefore = Ops.Calls.size();
  ErrorCode Got = codeOf(Map->releaseAll());
  Model.releaseAll();
  OFFLOADIO_FUZZ_CHECK(Got == ErrorCode::Success, "releaseAll: '{0}'",
                       describe(Got));
  OFFLOADIO_FUZZ_CHECK(Ops.Calls.size() - CallsBefore == Pinned,
                       "releaseAll: {0} unpins for {1} locked regions",
                       Ops.Calls.size() - CallsBefore, Pinned);
}

void MapFuzzerTy::dump() {
  llvm::raw_null_ostream OS;
  Map->dump(OS);
}

void MapFuzzerTy::checkState(unsigned Op) {
  OFFLOADIO_FUZZ_CHECK(Ops.Violations.empty(), "after op {0}: {1}", Op,
                       Ops.Violations.empty() ? "" : Ops.Violations.front());
  OFFLOADIO_FUZZ_CHECK(Ops.Pinned == Model.pinned(),
                       "after op {0}: the backend holds {1} ranges pinned, the "
                       "model {2}",
                       Op, Ops.Pinned.size(), Model.pinned().size());
  OFFLOADIO_FUZZ_CHECK(Map->size() == Model.Regions.size(),
                       "after op {0}: {1} regions, model {2}", Op, Map->size(),
                       Model.Regions.size());
  std::vector<PinnedRegionInfoTy> Snap = Map->snapshot();
  std::vector<test::PinnedMemoryModelTy::RegionTy> Want = Model.sorted();
  OFFLOADIO_FUZZ_CHECK(Snap.size() == Want.size(),
                       "after op {0}: snapshot of {1} regions, model {2}", Op,
                       Snap.size(), Want.size());
  for (size_t I = 0; I < Snap.size(); ++I)
    OFFLOADIO_FUZZ_CHECK(addr(Snap[I].HstPtr) == Want[I].Start &&
                             Snap[I].Size == Want[I].End - Want[I].Start &&
                             addr(Snap[I].DevAccessiblePtr) == Want[I].Dev &&
                             Snap[I].References == Want[I].References &&
                             Snap[I].External == Want[I].External,
                         "after op {0}: region #{1} is {2:x} +{3:x} refs {4}; "
                         "model {5:x} +{6:x} refs {7}",
                         Op, I, addr(Snap[I].HstPtr), Snap[I].Size,
                         Snap[I].References, Want[I].Start,
                         Want[I].End - Want[I].Start, Want[I].References);
}

void MapFuzzerTy::finish() {
  // Either way, every region still locked must be unpinned exactly once.
  if (Input.ConsumeBool())
    releaseAll();
  Map.reset();
  OFFLOADIO_FUZZ_CHECK(Ops.Violations.empty(), "at the end: {0}",
                       Ops.Violations.empty() ? "" : Ops.Violations.front());
  OFFLOADIO_FUZZ_CHECK(Ops.Pinned.empty(),
                       "at the end: {0} ranges were never unpinned, the first "
                       "at {1:x}",
                       Ops.Pinned.size(),
                       Ops.Pinned.empty() ? 0 : Ops.Pinned.begin()->first);
}

void MapFuzzerTy::run() {
  for (size_t Step = 0; Step < MaxOps && Input.remaining_bytes() > 1; ++Step) {
    unsigned Op = Input.ConsumeIntegralInRange<unsigned>(0, 10);
    switch (Op) {
    case 0:
    case 1: {
      uintptr_t Start = pickAddr();
      lock(Start, pickSize(Start));
      break;
    }
    case 2:
      lockSubBuffer();
      break;
    case 3:
    case 4:
      unlock(pickAddr());
      break;
    case 5:
      lookup(pickAddr());
      break;
    case 6: {
      uintptr_t Start = pickAddr();
      segments(Start, pickSize(Start));
      break;
    }
    case 7: {
      uintptr_t Start = pickAddr();
      registerExternal(Start, pickSize(Start));
      break;
    }
    case 8:
      unregisterExternal(pickAddr());
      break;
    case 9:
      // Rare: it empties the map that the other operations build up.
      if (Input.ConsumeIntegral<uint8_t>() < 16)
        releaseAll();
      break;
    default:
      dump();
      break;
    }
    checkState(Op);
  }
  finish();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  MapFuzzerTy(Data, Size).run();
  return 0;
}

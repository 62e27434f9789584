// SPDX-License-Identifier: Apache-2.0
//
// Sixteen threads lock, unlock, look up and split ranges of one shared map:
// each on its own private regions (whose every answer is predictable), on
// long-lived shared regions (whose answers are predictable up to other
// threads' reference counts), and on one contended range that all of them
// create and destroy. Run it under ThreadSanitizer: the fake backend keeps
// plain, unsynchronised state, so any backend call the map makes outside its
// exclusive lock is reported as a race.
#include "offloadio/PinnedMemoryMap.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace offloadio;

namespace {

constexpr uintptr_t DevAlias = 0x100000000000;
constexpr uintptr_t ExtAlias = 0x200000000000;

constexpr unsigned NumThreads = 16;
constexpr unsigned OpsPerThread = 50000;

// Each thread owns a window of slots; a slot holds at most one region, which
// starts at the slot's start and is at most half a slot long.
constexpr uintptr_t PrivateBase = 0x100000000;
constexpr uintptr_t WindowSize = 0x100000;
constexpr unsigned SlotsPerThread = 16;
constexpr uintptr_t SlotSize = WindowSize / SlotsPerThread;

// Shared regions are locked before the threads start and released after
// they finish; the gaps between them are never locked.
constexpr uintptr_t SharedBase = 0x200000000;
constexpr unsigned NumShared = 4;
constexpr uintptr_t SharedSize = 0x10000;
constexpr uintptr_t SharedStride = 0x20000;
constexpr uintptr_t ExternalStart = SharedBase + NumShared * SharedStride;

// Every thread locks and unlocks exactly this range, so it is pinned and
// unpinned over and over by whichever thread comes first and last.
constexpr uintptr_t ContendedStart = 0x300000000;
constexpr uintptr_t ContendedSize = 0x1000;

void *ptr(uintptr_t Addr) { return reinterpret_cast<void *>(Addr); }
uintptr_t addr(const void *Ptr) { return reinterpret_cast<uintptr_t>(Ptr); }
std::string hex(uintptr_t Addr) { return llvm::formatv("{0:x}", Addr).str(); }

/// Deliberately unsynchronised: the map promises to serialise backend calls.
class FakeOpsTy final : public PinningOpsTy {
public:
  Expected<void *> pinHostMemory(void *HstPtr, size_t Size) override {
    ++NumPins;
    uintptr_t Start = addr(HstPtr);
    auto It = Pinned.upper_bound(Start + Size - 1);
    if (It != Pinned.begin() &&
        std::prev(It)->first + std::prev(It)->second > Start)
      Violations.push_back("pin overlaps a pinned range at " + hex(Start));
    Pinned[Start] = Size;
    return ptr(Start + DevAlias);
  }

  Error unpinHostMemory(void *HstPtr, void *DevPtr, size_t Size) override {
    ++NumUnpins;
    auto It = Pinned.find(addr(HstPtr));
    if (It == Pinned.end() || It->second != Size ||
        addr(DevPtr) != addr(HstPtr) + DevAlias)
      Violations.push_back("bad unpin at " + hex(addr(HstPtr)));
    else
      Pinned.erase(It);
    return Error::success();
  }

  uint64_t NumPins = 0;
  uint64_t NumUnpins = 0;
  std::map<uintptr_t, size_t> Pinned;
  std::vector<std::string> Violations;
};

/// Failures seen by one thread; only the first message is kept, so that a
/// broken map does not flood the log with a hundred thousand lines.
struct ResultTy {
  uint64_t Failures = 0;
  std::string First;

  void fail(int Line, const std::string &Msg) {
    if (Failures++ == 0)
      First = "line " + std::to_string(Line) + ": " + Msg;
  }
};

// The message is only built when the check fails.
#define STRESS_CHECK(Cond, Msg)                                                \
  do {                                                                         \
    if (!(Cond))                                                               \
      Result.fail(__LINE__, std::string(#Cond) + ": " + (Msg));                \
  } while (false)

/// Start all threads at once, so that the operations really interleave.
class StartLineTy {
public:
  void wait() {
    std::unique_lock<std::mutex> Guard(Mutex);
    CV.wait(Guard, [&] { return Open; });
  }
  void open() {
    {
      std::lock_guard<std::mutex> Guard(Mutex);
      Open = true;
    }
    CV.notify_all();
  }

private:
  std::mutex Mutex;
  std::condition_variable CV;
  bool Open = false;
};

class WorkerTy {
public:
  WorkerTy(PinnedMemoryMapTy &Map, unsigned Index, ResultTy &Result)
      : Map(Map), Result(Result), Rng(Index + 1),
        Window(PrivateBase + Index * WindowSize) {}

  void run() {
    for (unsigned Op = 0; Op < OpsPerThread; ++Op) {
      unsigned Kind = below(100);
      if (Kind < 25)
        lockPrivate();
      else if (Kind < 45)
        unlockPrivate();
      else if (Kind < 55)
        lookupPrivate();
      else if (Kind < 65)
        segmentsPrivate();
      else if (Kind < 75)
        lockShared();
      else if (Kind < 83)
        unlockShared();
      else if (Kind < 89)
        querySharedRegion();
      else if (Kind < 95)
        lockOrUnlockContended();
      else if (Kind < 98)
        lookupContended();
      else
        checkSnapshot();
    }
    releaseAll();
  }

private:
  struct SlotTy {
    size_t Len = 0;
    /// Start of each outstanding lock; the region exists while non-empty.
    std::vector<uintptr_t> Held;
  };

  uint64_t below(uint64_t N) { return Rng() % N; }
  uintptr_t slotStart(unsigned Slot) const { return Window + Slot * SlotSize; }

  template <typename T> T popRandom(std::vector<T> &Vec) {
    size_t I = below(Vec.size());
    T Val = Vec[I];
    Vec[I] = Vec.back();
    Vec.pop_back();
    return Val;
  }

  void lockPrivate() {
    unsigned Slot = below(SlotsPerThread);
    SlotTy &S = Slots[Slot];
    uintptr_t Start = slotStart(Slot);
    if (S.Held.empty()) {
      S.Len = 1 + below(SlotSize / 2);
      Expected<void *> DevOrErr = Map.lock(ptr(Start), S.Len);
      STRESS_CHECK(DevOrErr, takeErrorMessage(DevOrErr.takeError()));
      if (!DevOrErr)
        return;
      STRESS_CHECK(addr(*DevOrErr) == Start + DevAlias, hex(Start));
      S.Held.push_back(Start);
      return;
    }
    if (below(8) == 0) {
      // Extending the region by one byte must be refused.
      Expected<void *> DevOrErr = Map.lock(ptr(Start), S.Len + 1);
      ErrorCode Code =
          DevOrErr ? ErrorCode::Success : takeErrorCode(DevOrErr.takeError());
      STRESS_CHECK(Code == ErrorCode::Overlap, hex(Start));
      return;
    }
    uintptr_t Offset = below(S.Len);
    size_t Len = 1 + below(S.Len - Offset);
    Expected<void *> DevOrErr = Map.lock(ptr(Start + Offset), Len);
    STRESS_CHECK(DevOrErr, takeErrorMessage(DevOrErr.takeError()));
    if (!DevOrErr)
      return;
    STRESS_CHECK(addr(*DevOrErr) == Start + Offset + DevAlias,
                 hex(Start + Offset));
    S.Held.push_back(Start + Offset);
  }

  void unlockPrivate() {
    unsigned Slot = below(SlotsPerThread);
    SlotTy &S = Slots[Slot];
    if (S.Held.empty()) {
      uintptr_t Addr = slotStart(Slot) + below(SlotSize);
      ErrorCode Code = takeErrorCode(Map.unlock(ptr(Addr)));
      STRESS_CHECK(Code == ErrorCode::NotFound, hex(Addr));
      return;
    }
    if (below(4) == 0) {
      // A byte of the region no lock was taken at releases nothing.
      uintptr_t Addr = slotStart(Slot) + below(S.Len);
      if (std::find(S.Held.begin(), S.Held.end(), Addr) == S.Held.end()) {
        ErrorCode Code = takeErrorCode(Map.unlock(ptr(Addr)));
        STRESS_CHECK(Code == ErrorCode::NotFound, hex(Addr));
        std::optional<PinnedRegionInfoTy> Info = Map.lookup(ptr(Addr));
        STRESS_CHECK(Info && Info->References == S.Held.size(), hex(Addr));
        return;
      }
    }
    uintptr_t Addr = popRandom(S.Held);
    Error Err = Map.unlock(ptr(Addr));
    STRESS_CHECK(!Err, takeErrorMessage(std::move(Err)));
    llvm::consumeError(std::move(Err));
  }

  void lookupPrivate() {
    unsigned Slot = below(SlotsPerThread);
    const SlotTy &S = Slots[Slot];
    uintptr_t Addr = slotStart(Slot) + below(SlotSize);
    std::optional<PinnedRegionInfoTy> Info = Map.lookup(ptr(Addr));
    bool Inside = !S.Held.empty() && Addr < slotStart(Slot) + S.Len;
    STRESS_CHECK(Info.has_value() == Inside, hex(Addr));
    if (!Info || !Inside)
      return;
    STRESS_CHECK(addr(Info->HstPtr) == slotStart(Slot), hex(Addr));
    STRESS_CHECK(Info->Size == S.Len, hex(Addr));
    STRESS_CHECK(addr(Info->DevAccessiblePtr) == slotStart(Slot) + DevAlias,
                 hex(Addr));
    STRESS_CHECK(Info->References == S.Held.size(), hex(Addr));
    STRESS_CHECK(!Info->External, hex(Addr));
  }

  void segmentsPrivate() {
    unsigned First = below(SlotsPerThread);
    unsigned Last = std::min<unsigned>(SlotsPerThread - 1, First + below(3));
    uintptr_t Lo = slotStart(First) + below(SlotSize);
    uintptr_t Hi = slotStart(Last) + 1 + below(SlotSize);
    if (Hi <= Lo)
      Hi = Lo + 1;

    // What this thread's slots say the answer is. Regions are at most half
    // a slot long, so two are never adjacent and every unlocked stretch
    // between them is one segment.
    std::vector<PinnedSegmentTy> Want;
    uintptr_t Cur = Lo;
    for (unsigned Slot = First; Slot <= Last; ++Slot) {
      if (Slots[Slot].Held.empty())
        continue;
      uintptr_t RegStart = slotStart(Slot);
      uintptr_t RegEnd = RegStart + Slots[Slot].Len;
      if (RegStart >= Hi)
        break;
      if (RegEnd <= Cur)
        continue;
      if (Cur < RegStart) {
        Want.push_back(
            {reinterpret_cast<const char *>(Cur), RegStart - Cur, nullptr});
        Cur = RegStart;
      }
      uintptr_t End = std::min(Hi, RegEnd);
      Want.push_back({reinterpret_cast<const char *>(Cur), End - Cur,
                      ptr(Cur + DevAlias)});
      Cur = End;
    }
    if (Cur < Hi)
      Want.push_back({reinterpret_cast<const char *>(Cur), Hi - Cur, nullptr});

    PinnedSegmentTy Got[16];
    size_t N = Map.segments(ptr(Lo), Hi - Lo, Got, 16);
    STRESS_CHECK(N == Want.size(), hex(Lo) + " " + std::to_string(N) + " vs " +
                                       std::to_string(Want.size()));
    for (size_t I = 0; I < std::min(N, Want.size()); ++I) {
      STRESS_CHECK(Got[I].HstPtr == Want[I].HstPtr, std::to_string(I));
      STRESS_CHECK(Got[I].Size == Want[I].Size, std::to_string(I));
      STRESS_CHECK(Got[I].DevAccessiblePtr == Want[I].DevAccessiblePtr,
                   std::to_string(I));
    }
  }

  /// Shared region I for I < NumShared, the external one for I == NumShared.
  static uintptr_t sharedStart(unsigned I) {
    return I < NumShared ? SharedBase + I * SharedStride : ExternalStart;
  }
  static uintptr_t sharedDev(unsigned I) {
    return sharedStart(I) + (I < NumShared ? DevAlias : ExtAlias);
  }

  void lockShared() {
    unsigned I = below(NumShared + 1);
    uintptr_t Start = sharedStart(I);
    if (below(8) == 0) {
      // Straddling the end is refused whoever else holds the region.
      Expected<void *> DevOrErr = Map.lock(ptr(Start + SharedSize - 8), 16);
      ErrorCode Code =
          DevOrErr ? ErrorCode::Success : takeErrorCode(DevOrErr.takeError());
      STRESS_CHECK(Code == ErrorCode::Overlap, hex(Start));
      return;
    }
    uintptr_t Offset = below(SharedSize);
    size_t Len = 1 + below(SharedSize - Offset);
    Expected<void *> DevOrErr = Map.lock(ptr(Start + Offset), Len);
    STRESS_CHECK(DevOrErr, takeErrorMessage(DevOrErr.takeError()));
    if (!DevOrErr)
      return;
    STRESS_CHECK(addr(*DevOrErr) == sharedDev(I) + Offset, hex(Start + Offset));
    SharedHeld[I].push_back(Start + Offset);
  }

  void unlockShared() {
    unsigned I = below(NumShared + 1);
    if (SharedHeld[I].empty())
      return;
    Error Err = Map.unlock(ptr(popRandom(SharedHeld[I])));
    STRESS_CHECK(!Err, takeErrorMessage(std::move(Err)));
    llvm::consumeError(std::move(Err));
  }

  void querySharedRegion() {
    unsigned I = below(NumShared + 1);
    uintptr_t Start = sharedStart(I);
    uintptr_t Offset = below(SharedSize);
    std::optional<PinnedRegionInfoTy> Info = Map.lookup(ptr(Start + Offset));
    STRESS_CHECK(Info, hex(Start + Offset));
    if (Info) {
      STRESS_CHECK(addr(Info->HstPtr) == Start, hex(Start));
      STRESS_CHECK(Info->Size == SharedSize, hex(Start));
      STRESS_CHECK(addr(Info->DevAccessiblePtr) == sharedDev(I), hex(Start));
      STRESS_CHECK(Info->External == (I == NumShared), hex(Start));
      // Other threads move the count, but never below what is held here.
      STRESS_CHECK(Info->References >= 1 + SharedHeld[I].size(), hex(Start));
    }

    // From inside the region into the never-locked gap after it.
    size_t Len = 1 + below(2 * SharedSize - Offset);
    PinnedSegmentTy Got[4];
    size_t N = Map.segments(ptr(Start + Offset), Len, Got, 4);
    bool Spills = Offset + Len > SharedSize;
    STRESS_CHECK(N == (Spills ? 2u : 1u), hex(Start + Offset));
    if (N >= 1) {
      STRESS_CHECK(addr(Got[0].HstPtr) == Start + Offset, hex(Start));
      STRESS_CHECK(Got[0].Size == std::min(Len, SharedSize - Offset),
                   hex(Start));
      STRESS_CHECK(addr(Got[0].DevAccessiblePtr) == sharedDev(I) + Offset,
                   hex(Start));
    }
    if (N == 2) {
      STRESS_CHECK(addr(Got[1].HstPtr) == Start + SharedSize, hex(Start));
      STRESS_CHECK(Got[1].Size == Offset + Len - SharedSize, hex(Start));
      STRESS_CHECK(!Got[1].DevAccessiblePtr, hex(Start));
    }
  }

  void lockOrUnlockContended() {
    if (ContendedHeld && below(2)) {
      --ContendedHeld;
      Error Err = Map.unlock(ptr(ContendedStart));
      STRESS_CHECK(!Err, takeErrorMessage(std::move(Err)));
      llvm::consumeError(std::move(Err));
      return;
    }
    Expected<void *> DevOrErr = Map.lock(ptr(ContendedStart), ContendedSize);
    STRESS_CHECK(DevOrErr, takeErrorMessage(DevOrErr.takeError()));
    if (!DevOrErr)
      return;
    STRESS_CHECK(addr(*DevOrErr) == ContendedStart + DevAlias, "contended");
    ++ContendedHeld;
  }

  void lookupContended() {
    std::optional<PinnedRegionInfoTy> Info =
        Map.lookup(ptr(ContendedStart + below(ContendedSize)));
    if (ContendedHeld)
      STRESS_CHECK(Info, "contended region vanished while held");
    if (!Info)
      return;
    STRESS_CHECK(addr(Info->HstPtr) == ContendedStart, "contended");
    STRESS_CHECK(Info->Size == ContendedSize, "contended");
    STRESS_CHECK(addr(Info->DevAccessiblePtr) == ContendedStart + DevAlias,
                 "contended");
    STRESS_CHECK(Info->References >= std::max<uint64_t>(1, ContendedHeld),
                 "contended");
  }

  /// Whatever moment the snapshot catches, it is sorted and disjoint.
  void checkSnapshot() {
    std::vector<PinnedRegionInfoTy> Snap = Map.snapshot();
    for (size_t I = 0; I < Snap.size(); ++I) {
      STRESS_CHECK(Snap[I].Size > 0 && Snap[I].References > 0,
                   hex(addr(Snap[I].HstPtr)));
      if (I > 0)
        STRESS_CHECK(addr(Snap[I - 1].HstPtr) + Snap[I - 1].Size <=
                         addr(Snap[I].HstPtr),
                     hex(addr(Snap[I].HstPtr)));
    }
  }

  void releaseAll() {
    auto release = [&](uintptr_t Addr) {
      Error Err = Map.unlock(ptr(Addr));
      STRESS_CHECK(!Err, takeErrorMessage(std::move(Err)));
      llvm::consumeError(std::move(Err));
    };
    for (SlotTy &S : Slots)
      for (uintptr_t Addr : S.Held)
        release(Addr);
    for (std::vector<uintptr_t> &Held : SharedHeld)
      for (uintptr_t Addr : Held)
        release(Addr);
    for (; ContendedHeld; --ContendedHeld)
      release(ContendedStart);
  }

  PinnedMemoryMapTy &Map;
  ResultTy &Result;
  std::mt19937_64 Rng;
  uintptr_t Window;
  SlotTy Slots[SlotsPerThread];
  std::vector<uintptr_t> SharedHeld[NumShared + 1];
  uint64_t ContendedHeld = 0;
};

TEST(PinnedMemoryMapStressTest, ConcurrentLockUnlockLookupSegments) {
  FakeOpsTy Ops;
  PinnedMemoryMapTy Map(Ops);
  for (unsigned I = 0; I < NumShared; ++I) {
    Expected<void *> DevOrErr =
        Map.lock(ptr(SharedBase + I * SharedStride), SharedSize);
    ASSERT_TRUE(bool(DevOrErr)) << takeErrorMessage(DevOrErr.takeError());
  }
  ASSERT_FALSE(Map.registerExternal(ptr(ExternalStart),
                                    ptr(ExternalStart + ExtAlias), SharedSize));

  std::vector<ResultTy> Results(NumThreads);
  StartLineTy StartLine;
  std::vector<std::thread> Threads;
  for (unsigned T = 0; T < NumThreads; ++T)
    Threads.emplace_back([&, T] {
      WorkerTy Worker(Map, T, Results[T]);
      StartLine.wait();
      Worker.run();
    });
  StartLine.open();
  for (std::thread &Thread : Threads)
    Thread.join();

  for (unsigned T = 0; T < NumThreads; ++T)
    EXPECT_EQ(Results[T].Failures, 0u)
        << "thread " << T << ", first failure: " << Results[T].First;

  // Only the regions set up here remain, with their original counts.
  std::vector<PinnedRegionInfoTy> Snap = Map.snapshot();
  ASSERT_EQ(Snap.size(), NumShared + 1);
  for (const PinnedRegionInfoTy &Info : Snap)
    EXPECT_EQ(Info.References, 1u) << hex(addr(Info.HstPtr));

  for (unsigned I = 0; I < NumShared; ++I)
    EXPECT_FALSE(Map.unlock(ptr(SharedBase + I * SharedStride)));
  EXPECT_FALSE(Map.unregisterExternal(ptr(ExternalStart)));
  EXPECT_EQ(Map.size(), 0u);

  // Every pin was undone exactly once, and none collided.
  EXPECT_EQ(Ops.NumPins, Ops.NumUnpins);
  EXPECT_GT(Ops.NumPins, uint64_t(NumShared + NumThreads));
  EXPECT_TRUE(Ops.Pinned.empty());
  EXPECT_TRUE(Ops.Violations.empty()) << Ops.Violations.front();
}

} // namespace

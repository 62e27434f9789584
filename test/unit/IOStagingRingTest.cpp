// SPDX-License-Identifier: Apache-2.0
//
// IOStagingRingTy against a fake IODeviceTy: the ring waits only for the
// buffer it wraps onto, and only while that buffer's copy is in flight;
// buffers are aligned, grow once for larger chunks, and survive allocation
// failures partway. The device's profile times exactly those waits.
#include "offloadio/io/IOStagingRing.h"
#include "offloadio/Profile.h"
#include "offloadio/io/IODevice.h"

#include "ProfileOutput.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace offloadio;

namespace {

/// An event that counts the waits for it.
class CountingEventTy final : public EventTy {
public:
  Error synchronize() override {
    ++Waits;
    return Error::success();
  }
  Expected<bool> query() override { return true; }
  unsigned Waits = 0;
};

/// A stream that does nothing but count its synchronisations.
class IdleStreamTy final : public StreamTy {
public:
  Error copyAsync(void *, const void *, size_t, CopyKindTy) override {
    return Error::success();
  }
  Error recordEvent(EventTy &) override { return Error::success(); }
  Error waitEvent(EventTy &) override { return Error::success(); }
  Error hostCallback(HostCallbackTy Fn, void *Data) override {
    return Fn(Data);
  }
  Error synchronize() override {
    ++Syncs;
    return Error::success();
  }
  Expected<bool> query() override { return true; }
  unsigned Syncs = 0;
};

/// Pinned memory from malloc, events that count waits, allocations that can
/// fail after a number of successes.
class FakeIODeviceTy final : public IODeviceTy {
public:
  /// \p BudgetCap: the pinned budget the ring reserves its buffers in.
  explicit FakeIODeviceTy(uint64_t BudgetCap = 1ULL << 40)
      : Budget(BudgetCap) {}
  ~FakeIODeviceTy() override {
    for (auto &[Ptr, Size] : Live)
      std::free(Ptr);
  }
  int32_t getDeviceId() const override { return 0; }
  std::string getPluginName() const override { return "fake"; }
  bool hostCanAccessDeviceMemory() const override { return true; }
  bool ownsPointer(const void *, AllocKindTy *) const override { return false; }
  size_t bytesAvailableFrom(const void *) const override { return SIZE_MAX; }
  IOBusyMemoryTy &getIOBusyMemory() override { std::abort(); }
  Expected<void *> allocatePinnedHost(size_t Size) override {
    if (AllocsLeft == 0)
      return makeError(ErrorCode::OutOfResources, "fake: no pinned memory");
    if (AllocsLeft > 0)
      --AllocsLeft;
    // Deliberately misaligned, so that the ring's rounding is exercised.
    char *P = static_cast<char *>(std::malloc(Size + 64)) + 16;
    Live[P - 16] = Size;
    Sizes.push_back(Size);
    return static_cast<void *>(P);
  }
  Error freePinnedHost(void *Ptr) override {
    char *Base = static_cast<char *>(Ptr) - 16;
    EXPECT_EQ(Live.count(Base), 1u);
    Live.erase(Base);
    std::free(Base);
    return Error::success();
  }
  PinnedBudgetTy &getPinnedBudget() override { return Budget; }
  Expected<StreamTy *> acquireStream() override { return &Stream; }
  void releaseStream(StreamTy *) override {}
  Expected<EventTy *> acquireEvent() override {
    Events.push_back(std::make_unique<CountingEventTy>());
    ++EventsOut;
    return Events.back().get();
  }
  void releaseEvent(EventTy *) override { --EventsOut; }
  TimeProfileTy *getProfile() override { return &Profile; }

  TimeProfileTy Profile{true};
  int AllocsLeft = -1; ///< Negative: no limit.
  PinnedBudgetTy Budget;
  std::map<void *, size_t> Live;
  std::vector<size_t> Sizes;
  std::vector<std::unique_ptr<CountingEventTy>> Events;
  int EventsOut = 0;
  IdleStreamTy Stream;
};

unsigned waitsOf(IOStagingSlotTy *Slot) {
  return static_cast<CountingEventTy *>(Slot->Event)->Waits;
}

TEST(IOStagingRingTest, WrapWaitsOnlyForTheBufferItReuses) {
  FakeIODeviceTy Device;
  IOStagingRingTy Ring(Device, 3, 4096);
  ASSERT_FALSE(bool(Ring.reserve(4096, Device.Stream)));
  ASSERT_EQ(Ring.size(), 3u);
  std::vector<IOStagingSlotTy *> Seen;
  // One lap: three buffers, all put in flight, nobody waits.
  for (int I = 0; I < 3; ++I) {
    auto Slot = Ring.next();
    ASSERT_TRUE(bool(Slot));
    EXPECT_EQ(reinterpret_cast<uintptr_t>((*Slot)->Buffer) %
                  IOStagingRingTy::BufferAlign,
              0u);
    EXPECT_EQ(waitsOf(*Slot), 0u);
    (*Slot)->InFlight = true;
    Seen.push_back(*Slot);
  }
  EXPECT_NE(Seen[0], Seen[1]);
  EXPECT_NE(Seen[1], Seen[2]);
  // The wrap waits for the first buffer, and only for it.
  auto Slot = Ring.next();
  ASSERT_TRUE(bool(Slot));
  EXPECT_EQ(*Slot, Seen[0]);
  EXPECT_EQ(waitsOf(Seen[0]), 1u);
  EXPECT_EQ(waitsOf(Seen[1]), 0u);
  EXPECT_EQ(waitsOf(Seen[2]), 0u);
  // A buffer not put back in flight (a read at end of file) is not waited
  // for on the next lap.
  Slot = Ring.next();
  EXPECT_EQ(*Slot, Seen[1]);
  EXPECT_EQ(waitsOf(Seen[1]), 1u);
  Slot = Ring.next();
  EXPECT_EQ(*Slot, Seen[2]);
  Slot = Ring.next();
  EXPECT_EQ(*Slot, Seen[0]);
  EXPECT_EQ(waitsOf(Seen[0]), 1u);
  // Once the stream is synchronised nothing is in flight.
  for (IOStagingSlotTy *S : Seen)
    S->InFlight = true;
  Ring.retireAll();
  for (int I = 0; I < 3; ++I)
    ASSERT_TRUE(bool(Ring.next()));
  for (IOStagingSlotTy *S : Seen)
    EXPECT_LE(waitsOf(S), 1u);
  EXPECT_EQ(Device.Stream.Syncs, 0u);
}

TEST(IOStagingRingTest, RandomUseWaitsExactlyWhenAModelSaysSo) {
  // Model: per buffer, whether a copy is in flight; the ring must wait on
  // next() exactly when the buffer it hands out is in flight.
  std::mt19937 Rng(7);
  for (unsigned Depth : {1u, 2u, 5u}) {
    FakeIODeviceTy Device;
    IOStagingRingTy Ring(Device, Depth, 4096);
    ASSERT_FALSE(bool(Ring.reserve(4096, Device.Stream)));
    std::map<IOStagingSlotTy *, bool> InFlight;
    std::map<IOStagingSlotTy *, unsigned> Waits;
    for (int Step = 0; Step < 2000; ++Step) {
      if (Rng() % 50 == 0) {
        Ring.retireAll();
        for (auto &[S, F] : InFlight)
          F = false;
        continue;
      }
      auto Slot = Ring.next();
      ASSERT_TRUE(bool(Slot));
      bool Expect = InFlight[*Slot];
      Waits[*Slot] += Expect;
      EXPECT_EQ(waitsOf(*Slot), Waits[*Slot]) << "step " << Step;
      bool Copy = Rng() % 4 != 0;
      (*Slot)->InFlight = Copy;
      InFlight[*Slot] = Copy;
    }
    EXPECT_EQ(InFlight.size(), Depth);
    unsigned AllWaits = 0;
    for (auto &[S, N] : Waits)
      AllWaits += N;
    EXPECT_GT(AllWaits, 0u);
    EXPECT_EQ(
        profileCalls(printedProfile(Device.Profile))[ProfileStage::FileDmaWait],
        AllWaits)
        << "depth " << Depth;
  }
}

TEST(IOStagingRingTest, GrowsOnceForLargerChunksAfterTheStreamIsIdle) {
  FakeIODeviceTy Device;
  IOStagingRingTy Ring(Device, 2, 8192);
  ASSERT_FALSE(bool(Ring.reserve(4096, Device.Stream)));
  EXPECT_EQ(Ring.slotSize(), 8192u) << "at least the minimum";
  EXPECT_EQ(Device.Stream.Syncs, 0u);
  ASSERT_FALSE(bool(Ring.reserve(8192, Device.Stream)));
  EXPECT_EQ(Device.Sizes.size(), 2u) << "no regrowth for what fits";
  ASSERT_FALSE(bool(Ring.reserve(1 << 20, Device.Stream)));
  EXPECT_EQ(Device.Stream.Syncs, 1u);
  EXPECT_EQ(Ring.slotSize(), size_t(1) << 20);
  EXPECT_EQ(Device.Live.size(), 2u);
  EXPECT_EQ(Device.EventsOut, 2);
  // Smaller chunks keep the large buffers.
  ASSERT_FALSE(bool(Ring.reserve(4096, Device.Stream)));
  EXPECT_EQ(Device.Sizes.size(), 4u);
  ASSERT_FALSE(bool(Ring.clear()));
  EXPECT_TRUE(Device.Live.empty());
  EXPECT_EQ(Device.EventsOut, 0);
}

TEST(IOStagingRingTest, AllocationFailurePartwayKeepsWhatItHasAndRetries) {
  FakeIODeviceTy Device;
  Device.AllocsLeft = 2;
  {
    IOStagingRingTy Ring(Device, 4, 4096);
    Error Err = Ring.reserve(4096, Device.Stream);
    ASSERT_TRUE(bool(Err));
    llvm::consumeError(std::move(Err));
    EXPECT_EQ(Ring.size(), 2u);
    Device.AllocsLeft = -1;
    ASSERT_FALSE(bool(Ring.reserve(4096, Device.Stream)));
    EXPECT_EQ(Ring.size(), 4u);
  }
  EXPECT_TRUE(Device.Live.empty()) << "the ring frees its buffers";
  EXPECT_EQ(Device.EventsOut, 0);
}

TEST(IOStagingRingTest, TheBudgetShrinksTheRingAndRefusesAnEmptyOne) {
  constexpr size_t Slot = 4096 + IOStagingRingTy::BufferAlign;
  // Room for two of four buffers: the ring works with two, and each holds
  // its bytes in the budget until the ring frees it.
  FakeIODeviceTy Device(2 * Slot);
  {
    IOStagingRingTy Ring(Device, 4, 4096);
    ASSERT_FALSE(bool(Ring.reserve(4096, Device.Stream)));
    EXPECT_EQ(Ring.size(), 2u);
    EXPECT_EQ(Device.Budget.getStats().Used, 2 * Slot);
    auto A = Ring.next(), B = Ring.next(), C = Ring.next();
    ASSERT_TRUE(A && B && C);
    EXPECT_EQ(*A, *C) << "two buffers used round robin";
    // The budget is full now: an empty ring fails and names it.
    IOStagingRingTy Empty(Device, 2, 4096);
    Error Err = Empty.reserve(4096, Device.Stream);
    ASSERT_TRUE(bool(Err));
    std::string Msg = takeErrorMessage(std::move(Err));
    EXPECT_NE(Msg.find("a file-engine staging buffer of device 0"),
              std::string::npos)
        << Msg;
    EXPECT_NE(Msg.find("OFFLOADIO_PINNED_MAX"), std::string::npos) << Msg;
    EXPECT_EQ(Empty.size(), 0u);
  }
  EXPECT_EQ(Device.Budget.getStats().Used, 0u);
  EXPECT_TRUE(Device.Live.empty());
}

} // namespace

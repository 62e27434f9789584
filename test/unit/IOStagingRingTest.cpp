// SPDX-License-Identifier: Apache-2.0
//
// IOStagingRingTy against a fake IODeviceTy: the ring waits only for the
// buffer it wraps onto, and only while that buffer's copy is in flight;
// it grows to its depth only while its buffers are in flight; buffers are
// aligned, as large as the transfer asks, replaced once for larger ones,
// and survive allocation failures partway. The pinned budget shrinks the
// ring, gives an empty ring a smaller buffer, and takes idle rings' buffers
// back for another holder, never a busy ring's. The device's profile times
// exactly the waits.
#include "offloadio/io/IOStagingRing.h"
#include "offloadio/Profile.h"
#include "offloadio/io/IODevice.h"

#include "FakeStreams.h"
#include "ProfileOutput.h"

#include "gtest/gtest.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace offloadio;
using offloadio::unittest::CompletedEventTy;
using offloadio::unittest::ImmediateStreamTy;

namespace {

/// Pinned memory from malloc, events that count waits, allocations that can
/// fail after a number of successes. An IODeviceTy of its own, not the
/// GenericDeviceTy of FakeDevice.h: the ring sees exactly what it asks for
/// (misaligned buffers included) and nothing of a device's pools.
class FakeIODeviceTy final : public IODeviceTy, public PinnedAllocatorTy {
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
  std::optional<AllocationInfoTy> findAllocation(const void *) const override {
    return std::nullopt;
  }
  size_t bytesAvailableFrom(const void *) const override { return SIZE_MAX; }
  IOBusyMemoryTy &getIOBusyMemory() override { std::abort(); }
  Expected<void *> allocatePinned(size_t Size) override {
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
  Error freePinned(void *Ptr, size_t) override {
    char *Base = static_cast<char *>(Ptr) - 16;
    EXPECT_EQ(Live.count(Base), 1u);
    Live.erase(Base);
    std::free(Base);
    return Error::success();
  }
  PinnedPoolTy &getPinnedPool() override { return Pool; }
  Expected<StreamTy *> acquireStream() override { return &Stream; }
  void releaseStream(StreamTy *) override {}
  Expected<EventTy *> acquireEvent() override {
    Events.push_back(std::make_unique<CompletedEventTy>());
    ++EventsOut;
    return Events.back().get();
  }
  void releaseEvent(EventTy *) override { --EventsOut; }
  TimeProfileTy *getProfile() override { return &Profile; }

  TimeProfileTy Profile{true};
  int AllocsLeft = -1; ///< Negative: no limit.
  PinnedBudgetTy Budget;
  PinnedPoolTy Pool{Budget, *this};
  std::map<void *, size_t> Live;
  std::vector<size_t> Sizes;
  std::vector<std::unique_ptr<CompletedEventTy>> Events;
  int EventsOut = 0;
  ImmediateStreamTy Stream;
};

unsigned waitsOf(IOStagingSlotTy *Slot) {
  return static_cast<CompletedEventTy *>(Slot->Event)->Waits.load();
}

/// A copy now runs from \p Slot.
void putInFlight(IOStagingSlotTy *Slot) { Slot->InFlight = true; }

TEST(IOStagingRingTest, WrapWaitsOnlyForTheBufferItReuses) {
  FakeIODeviceTy Device;
  IOStagingRingTy Ring(Device, 3);
  EXPECT_EQ(Ring.size(), 0u) << "buffers come with the first transfer";
  std::vector<IOStagingSlotTy *> Seen;
  // One lap: each buffer is in flight when the next is asked for, so the
  // ring grows to its depth; nobody waits.
  for (int I = 0; I < 3; ++I) {
    auto Slot = Ring.next(4096);
    ASSERT_TRUE(bool(Slot));
    EXPECT_EQ(reinterpret_cast<uintptr_t>((*Slot)->Buffer) %
                  IOStagingRingTy::BufferAlign,
              0u);
    EXPECT_EQ((*Slot)->Size, 4096u);
    EXPECT_EQ(waitsOf(*Slot), 0u);
    putInFlight(*Slot);
    Seen.push_back(*Slot);
  }
  EXPECT_EQ(Ring.size(), 3u);
  EXPECT_NE(Seen[0], Seen[1]);
  EXPECT_NE(Seen[1], Seen[2]);
  // The wrap waits for the first buffer, and only for it.
  auto Slot = Ring.next(4096);
  ASSERT_TRUE(bool(Slot));
  EXPECT_EQ(*Slot, Seen[0]);
  EXPECT_EQ(waitsOf(Seen[0]), 1u);
  EXPECT_EQ(waitsOf(Seen[1]), 0u);
  EXPECT_EQ(waitsOf(Seen[2]), 0u);
  // A buffer not put back in flight (a read at end of file) is not waited
  // for on the next lap.
  Slot = Ring.next(4096);
  EXPECT_EQ(*Slot, Seen[1]);
  EXPECT_EQ(waitsOf(Seen[1]), 1u);
  Slot = Ring.next(4096);
  EXPECT_EQ(*Slot, Seen[2]);
  Slot = Ring.next(4096);
  EXPECT_EQ(*Slot, Seen[0]);
  EXPECT_EQ(waitsOf(Seen[0]), 1u);
  // Once the stream is synchronised nothing is in flight.
  for (IOStagingSlotTy *S : Seen)
    putInFlight(S);
  Ring.retireAll();
  for (int I = 0; I < 3; ++I)
    ASSERT_TRUE(bool(Ring.next(4096)));
  for (IOStagingSlotTy *S : Seen)
    EXPECT_LE(waitsOf(S), 1u);
  EXPECT_EQ(Device.Stream.Syncs.load(), 0u);
  EXPECT_EQ(Device.Sizes.size(), 3u) << "no buffer allocated twice";
}

TEST(IOStagingRingTest, RandomUseWaitsExactlyWhenAModelSaysSo) {
  // Model: the buffers in their order of use and, per buffer, whether a
  // copy is in flight. next() adds a buffer before the next one while that
  // one is in flight and the ring is below its depth; otherwise it hands
  // out the next one, waiting exactly when that one is in flight.
  std::mt19937 Rng(7);
  for (unsigned Depth : {1u, 2u, 5u}) {
    FakeIODeviceTy Device;
    IOStagingRingTy Ring(Device, Depth);
    std::vector<IOStagingSlotTy *> Order;
    size_t Next = 0;
    std::map<IOStagingSlotTy *, bool> InFlight;
    std::map<IOStagingSlotTy *, unsigned> Waits;
    for (int Step = 0; Step < 2000; ++Step) {
      if (Rng() % 50 == 0) {
        Ring.retireAll();
        for (auto &[S, F] : InFlight)
          F = false;
        continue;
      }
      auto Slot = Ring.next(4096);
      ASSERT_TRUE(bool(Slot));
      if (Order.empty() || (Order.size() < Depth && InFlight[Order[Next]])) {
        ASSERT_EQ(InFlight.count(*Slot), 0u) << "a new buffer, step " << Step;
        Order.insert(Order.begin() + Next, *Slot);
      } else {
        ASSERT_EQ(*Slot, Order[Next]) << "step " << Step;
        Waits[*Slot] += InFlight[*Slot];
      }
      Next = (Next + 1) % Order.size();
      EXPECT_EQ(waitsOf(*Slot), Waits[*Slot]) << "step " << Step;
      bool Copy = Rng() % 4 != 0;
      (*Slot)->InFlight = Copy;
      InFlight[*Slot] = Copy;
    }
    EXPECT_EQ(Ring.size(), Depth);
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

TEST(IOStagingRingTest, BuffersAreAsLargeAsTheTransferAsks) {
  FakeIODeviceTy Device;
  IOStagingRingTy Ring(Device, 2);
  // Rounded up to whole pages, and no more: a page of slack for alignment.
  auto Slot = Ring.next(1000);
  ASSERT_TRUE(bool(Slot));
  EXPECT_EQ((*Slot)->Size, 4096u);
  EXPECT_EQ(Device.Sizes.back(), 2 * IOStagingRingTy::BufferAlign);
  EXPECT_EQ(Device.Budget.getStats().Used, 2 * IOStagingRingTy::BufferAlign);
  // A larger transfer replaces the buffer once; its copy is waited for
  // first, and only its copy.
  putInFlight(*Slot);
  Slot = Ring.next(3 << 20);
  ASSERT_TRUE(bool(Slot));
  EXPECT_EQ(Ring.size(), 2u) << "a second buffer beside the one in flight";
  EXPECT_EQ((*Slot)->Size, size_t(3) << 20);
  putInFlight(*Slot);
  IOStagingSlotTy *Small = *Ring.next(3 << 20);
  EXPECT_EQ(Small->Size, size_t(3) << 20) << "the small one was replaced";
  EXPECT_EQ(Device.Stream.Syncs.load(), 0u);
  EXPECT_EQ(Device.Live.size(), 2u);
  EXPECT_EQ(Device.EventsOut, 2);
  // Smaller transfers use the large buffers: nothing is allocated again.
  size_t Allocations = Device.Sizes.size();
  for (int I = 0; I < 5; ++I)
    ASSERT_TRUE(bool(Ring.next(4096)));
  EXPECT_EQ(Device.Sizes.size(), Allocations);
  EXPECT_EQ(Ring.bytes(), size_t(6) << 20);
  ASSERT_FALSE(bool(Ring.clear()));
  EXPECT_TRUE(Device.Live.empty());
  EXPECT_EQ(Device.EventsOut, 0);
  EXPECT_EQ(Device.Budget.getStats().Used, 0u);
}

TEST(IOStagingRingTest, AllocationFailurePartwayKeepsWhatItHasAndRetries) {
  FakeIODeviceTy Device;
  Device.AllocsLeft = 2;
  {
    IOStagingRingTy Ring(Device, 4);
    for (int I = 0; I < 2; ++I)
      putInFlight(*Ring.next(4096));
    // The third buffer's allocation fails: the error is the caller's.
    auto Failed = Ring.next(4096);
    ASSERT_FALSE(bool(Failed));
    llvm::consumeError(Failed.takeError());
    EXPECT_EQ(Ring.size(), 2u);
    EXPECT_EQ(Device.Budget.getStats().Used,
              2 * (4096 + IOStagingRingTy::BufferAlign))
        << "the failed buffer's reservation is given back";
    Device.AllocsLeft = -1;
    for (int I = 0; I < 4; ++I)
      putInFlight(*Ring.next(4096));
    EXPECT_EQ(Ring.size(), 4u);
  }
  EXPECT_TRUE(Device.Live.empty()) << "the ring frees its buffers";
  EXPECT_EQ(Device.EventsOut, 0);
}

TEST(IOStagingRingTest, TheBudgetShrinksTheRingAndRefusesAnEmptyOne) {
  constexpr size_t Slot = 4096 + IOStagingRingTy::BufferAlign;
  // Room for four buffers; a ring adds buffers beyond its first only while
  // a quarter of the budget stays free: it works with three, and each
  // holds its bytes in the budget until the ring frees it.
  FakeIODeviceTy Device(4 * Slot);
  {
    IOStagingRingTy Ring(Device, 4);
    std::vector<IOStagingSlotTy *> Seen;
    for (int I = 0; I < 3; ++I) {
      auto S = Ring.next(4096);
      ASSERT_TRUE(bool(S));
      putInFlight(*S);
      Seen.push_back(*S);
    }
    auto Wrap = Ring.next(4096);
    ASSERT_TRUE(bool(Wrap));
    EXPECT_EQ(Ring.size(), 3u);
    EXPECT_EQ(*Wrap, Seen[0]) << "three buffers used round robin";
    EXPECT_EQ(waitsOf(Seen[0]), 1u);
    EXPECT_EQ(Device.Budget.getStats().Used, 3 * Slot);
    for (int I = 0; I < 10; ++I)
      putInFlight(*Ring.next(4096));
    EXPECT_EQ(Ring.size(), 3u);
    EXPECT_EQ(Device.Budget.getStats().Refusals, 0u);
    // The budget is full now, and what fills it does not come back by
    // itself (not a busy ring's): an empty ring fails and names the
    // budget. The idle ring's buffers went to that other holder.
    Ring.retireAll();
    Ring.markIdle();
    auto Hog = Device.Budget.reserve(4 * Slot, "something else");
    ASSERT_TRUE(bool(Hog)) << takeErrorMessage(Hog.takeError());
    EXPECT_EQ(Ring.size(), 0u);
    IOStagingRingTy Empty(Device, 2);
    auto Refused = Empty.next(4096);
    ASSERT_FALSE(bool(Refused));
    std::string Msg = takeErrorMessage(Refused.takeError());
    EXPECT_NE(Msg.find("a file-engine staging buffer of device 0"),
              std::string::npos)
        << Msg;
    EXPECT_NE(Msg.find("OFFLOADIO_PINNED_MAX"), std::string::npos) << Msg;
    EXPECT_EQ(Empty.size(), 0u);
  }
  EXPECT_EQ(Device.Budget.getStats().Used, 0u);
  EXPECT_TRUE(Device.Live.empty());
}

TEST(IOStagingRingTest, AnEmptyRingTakesASmallerBufferWhenTheBudgetIsShort) {
  constexpr size_t Cap = 300 << 10;
  FakeIODeviceTy Device(Cap);
  IOStagingRingTy Ring(Device, 2);
  auto Slot = Ring.next(1 << 20);
  ASSERT_TRUE(bool(Slot)) << takeErrorMessage(Slot.takeError());
  size_t Size = (*Slot)->Size;
  EXPECT_LT(Size, size_t(1) << 20);
  EXPECT_GE(Size, IOStagingRingTy::MinFallbackSize);
  EXPECT_EQ(Size % IOStagingRingTy::BufferAlign, 0u);
  // Half of the room: others find room too.
  EXPECT_LE(Device.Budget.getStats().Used, Cap / 2);
  // Not even the smallest buffer: refused.
  FakeIODeviceTy Tiny(IOStagingRingTy::MinFallbackSize);
  IOStagingRingTy None(Tiny, 2);
  auto Refused = None.next(1 << 20);
  ASSERT_FALSE(bool(Refused));
  EXPECT_EQ(takeErrorDetails(Refused.takeError()).Code,
            ErrorCode::OutOfResources);
  // What fits whole is taken whole.
  FakeIODeviceTy Small(Cap);
  IOStagingRingTy Fits(Small, 2);
  auto Whole = Fits.next(200 << 10);
  ASSERT_TRUE(bool(Whole));
  EXPECT_EQ((*Whole)->Size, size_t(200) << 10);
}

TEST(IOStagingRingTest, IdleRingsGiveTheirBuffersToAnotherHolder) {
  constexpr size_t Slot = (64 << 10) + IOStagingRingTy::BufferAlign;
  FakeIODeviceTy Device(Slot);
  IOStagingRingTy A(Device, 2), B(Device, 2);
  ASSERT_TRUE(bool(A.next(64 << 10)));
  EXPECT_EQ(A.busyBytes(), Slot);
  EXPECT_EQ(A.reclaimIdle(), 0u) << "a busy ring gives nothing";
  // Idle, A gives its buffer back when B needs it, and back again.
  A.markIdle();
  EXPECT_EQ(A.busyBytes(), 0u);
  auto Got = B.next(64 << 10);
  ASSERT_TRUE(bool(Got)) << takeErrorMessage(Got.takeError());
  EXPECT_EQ((*Got)->Size, size_t(64) << 10);
  EXPECT_EQ(A.size(), 0u);
  EXPECT_EQ(Device.Live.size(), 1u);
  EXPECT_EQ(Device.EventsOut, 1);
  B.markIdle();
  ASSERT_TRUE(bool(A.next(64 << 10)));
  EXPECT_EQ(B.size(), 0u);
  EXPECT_EQ(Device.Budget.getStats().Used, Slot);
  EXPECT_EQ(Device.Budget.getStats().Refusals, 0u);
}

TEST(IOStagingRingTest, AnEmptyRingWaitsForBusyRingsToGoIdle) {
  // A busy ring holds the whole budget: another ring's first buffer waits
  // until it is idle, then takes its memory, and does not fail.
  constexpr size_t Slot = (64 << 10) + IOStagingRingTy::BufferAlign;
  FakeIODeviceTy Device(Slot);
  IOStagingRingTy A(Device, 2), B(Device, 2);
  ASSERT_TRUE(bool(A.next(64 << 10)));
  std::atomic<bool> Idle{false};
  std::thread Waiter([&] {
    auto Got = B.next(64 << 10);
    EXPECT_TRUE(Idle.load()) << "took memory a busy ring held";
    ASSERT_TRUE(bool(Got)) << takeErrorMessage(Got.takeError());
    EXPECT_EQ((*Got)->Size, size_t(64) << 10);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  Idle = true;
  A.markIdle();
  Waiter.join();
  EXPECT_EQ(A.size(), 0u);
  EXPECT_EQ(B.size(), 1u);
  EXPECT_LE(Device.Budget.getStats().Refusals, 2u)
      << "the wait asks the budget again only once there is room";
}

TEST(IOStagingRingTest, ReclaimsFromOtherThreadsNeverTakeABusyRing) {
  // The owner uses the ring and goes idle at random; another thread
  // reclaims all the while. The owner's buffers never vanish under it, and
  // everything is freed exactly once.
  FakeIODeviceTy Device;
  {
    IOStagingRingTy Ring(Device, 3);
    std::atomic<bool> Stop{false};
    std::atomic<size_t> Reclaimed{0};
    std::thread Reclaimer([&] {
      while (!Stop)
        Reclaimed += Ring.reclaimIdle();
    });
    std::mt19937 Rng(11);
    for (int Step = 0; Step < 5000; ++Step) {
      auto Slot = Ring.next(4096 << (Rng() % 3));
      ASSERT_TRUE(bool(Slot));
      // Write the whole buffer: a freed one would be caught by ASan.
      std::memset((*Slot)->Buffer, Step, (*Slot)->Size);
      (*Slot)->InFlight = Rng() % 2;
      if (Rng() % 8 == 0) {
        Ring.retireAll();
        Ring.markIdle();
        // Now and then stay idle until the reclaimer has been by.
        bool Linger = Rng() % 4 == 0;
        size_t Before = Reclaimed;
        auto Until =
            std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
        while (Linger && Reclaimed == Before &&
               std::chrono::steady_clock::now() < Until)
          std::this_thread::yield();
      }
    }
    Stop = true;
    Reclaimer.join();
    EXPECT_GT(Reclaimed.load(), 0u);
  }
  EXPECT_TRUE(Device.Live.empty());
  EXPECT_EQ(Device.EventsOut, 0);
  EXPECT_EQ(Device.Budget.getStats().Used, 0u);
}

} // namespace

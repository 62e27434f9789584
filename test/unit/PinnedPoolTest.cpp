// SPDX-License-Identifier: Apache-2.0
// PinnedPoolTy and PinnedLeaseTy: a lease holds memory and its bytes in the
// budget and gives both back once; each reaction to a refusal does what
// OnRefusalTy says; a randomised run against a model of the budget and the
// allocator.
#include "BoundedWait.h"
#include "offloadio/PinnedPool.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <future>
#include <map>
#include <random>
#include <thread>
#include <vector>

using namespace offloadio;
using namespace offloadio::unittest;

namespace {

constexpr size_t Page = PinnedPoolTy::ShrinkGranule;

/// malloc'ed "pinned" memory; fails on demand and tracks what is live.
struct FakePinnedAllocatorTy final : PinnedAllocatorTy {
  Expected<void *> allocatePinned(size_t Size) override {
    ++Attempts;
    if (FailNext) {
      --FailNext;
      return makeError(ErrorCode::OutOfResources,
                       "fake pin of {0} bytes failed", Size);
    }
    void *Ptr = std::malloc(Size);
    Live[Ptr] = Size;
    return Ptr;
  }
  Error freePinned(void *Ptr, size_t Size) override {
    auto It = Live.find(Ptr);
    if (It == Live.end() || It->second != Size)
      return makeError(ErrorCode::NotFound, "free of unknown {0}", Ptr);
    Live.erase(It);
    std::free(Ptr);
    if (FailFrees) {
      --FailFrees;
      return makeError(ErrorCode::BackendError, "fake unpin of {0} failed",
                       Ptr);
    }
    return Error::success();
  }
  ~FakePinnedAllocatorTy() override {
    EXPECT_TRUE(Live.empty()) << Live.size() << " allocations leaked";
    for (auto &[Ptr, Size] : Live)
      std::free(Ptr);
  }
  std::map<void *, size_t> Live;
  unsigned FailNext = 0, FailFrees = 0, Attempts = 0;
};

/// A holder that holds busy memory until told to go idle.
struct BusyHolderTy final : PinnedReclaimableTy {
  explicit BusyHolderTy(PinnedBudgetTy &Budget, size_t Bytes)
      : Reservation(cantFail(Budget.reserve(Bytes, "busy holder"))) {}
  size_t reclaimIdle() override {
    if (Busy.load())
      return 0;
    size_t Bytes = Reservation.size();
    Reservation.release();
    return Bytes;
  }
  size_t busyBytes() const override {
    return Busy.load() ? Reservation.size() : 0;
  }
  PinnedReservationTy Reservation;
  std::atomic<bool> Busy{true};
};

TEST(PinnedPoolTest, ALeaseHoldsMemoryAndBytesUntilItGoes) {
  PinnedBudgetTy Budget(1 << 20);
  FakePinnedAllocatorTy Alloc;
  PinnedPoolTy Pool(Budget, Alloc);
  {
    auto Lease = Pool.acquire(3 * Page, OnRefusalTy::Fail, "test");
    ASSERT_TRUE(bool(Lease)) << llvm::toString(Lease.takeError());
    EXPECT_TRUE(bool(*Lease));
    EXPECT_EQ(Lease->size(), 3 * Page);
    EXPECT_EQ(Alloc.Live.count(Lease->get()), 1u);
    EXPECT_EQ(Budget.getStats().Used, 3 * Page);
    // Moved, it is still one lease.
    PinnedLeaseTy Moved = std::move(*Lease);
    EXPECT_FALSE(bool(*Lease));
    EXPECT_EQ(Lease->size(), 0u);
    EXPECT_EQ(Budget.getStats().Used, 3 * Page);
    PinnedLeaseTy Assigned;
    Assigned = std::move(Moved);
    EXPECT_EQ(Alloc.Live.size(), 1u);
    EXPECT_EQ(Assigned.size(), 3 * Page);
  }
  EXPECT_TRUE(Alloc.Live.empty());
  EXPECT_EQ(Budget.getStats().Used, 0u);
}

TEST(PinnedPoolTest, ReleaseReportsAFailedFreeAndStillGivesTheBytesBack) {
  PinnedBudgetTy Budget(1 << 20);
  FakePinnedAllocatorTy Alloc;
  PinnedPoolTy Pool(Budget, Alloc);
  auto Lease = cantFail(Pool.acquire(Page, OnRefusalTy::Fail, "test"));
  Alloc.FailFrees = 1;
  std::string Message = llvm::toString(Lease.release());
  EXPECT_NE(Message.find("fake unpin of"), std::string::npos) << Message;
  EXPECT_FALSE(bool(Lease));
  EXPECT_EQ(Budget.getStats().Used, 0u);
  // Released twice: nothing more happens.
  EXPECT_FALSE(bool(Lease.release()));
}

TEST(PinnedPoolTest, AFailedAllocationIsReturnedAndGivesItsBytesBack) {
  PinnedBudgetTy Budget(1 << 20);
  FakePinnedAllocatorTy Alloc;
  PinnedPoolTy Pool(Budget, Alloc);
  Alloc.FailNext = 1;
  for (OnRefusalTy OnRefusal :
       {OnRefusalTy::MakeDo, OnRefusalTy::CopyUnpinned, OnRefusalTy::Fail}) {
    Alloc.FailNext = 1;
    auto Lease = Pool.acquire(Page, OnRefusal, "test");
    ASSERT_FALSE(bool(Lease)) << onRefusalName(OnRefusal).str();
    std::string Message = llvm::toString(Lease.takeError());
    EXPECT_NE(Message.find("fake pin of 4096 bytes"), std::string::npos)
        << Message;
    EXPECT_EQ(Budget.getStats().Used, 0u);
  }
  EXPECT_EQ(Budget.getStats().Refusals, 0u);
}

TEST(PinnedPoolTest, ARequestRefusedAtEveryTryCountsOnce) {
  // 3 pages free: 8 are refused, and so is the smaller share when the
  // least the caller can work with is 4; the stats hear of one request.
  PinnedBudgetTy Budget(4 * Page);
  FakePinnedAllocatorTy Alloc;
  PinnedPoolTy Pool(Budget, Alloc);
  auto Held = Pool.acquire(Page, OnRefusalTy::Fail, "held");
  ASSERT_TRUE(bool(Held));
  for (OnRefusalTy OnRefusal :
       {OnRefusalTy::Shrink, OnRefusalTy::ShrinkThenWait}) {
    uint64_t Before = Budget.getStats().Refusals;
    auto Lease = Pool.acquire(
        {8 * Page, OnRefusal, "test", nullptr, 4 * Page, PinnedTryTy::First});
    ASSERT_FALSE(bool(Lease)) << onRefusalName(OnRefusal).str();
    llvm::consumeError(Lease.takeError());
    EXPECT_EQ(Budget.getStats().Refusals, Before + 1)
        << onRefusalName(OnRefusal).str();
  }
  // Asking again for what was refused before is no new refusal.
  auto Again = Pool.acquire(
      {8 * Page, OnRefusalTy::MakeDo, "test", nullptr, 0, PinnedTryTy::Again});
  ASSERT_TRUE(bool(Again));
  EXPECT_FALSE(bool(*Again));
  EXPECT_EQ(Budget.getStats().Refusals, 2u);
  // A smaller share granted after the refusal: still one refused request.
  auto Shrunk = Pool.acquire(
      {8 * Page, OnRefusalTy::Shrink, "test", nullptr, 0, PinnedTryTy::First});
  ASSERT_TRUE(bool(Shrunk));
  EXPECT_EQ(Shrunk->size(), Page);
  EXPECT_EQ(Budget.getStats().Refusals, 3u);
}

TEST(PinnedPoolTest, AWaitRetriedAfterEachWakeCountsOnce) {
  // A busy holder gives back a page each time it is asked. A request for
  // the whole cap, that can work with 3 pages, is refused, and so is its
  // smaller share; after the wait it asks for the whole cap again (refused
  // again) before the share it then gets. One refused request.
  struct TricklingHolderTy final : PinnedReclaimableTy {
    size_t reclaimIdle() override {
      if (Held.empty())
        return 0;
      Held.pop_back();
      ++Given;
      return Page;
    }
    size_t busyBytes() const override { return Held.size() * Page; }
    std::vector<PinnedReservationTy> Held;
    unsigned Given = 0;
  };
  PinnedBudgetTy Budget(8 * Page);
  FakePinnedAllocatorTy Alloc;
  PinnedPoolTy Pool(Budget, Alloc);
  TricklingHolderTy Holder;
  for (int I = 0; I < 8; ++I) {
    auto R = Budget.reserve(Page, "busy");
    ASSERT_TRUE(bool(R));
    Holder.Held.push_back(std::move(*R));
  }
  Budget.addReclaimable(Holder);
  auto Lease = Pool.acquire({8 * Page, OnRefusalTy::ShrinkThenWait, "waiter",
                             nullptr, 3 * Page, PinnedTryTy::First});
  ASSERT_TRUE(bool(Lease)) << llvm::toString(Lease.takeError());
  EXPECT_EQ(Lease->size(), 3 * Page);
  EXPECT_EQ(Holder.Given, 4u) << "refused twice before the wait, once after";
  EXPECT_EQ(Budget.getStats().Refusals, 1u);
  Budget.removeReclaimable(Holder);
}

TEST(PinnedPoolTest, EachReactionToARefusal) {
  PinnedBudgetTy Budget(16 * Page);
  FakePinnedAllocatorTy Alloc;
  PinnedPoolTy Pool(Budget, Alloc);
  auto Hog = cantFail(Pool.acquire(10 * Page, OnRefusalTy::Fail, "hog"));
  // 6 pages left; 8 asked for.
  auto Failed = Pool.acquire(8 * Page, OnRefusalTy::Fail, "a test buffer");
  ASSERT_FALSE(bool(Failed));
  std::string Message = llvm::toString(Failed.takeError());
  EXPECT_NE(Message.find("a test buffer needs 32768 bytes"), std::string::npos)
      << Message;
  // Nobody busy: waiting would never end, so the refusal stands.
  auto Waited = Pool.acquire(8 * Page, OnRefusalTy::Wait, "test");
  EXPECT_FALSE(bool(Waited));
  llvm::consumeError(Waited.takeError());
  for (OnRefusalTy OnRefusal :
       {OnRefusalTy::MakeDo, OnRefusalTy::CopyUnpinned}) {
    auto Empty = Pool.acquire(8 * Page, OnRefusal, "test");
    ASSERT_TRUE(bool(Empty)) << llvm::toString(Empty.takeError());
    EXPECT_FALSE(bool(*Empty));
    EXPECT_EQ(Empty->size(), 0u);
  }
  EXPECT_EQ(Alloc.Live.size(), 1u) << "nothing allocated past a refusal";
  // Shrink: half of the 6 pages left.
  auto Shrunk = Pool.acquire(8 * Page, OnRefusalTy::Shrink, "test");
  ASSERT_TRUE(bool(Shrunk)) << llvm::toString(Shrunk.takeError());
  EXPECT_EQ(Shrunk->size(), 3 * Page);
  // 3 pages left: half is 1 page, but the caller needs 2.
  PinnedRequestTy Request{8 * Page, OnRefusalTy::Shrink, "test", nullptr,
                          2 * Page};
  auto AtLeast = Pool.acquire(Request);
  ASSERT_TRUE(bool(AtLeast)) << llvm::toString(AtLeast.takeError());
  EXPECT_EQ(AtLeast->size(), 2 * Page);
  // 1 page left, 2 needed: the refusal names the size asked for.
  auto None = Pool.acquire(Request);
  ASSERT_FALSE(bool(None));
  Message = llvm::toString(None.takeError());
  EXPECT_NE(Message.find("needs 32768 bytes"), std::string::npos) << Message;
  EXPECT_EQ(Budget.getStats().Used, 15 * Page);
}

TEST(PinnedPoolTest, WaitersGetTheMemoryOfBusyHoldersOnceIdle) {
  for (OnRefusalTy OnRefusal : {OnRefusalTy::Wait, OnRefusalTy::ShrinkThenWait}) {
    PinnedBudgetTy Budget(16 * Page);
    FakePinnedAllocatorTy Alloc;
    PinnedPoolTy Pool(Budget, Alloc);
    BusyHolderTy Holder(Budget, 14 * Page);
    Budget.addReclaimable(Holder);
    PinnedRequestTy Request{8 * Page, OnRefusal, "test", nullptr, 4 * Page};
    auto Waiter = std::async(std::launch::async, [&] {
      return Pool.acquire(Request);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(Waiter.wait_for(std::chrono::seconds(0)),
              std::future_status::timeout)
        << onRefusalName(OnRefusal).str() << " did not wait";
    Holder.Busy = false;
    auto Lease = within(Waiter, "a waiter for a busy holder");
    ASSERT_TRUE(bool(Lease)) << llvm::toString(Lease.takeError());
    EXPECT_EQ(Lease->size(), 8 * Page) << onRefusalName(OnRefusal).str();
    Budget.removeReclaimable(Holder);
  }
}

TEST(PinnedPoolTest, TheCallerIsNeitherReclaimedNorWaitedFor) {
  PinnedBudgetTy Budget(16 * Page);
  FakePinnedAllocatorTy Alloc;
  PinnedPoolTy Pool(Budget, Alloc);
  BusyHolderTy Self(Budget, 14 * Page);
  Self.Busy = false; // Idle, but it is the caller: not asked.
  Budget.addReclaimable(Self);
  auto Lease = Pool.acquire(8 * Page, OnRefusalTy::Wait, "test", &Self);
  EXPECT_FALSE(bool(Lease));
  llvm::consumeError(Lease.takeError());
  EXPECT_EQ(Self.Reservation.size(), 14 * Page);
  // Anyone else has it reclaimed.
  auto Other = Pool.acquire(8 * Page, OnRefusalTy::Fail, "test");
  EXPECT_TRUE(bool(Other)) << llvm::toString(Other.takeError());
  EXPECT_EQ(Self.Reservation.size(), 0u);
  Budget.removeReclaimable(Self);
}

TEST(PinnedPoolTest, RandomisedAgainstAModel) {
  // Budget and allocator as a model sees them: a lease of each size it
  // predicts, an empty lease or an error where it predicts one, and the
  // budget's figures equal to the model's after every step.
  std::mt19937 Rng(2718);
  const OnRefusalTy Reactions[] = {OnRefusalTy::Fail,   OnRefusalTy::Wait,
                                   OnRefusalTy::Shrink, OnRefusalTy::ShrinkThenWait,
                                   OnRefusalTy::MakeDo, OnRefusalTy::CopyUnpinned};
  for (unsigned Run = 0; Run < 20; ++Run) {
    const uint64_t Cap = (8 + Rng() % 64) * Page + Rng() % Page;
    PinnedBudgetTy Budget(Cap);
    FakePinnedAllocatorTy Alloc;
    PinnedPoolTy Pool(Budget, Alloc);
    std::vector<PinnedLeaseTy> Leases;
    uint64_t Used = 0, Refusals = 0;
    for (unsigned Step = 0; Step < 400; ++Step) {
      unsigned Op = Rng() % 10;
      if (Op < 3 && !Leases.empty()) {
        size_t I = Rng() % Leases.size();
        Used -= Leases[I].size();
        if (Op == 0)
          EXPECT_FALSE(bool(Leases[I].release()));
        Leases.erase(Leases.begin() + I);
      } else if (Op == 3 && !Leases.empty()) {
        // Moving a lease changes nothing in the budget.
        size_t I = Rng() % Leases.size(), J = Rng() % Leases.size();
        if (I != J) {
          Used -= Leases[J].size();
          Leases[J] = std::move(Leases[I]);
        }
      } else {
        size_t Bytes = (1 + Rng() % 24) * Page;
        size_t MinBytes = (Rng() % 2) ? (1 + Rng() % 4) * Page : 0;
        OnRefusalTy OnRefusal = Reactions[Rng() % 6];
        bool FailAlloc = Rng() % 16 == 0;
        Alloc.FailNext = FailAlloc;
        PinnedRequestTy Request{Bytes, OnRefusal, "model", nullptr, MinBytes};
        // The model.
        uint64_t Room = Cap - Used;
        size_t Least = std::min(MinBytes ? MinBytes : Page, Bytes);
        bool Shrinks = OnRefusal == OnRefusalTy::Shrink ||
                       OnRefusal == OnRefusalTy::ShrinkThenWait;
        size_t Expect = 0; // 0: refused.
        if (Bytes <= Room) {
          Expect = Bytes;
        } else {
          ++Refusals;
          // The share asked for next is the same request: one refusal.
          size_t Shrunk = std::max<uint64_t>(Room / 2 / Page * Page, Least);
          if (Shrinks && Shrunk < Bytes && Shrunk <= Room)
            Expect = Shrunk;
        }
        bool Empty = OnRefusal == OnRefusalTy::MakeDo ||
                     OnRefusal == OnRefusalTy::CopyUnpinned;
        auto Lease = Pool.acquire(Request);
        if (Expect && FailAlloc) {
          EXPECT_FALSE(bool(Lease));
          llvm::consumeError(Lease.takeError());
        } else if (Expect) {
          ASSERT_TRUE(bool(Lease)) << llvm::toString(Lease.takeError());
          EXPECT_EQ(Lease->size(), Expect);
          Used += Expect;
          Leases.push_back(std::move(*Lease));
        } else if (Empty) {
          ASSERT_TRUE(bool(Lease)) << llvm::toString(Lease.takeError());
          EXPECT_FALSE(bool(*Lease));
        } else {
          ASSERT_FALSE(bool(Lease)) << "step " << Step;
          llvm::consumeError(Lease.takeError());
        }
        Alloc.FailNext = 0;
      }
      PinnedBudgetStatsTy Stats = Budget.getStats();
      ASSERT_EQ(Stats.Used, Used) << "run " << Run << " step " << Step;
      ASSERT_EQ(Stats.Refusals, Refusals) << "run " << Run << " step " << Step;
      size_t Live = 0;
      for (const PinnedLeaseTy &L : Leases)
        Live += bool(L);
      ASSERT_EQ(Alloc.Live.size(), Live);
    }
  }
}

TEST(PinnedPoolTest, EveryReactionHasAName) {
  EXPECT_EQ(onRefusalName(OnRefusalTy::Fail), "fail");
  EXPECT_EQ(onRefusalName(OnRefusalTy::Wait), "wait");
  EXPECT_EQ(onRefusalName(OnRefusalTy::Shrink), "shrink");
  EXPECT_EQ(onRefusalName(OnRefusalTy::ShrinkThenWait), "shrink-then-wait");
  EXPECT_EQ(onRefusalName(OnRefusalTy::MakeDo), "make-do");
  EXPECT_EQ(onRefusalName(OnRefusalTy::CopyUnpinned), "copy-unpinned");
}

} // namespace

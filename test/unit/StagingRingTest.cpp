// SPDX-License-Identifier: Apache-2.0
//
// StagingPoolTy::releaseAfter: a buffer handed back with the event of the
// copy that reads it is reused only once that event has completed; buffers
// whose copies are done are reused before new ones are allocated; at the cap
// acquire() takes whichever copy's buffer is done first, or a buffer
// released meanwhile; the cap holds when the budget refuses; a failed copy
// still frees its buffer; clear() waits for copies in flight and gives
// their events back. A randomised run of many threads against a model
// checks that no buffer is ever held twice or reused under a running copy.
// Every wait in these tests is bounded.
#include "BoundedWait.h"
#include "TestPinnedPools.h"
#include "offloadio/StagingPool.h"

#include "gtest/gtest.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

using namespace offloadio;
using namespace offloadio::unittest;

namespace {

constexpr size_t Size = 4096;

/// An event completed by the test, as a device completes a copy.
class FakeEventTy : public EventTy {
public:
  Error synchronize() override {
    std::unique_lock<std::mutex> Guard(Lock);
    ++Syncs;
    if (!Changed.wait_for(Guard, std::chrono::seconds(10), [&] { return Done; }))
      return makeError(ErrorCode::Internal, "fake event never completed");
    return Fail ? makeError(ErrorCode::BackendError, "fake copy failed")
                : Error::success();
  }
  Expected<bool> query() override {
    std::lock_guard<std::mutex> Guard(Lock);
    return Done;
  }
  /// Complete the event (as failed, with \p Failed).
  void complete(bool Failed = false) {
    {
      std::lock_guard<std::mutex> Guard(Lock);
      Done = true;
      Fail = Failed;
    }
    Changed.notify_all();
  }
  /// Ready for a new lease.
  void reset() {
    std::lock_guard<std::mutex> Guard(Lock);
    Done = Fail = false;
    Syncs = 0;
  }
  bool done() {
    std::lock_guard<std::mutex> Guard(Lock);
    return Done;
  }
  unsigned syncs() {
    std::lock_guard<std::mutex> Guard(Lock);
    return Syncs;
  }

private:
  std::mutex Lock;
  std::condition_variable Changed;
  bool Done = false, Fail = false;
  unsigned Syncs = 0;
};

/// Events from a pool, as GenericDeviceTy::leaseEvent hands them out.
struct EventsTy {
  ResourcePoolTy<EventTy> Pool{[]() -> Expected<std::unique_ptr<EventTy>> {
    return std::make_unique<FakeEventTy>();
  }};
  /// A lease on a fresh (incomplete) event, and the event.
  std::pair<PoolLeaseTy<EventTy>, FakeEventTy *> lease() {
    auto E = Pool.acquire();
    EXPECT_TRUE(bool(E));
    auto *Fake = static_cast<FakeEventTy *>(*E);
    Fake->reset();
    return {PoolLeaseTy<EventTy>(Pool, Fake), Fake};
  }
};

/// malloc'ed "pinned" buffers, counted.
struct CountingAllocatorTy {
  std::atomic<unsigned> Allocations{0}, Frees{0};
  TestPinnedAllocFnTy alloc() {
    return [this](size_t Bytes) -> Expected<void *> {
      ++Allocations;
      return std::malloc(Bytes);
    };
  }
  TestPinnedFreeFnTy free() {
    return [this](void *Ptr) -> Error {
      ++Frees;
      std::free(Ptr);
      return Error::success();
    };
  }
  /// A pinned pool over alloc() and free(), reserving in \p Budget (none:
  /// no cap).
  PinnedPoolTy &pool(PinnedBudgetTy *Budget = nullptr) {
    return Pools.make(alloc(), free(), Budget);
  }
  TestPinnedPoolsTy Pools;
};

StagingBufferTy *take(StagingPoolTy &Pool) {
  auto B = Pool.acquire();
  EXPECT_TRUE(bool(B)) << llvm::toString(B.takeError());
  return B ? *B : nullptr;
}

TEST(StagingRingTest, ABufferIsReusedOnlyOnceItsCopyIsDone) {
  EventsTy Events;
  CountingAllocatorTy A;
  StagingPoolTy Pool(Size, 1, A.pool());
  StagingBufferTy *B = take(Pool);
  auto [Lease, Event] = Events.lease();
  Pool.releaseAfter(B, std::move(Lease));
  auto None = Pool.tryAcquire();
  ASSERT_TRUE(bool(None));
  EXPECT_EQ(*None, nullptr) << "reused while its copy was still reading it";
  Event->complete();
  auto Again = Pool.tryAcquire();
  ASSERT_TRUE(bool(Again));
  EXPECT_EQ(*Again, B);
  EXPECT_EQ(Event->syncs(), 0u) << "a completed copy needs no wait";
  Pool.release(B);
  EXPECT_EQ(Events.Pool.available(), Events.Pool.capacity())
      << "the event lease was not given back";
  EXPECT_FALSE(bool(Pool.clear()));
}

TEST(StagingRingTest, DoneBuffersAreReusedBeforeMoreAreAllocated) {
  EventsTy Events;
  CountingAllocatorTy A;
  StagingPoolTy Pool(Size, 4, A.pool());
  StagingBufferTy *B = take(Pool);
  for (int I = 0; I < 10; ++I) {
    auto [Lease, Event] = Events.lease();
    Pool.releaseAfter(B, std::move(Lease));
    Event->complete();
    StagingBufferTy *Next = take(Pool);
    EXPECT_EQ(Next, B) << "round " << I;
    B = Next;
  }
  EXPECT_EQ(A.Allocations.load(), 1u);
  Pool.release(B);
  EXPECT_FALSE(bool(Pool.clear()));
}

TEST(StagingRingTest, AtTheCapAcquireTakesWhicheverCopyIsDoneFirst) {
  // Copies on different streams complete in any order: the newer copy's
  // buffer must come back although the older one is still running (its
  // stream may sit behind a long kernel).
  EventsTy Events;
  CountingAllocatorTy A;
  StagingPoolTy Pool(Size, 2, A.pool());
  StagingBufferTy *B1 = take(Pool), *B2 = take(Pool);
  auto [L1, E1] = Events.lease();
  auto [L2, E2] = Events.lease();
  Pool.releaseAfter(B1, std::move(L1));
  Pool.releaseAfter(B2, std::move(L2));
  auto Waiter = std::async(std::launch::async, [&] { return take(Pool); });
  EXPECT_EQ(Waiter.wait_for(std::chrono::milliseconds(30)),
            std::future_status::timeout)
      << "a buffer came back before any copy was done";
  E2->complete();
  EXPECT_EQ(within(Waiter, "acquire at the cap"), B2);
  EXPECT_EQ(E1->syncs(), 0u) << "waited for the older copy";
  E1->complete();
  EXPECT_EQ(take(Pool), B1);
  Pool.release(B1);
  Pool.release(B2);
  EXPECT_EQ(A.Allocations.load(), 2u);
  EXPECT_FALSE(bool(Pool.clear()));
}

TEST(StagingRingTest, AReleasedBufferEndsAWaitOnCopies) {
  // At the cap with one copy in flight and one buffer held: the holder's
  // release() serves the waiter while the copy still runs.
  EventsTy Events;
  CountingAllocatorTy A;
  StagingPoolTy Pool(Size, 2, A.pool());
  StagingBufferTy *B1 = take(Pool), *B2 = take(Pool);
  auto [Lease, Event] = Events.lease();
  Pool.releaseAfter(B1, std::move(Lease));
  auto Waiter = std::async(std::launch::async, [&] { return take(Pool); });
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  Pool.release(B2);
  EXPECT_EQ(within(Waiter, "acquire at the cap"), B2);
  Event->complete();
  Pool.release(B2);
  EXPECT_FALSE(bool(Pool.clear()));
}

TEST(StagingRingTest, AFailedCopyStillFreesItsBuffer) {
  EventsTy Events;
  CountingAllocatorTy A;
  StagingPoolTy Pool(Size, 1, A.pool());
  StagingBufferTy *B = take(Pool);
  auto [Lease, Event] = Events.lease();
  Pool.releaseAfter(B, std::move(Lease));
  Event->complete(/*Failed=*/true);
  EXPECT_EQ(take(Pool), B);
  Pool.release(B);
  EXPECT_FALSE(bool(Pool.clear()));
}

TEST(StagingRingTest, ClearWaitsForCopiesInFlightAndReturnsTheirEvents) {
  EventsTy Events;
  CountingAllocatorTy A;
  FakeEventTy *Event;
  {
    StagingPoolTy Pool(Size, 2, A.pool());
    StagingBufferTy *B = take(Pool);
    auto Leased = Events.lease();
    Event = Leased.second;
    Pool.releaseAfter(B, std::move(Leased.first));
    std::thread Device([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
      Event->complete();
    });
    Error Err = Pool.clear();
    Device.join();
    EXPECT_FALSE(bool(Err)) << llvm::toString(std::move(Err));
    EXPECT_TRUE(Event->done()) << "clear() freed a buffer under a copy";
    EXPECT_EQ(A.Frees.load(), 1u);
  }
  EXPECT_EQ(Events.Pool.available(), Events.Pool.capacity());
}

// The model of runRandomisedHolders: the set of buffers held, and for each
// buffer handed back with releaseAfter, its last copy: a buffer acquired
// must be held by nobody and its last copy must be done.
TEST(StagingRingTest, ARefusingBudgetWaitsForACopyInFlight) {
  // Room under the cap (4) but none in the budget (one buffer): the caller
  // takes the buffer of the copy in flight once it is done, and never
  // allocates past the budget.
  EventsTy Events;
  CountingAllocatorTy A;
  PinnedBudgetTy Budget(Size);
  StagingPoolTy Pool(Size, 4, A.pool(&Budget), "test buffer");
  StagingBufferTy *B = take(Pool);
  auto [Lease, Event] = Events.lease();
  Pool.releaseAfter(B, std::move(Lease));
  auto Waiter = std::async(std::launch::async, [&] { return take(Pool); });
  EXPECT_EQ(Waiter.wait_for(std::chrono::milliseconds(30)),
            std::future_status::timeout);
  Event->complete();
  EXPECT_EQ(within(Waiter, "acquire refused by the budget"), B);
  EXPECT_EQ(A.Allocations.load(), 1u);
  Pool.release(B);
  EXPECT_FALSE(bool(Pool.clear()));
}

/// Many holders against one "device" that completes copies in the order
/// they were enqueued, as a stream does (see RandomisedHoldersAgainstAModel);
/// returns the number of violations of the model.
unsigned runRandomisedHolders(StagingPoolTy &Pool, EventsTy &Events);

TEST(StagingRingTest, RandomisedHoldersAgainstAModel) {
  EventsTy Events;
  CountingAllocatorTy A;
  constexpr unsigned MaxBuffers = 3;
  StagingPoolTy Pool(Size, MaxBuffers, A.pool());
  EXPECT_EQ(runRandomisedHolders(Pool, Events), 0u);
  EXPECT_LE(A.Allocations.load(), MaxBuffers);
  EXPECT_FALSE(bool(Pool.clear()));
  EXPECT_EQ(A.Frees.load(), A.Allocations.load());
}

TEST(StagingRingTest, RandomisedHoldersUnderABudgetKeepTheCapAndTheBudget) {
  EventsTy Events;
  CountingAllocatorTy A;
  PinnedBudgetTy Budget(2 * Size);
  StagingPoolTy Pool(Size, 3, A.pool(&Budget), "test buffer");
  EXPECT_EQ(runRandomisedHolders(Pool, Events), 0u);
  EXPECT_LE(A.Allocations.load(), 2u);
  EXPECT_FALSE(bool(Pool.clear()));
  EXPECT_EQ(Budget.getStats().Used, 0u);
}

unsigned runRandomisedHolders(StagingPoolTy &Pool, EventsTy &Events) {
  constexpr unsigned Threads = 4, Rounds = 400;
  std::mutex ModelLock;
  std::set<StagingBufferTy *> Held;
  // Copies are numbered; events are recycled, numbers are not.
  std::map<StagingBufferTy *, uint64_t> LastCopy;
  std::set<uint64_t> Completed;
  uint64_t Copies = 0;
  std::deque<std::pair<FakeEventTy *, uint64_t>> Stream;
  std::condition_variable Enqueued;
  std::atomic<bool> Stop{false};
  std::atomic<unsigned> Violations{0};

  std::thread Device([&] {
    std::mt19937 Rng(7);
    std::unique_lock<std::mutex> Guard(ModelLock);
    while (!Stop || !Stream.empty()) {
      if (Stream.empty()) {
        Enqueued.wait_for(Guard, std::chrono::milliseconds(5));
        continue;
      }
      auto [Next, Id] = Stream.front();
      Stream.pop_front();
      Guard.unlock();
      std::this_thread::sleep_for(std::chrono::microseconds(Rng() % 200));
      Guard.lock();
      Completed.insert(Id);
      Guard.unlock();
      Next->complete();
      Guard.lock();
    }
  });

  std::vector<std::thread> Holders;
  for (unsigned T = 0; T < Threads; ++T)
    Holders.emplace_back([&, T] {
      std::mt19937 Rng(100 + T);
      for (unsigned R = 0; R < Rounds; ++R) {
        auto B = (Rng() % 4 == 0) ? Pool.tryAcquire() : Pool.acquire();
        if (!B) {
          llvm::consumeError(B.takeError());
          ++Violations;
          continue;
        }
        if (!*B)
          continue; // tryAcquire at the cap
        {
          std::lock_guard<std::mutex> Guard(ModelLock);
          if (!Held.insert(*B).second)
            ++Violations; // held twice
          auto It = LastCopy.find(*B);
          if (It != LastCopy.end() && !Completed.count(It->second))
            ++Violations; // reused under a running copy
        }
        std::this_thread::sleep_for(std::chrono::microseconds(Rng() % 50));
        std::lock_guard<std::mutex> Guard(ModelLock);
        Held.erase(*B);
        if (Rng() % 3 == 0) {
          LastCopy.erase(*B);
          Pool.release(*B);
          continue;
        }
        auto [Lease, Event] = Events.lease();
        LastCopy[*B] = ++Copies;
        Stream.push_back({Event, Copies});
        Pool.releaseAfter(*B, std::move(Lease));
        Enqueued.notify_one();
      }
    });
  for (auto &H : Holders)
    H.join();
  Stop = true;
  Device.join();
  return Violations.load();
}

} // namespace

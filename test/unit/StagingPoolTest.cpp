// SPDX-License-Identifier: Apache-2.0
//
// StagingPoolTy with allocators that fail: the failure reaches the caller
// with the allocator's message, the next acquire tries again, clear() frees
// exactly what was allocated, and a failure while other callers wait at the
// cap wakes them instead of leaving them to wait for a buffer that will never
// exist. Every wait in these tests is bounded.
#include "BoundedWait.h"
#include "TestPinnedPools.h"
#include "offloadio/StagingPool.h"

#include "gtest/gtest.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <future>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

using namespace offloadio;
using namespace offloadio::unittest;

namespace {

constexpr size_t Size = 4096;

/// An allocator that refuses on demand and tracks what is live.
struct FakeAllocatorTy {
  std::mutex Lock;
  std::set<void *> Live;
  /// Allocations that succeed before each later one fails; negative: all.
  int Left = -1;
  /// The next this many allocations fail, whatever Left says.
  unsigned FailNext = 0;
  /// Called inside each allocation (outside the pool's lock), before it
  /// succeeds or fails.
  std::function<void()> During;
  unsigned Attempts = 0;

  TestPinnedAllocFnTy alloc() {
    return [this](size_t Bytes) -> Expected<void *> {
      if (During)
        During();
      std::lock_guard<std::mutex> Guard(Lock);
      ++Attempts;
      bool Refuse = FailNext || Left == 0;
      if (FailNext)
        --FailNext;
      if (Refuse)
        return makeError(ErrorCode::OutOfResources,
                         "fake pinned allocation of {0} bytes on device 0 "
                         "failed",
                         Bytes);
      if (Left > 0)
        --Left;
      void *Ptr = std::malloc(Bytes);
      Live.insert(Ptr);
      return Ptr;
    };
  }
  TestPinnedFreeFnTy free() {
    return [this](void *Ptr) -> Error {
      std::lock_guard<std::mutex> Guard(Lock);
      if (!Live.erase(Ptr))
        return makeError(ErrorCode::NotFound, "free of unknown {0}", Ptr);
      std::free(Ptr);
      return Error::success();
    };
  }
  size_t live() {
    std::lock_guard<std::mutex> Guard(Lock);
    return Live.size();
  }
  /// A pinned pool over alloc() and free(), reserving in \p Budget (none:
  /// no cap).
  PinnedPoolTy &pool(PinnedBudgetTy *Budget = nullptr) {
    return Pools.make(alloc(), free(), Budget);
  }
  TestPinnedPoolsTy Pools;
};

TEST(StagingPoolTest, AllocationFailureIsReturnedAndRetried) {
  FakeAllocatorTy A;
  {
    StagingPoolTy Pool(Size, 4, A.pool());
    A.Left = 0;
    auto B = Pool.acquire();
    ASSERT_FALSE(bool(B));
    ErrorDetailsTy D = takeErrorDetails(B.takeError());
    EXPECT_EQ(D.Code, ErrorCode::OutOfResources);
    EXPECT_NE(D.Message.find("4096 bytes on device 0"), std::string::npos)
        << D.Message;
    EXPECT_EQ(Pool.allocated(), 0u);
    // The fault clears: the same pool allocates.
    A.Left = -1;
    auto B1 = Pool.acquire(), B2 = Pool.acquire();
    ASSERT_TRUE(B1 && B2);
    EXPECT_EQ(Pool.allocated(), 2u);
    // A later failure (the third buffer) leaves the two intact.
    A.Left = 0;
    auto B3 = Pool.acquire();
    EXPECT_FALSE(bool(B3));
    llvm::consumeError(B3.takeError());
    Pool.release(*B1);
    Pool.release(*B2);
    EXPECT_FALSE(bool(Pool.clear()));
    EXPECT_EQ(A.live(), 0u);
  }
  EXPECT_EQ(A.live(), 0u);
}

TEST(StagingPoolTest, FailureWakesCallersWaitingAtTheCap) {
  // Cap 1: the first caller's allocation is under way, so the second finds
  // the pool at its cap and waits for a buffer to come back. The first
  // allocation then fails: there will never be a buffer to come back, and
  // the second caller must not wait forever. It gets the room and allocates
  // (successfully here).
  FakeAllocatorTy A;
  A.FailNext = 1;
  StagingPoolTy Pool(Size, 1, A.pool());
  std::mutex Lock;
  std::condition_variable CV;
  bool InAlloc = false, MayFinish = false;
  bool First = true;
  A.During = [&] {
    std::unique_lock<std::mutex> Guard(Lock);
    if (!First)
      return;
    First = false;
    InAlloc = true;
    CV.notify_all();
    CV.wait(Guard, [&] { return MayFinish; });
  };
  auto FirstCaller = std::async(std::launch::async, [&] {
    auto B = Pool.acquire();
    bool Failed = !B;
    llvm::consumeError(B.takeError());
    return Failed;
  });
  {
    std::unique_lock<std::mutex> Guard(Lock);
    CV.wait(Guard, [&] { return InAlloc; });
  }
  auto SecondCaller = std::async(std::launch::async, [&] {
    auto B = Pool.acquire();
    if (!B) {
      llvm::consumeError(B.takeError());
      return static_cast<StagingBufferTy *>(nullptr);
    }
    return *B;
  });
  // Give the second caller time to reach its wait, then let the first
  // allocation fail.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  {
    std::lock_guard<std::mutex> Guard(Lock);
    MayFinish = true;
  }
  CV.notify_all();
  EXPECT_TRUE(within(FirstCaller, "first caller"));
  StagingBufferTy *Got = within(SecondCaller, "second caller");
  ASSERT_NE(Got, nullptr);
  Pool.release(Got);
  EXPECT_FALSE(bool(Pool.clear()));
  EXPECT_EQ(A.live(), 0u);
}

TEST(StagingPoolTest, FailureWhileEveryBufferIsInUseDoesNotWait) {
  // Cap 2, one buffer held: a failing allocation for the second returns its
  // error at once; the held buffer, once released, serves the next caller.
  FakeAllocatorTy A;
  StagingPoolTy Pool(Size, 2, A.pool());
  auto Held = Pool.acquire();
  ASSERT_TRUE(bool(Held));
  A.Left = 0;
  auto Fut = std::async(std::launch::async, [&] {
    auto B = Pool.acquire();
    bool Failed = !B;
    llvm::consumeError(B.takeError());
    return Failed;
  });
  EXPECT_TRUE(within(Fut, "acquire with an allocation failing"));
  Pool.release(*Held);
  auto Again = Pool.acquire();
  ASSERT_TRUE(bool(Again));
  EXPECT_EQ(*Again, *Held);
  Pool.release(*Again);
  EXPECT_FALSE(bool(Pool.clear()));
  EXPECT_EQ(A.live(), 0u);
}

} // namespace

namespace {

TEST(StagingPoolTest, TryAcquireNeverWaitsAtTheCap) {
  FakeAllocatorTy A;
  StagingPoolTy Pool(Size, 2, A.pool());
  auto B1 = Pool.tryAcquire(), B2 = Pool.tryAcquire();
  ASSERT_TRUE(B1 && B2);
  ASSERT_NE(*B1, nullptr);
  ASSERT_NE(*B2, nullptr);
  EXPECT_NE(*B1, *B2);
  // At the cap: null at once, nothing allocated.
  auto Full = std::async(std::launch::async, [&] {
    auto B = Pool.tryAcquire();
    return B ? *B : reinterpret_cast<StagingBufferTy *>(1);
  });
  EXPECT_EQ(within(Full, "tryAcquire at the cap"), nullptr);
  EXPECT_EQ(A.Attempts, 2u);
  // A returned buffer is handed out again, not a new one.
  Pool.release(*B1);
  auto B3 = Pool.tryAcquire();
  ASSERT_TRUE(bool(B3));
  EXPECT_EQ(*B3, *B1);
  Pool.release(*B2);
  Pool.release(*B3);
  // A refused allocation is an error, and its room is free again.
  StagingPoolTy Refusing(Size, 1, A.pool());
  A.FailNext = 1;
  auto F = Refusing.tryAcquire();
  ASSERT_FALSE(bool(F));
  EXPECT_EQ(takeErrorCode(F.takeError()), ErrorCode::OutOfResources);
  auto Ok = Refusing.tryAcquire();
  ASSERT_TRUE(Ok && *Ok);
  Refusing.release(*Ok);
  EXPECT_FALSE(bool(Refusing.clear()));
  EXPECT_FALSE(bool(Pool.clear()));
  EXPECT_EQ(A.live(), 0u);
}

TEST(StagingPoolTest, TheBudgetIsReservedPerBufferAndGivenBackAtClear) {
  FakeAllocatorTy A;
  PinnedBudgetTy Budget(3 * Size);
  {
    StagingPoolTy Pool(Size, 8, A.pool(&Budget), "test buffer");
    auto B1 = Pool.acquire(), B2 = Pool.acquire();
    ASSERT_TRUE(B1 && B2);
    EXPECT_EQ(Budget.getStats().Used, 2 * Size);
    // A failed allocation gives its reservation back.
    A.FailNext = 1;
    auto F = Pool.acquire();
    ASSERT_FALSE(bool(F));
    llvm::consumeError(F.takeError());
    EXPECT_EQ(Budget.getStats().Used, 2 * Size);
    // A recycled buffer costs nothing more.
    Pool.release(*B1);
    auto B3 = Pool.acquire();
    ASSERT_TRUE(bool(B3));
    EXPECT_EQ(*B3, *B1);
    EXPECT_EQ(Budget.getStats().Used, 2 * Size);
    Pool.release(*B2);
    Pool.release(*B3);
    EXPECT_FALSE(bool(Pool.clear()));
  }
  EXPECT_EQ(Budget.getStats().Used, 0u);
  EXPECT_EQ(A.live(), 0u);
}

TEST(StagingPoolTest, ARefusalWithNoBufferOutFailsLoudly) {
  FakeAllocatorTy A;
  PinnedBudgetTy Budget(Size - 1);
  StagingPoolTy Pool(Size, 4, A.pool(&Budget),
                     "staging buffer of device 3");
  auto B = Pool.acquire();
  ASSERT_FALSE(bool(B));
  ErrorDetailsTy D = takeErrorDetails(B.takeError());
  EXPECT_EQ(D.Code, ErrorCode::OutOfResources);
  EXPECT_NE(D.Message.find("staging buffer of device 3 needs 4096 bytes"),
            std::string::npos)
      << D.Message;
  EXPECT_NE(D.Message.find("OFFLOADIO_PINNED_MAX"), std::string::npos);
  // tryAcquire answers null: the caller takes its unstaged route.
  auto T = Pool.tryAcquire();
  ASSERT_TRUE(bool(T));
  EXPECT_EQ(*T, nullptr);
  EXPECT_EQ(A.Attempts, 0u);
}

TEST(StagingPoolTest, ARefusalWithABufferOutWaitsForItsReturn) {
  FakeAllocatorTy A;
  PinnedBudgetTy Budget(Size);
  StagingPoolTy Pool(Size, 4, A.pool(&Budget), "test buffer");
  auto Held = Pool.acquire();
  ASSERT_TRUE(bool(Held));
  std::atomic<bool> Returned{false};
  auto Fut = std::async(std::launch::async, [&] {
    auto B = Pool.acquire();
    EXPECT_TRUE(Returned.load());
    return B ? *B : nullptr;
  });
  // The second caller waits on the budget, not the cap (4), until the held
  // buffer comes back; then it gets that one.
  EXPECT_EQ(Fut.wait_for(std::chrono::milliseconds(100)),
            std::future_status::timeout);
  EXPECT_EQ(Pool.tryAcquire().get(), nullptr);
  Returned = true;
  Pool.release(*Held);
  EXPECT_EQ(within(Fut, "acquire waiting on the budget"), *Held);
  Pool.release(*Held);
  EXPECT_EQ(A.Attempts, 1u);
  // The waiter's request once, however often it woke and asked again (the
  // tryAcquire above wakes it), and the tryAcquire's.
  EXPECT_EQ(Budget.getStats().Refusals, 2u);
  EXPECT_FALSE(bool(Pool.clear()));
}

/// Another holder of the budget that, when asked to give memory back, runs
/// \p During instead: the moment a refused caller's lease is under way
/// outside the pool's lock.
struct ReclaimHookTy final : PinnedReclaimableTy {
  std::function<void()> During;
  size_t reclaimIdle() override {
    if (During)
      std::exchange(During, nullptr)();
    return 0;
  }
  size_t busyBytes() const override { return 0; }
};

TEST(StagingPoolTest, ABufferReturnedDuringARefusedLeaseIsTaken) {
  // The last buffer out comes back (a copy's completion callback) while the
  // next caller's lease is being refused, the pool's lock dropped: that
  // caller must take it instead of waiting for a return already made.
  FakeAllocatorTy A;
  PinnedBudgetTy Budget(Size);
  StagingPoolTy Pool(Size, 4, A.pool(&Budget), "test buffer");
  auto Held = Pool.acquire();
  ASSERT_TRUE(bool(Held));
  ReclaimHookTy Hook;
  Budget.addReclaimable(Hook);
  Hook.During = [&] { Pool.release(*Held); };
  auto Fut = std::async(std::launch::async, [&] {
    auto B = Pool.acquire();
    return B ? *B : nullptr;
  });
  EXPECT_EQ(within(Fut, "acquire after a return during its refused lease"),
            *Held);
  Budget.removeReclaimable(Hook);
  Pool.release(*Held);
  EXPECT_EQ(A.Attempts, 1u);
  EXPECT_FALSE(bool(Pool.clear()));
}

TEST(StagingPoolTest, AWaiterWokenAgainAndAgainIsOneRefusal) {
  FakeAllocatorTy A;
  PinnedBudgetTy Budget(Size);
  StagingPoolTy Pool(Size, 4, A.pool(&Budget), "test buffer");
  auto Held = Pool.acquire();
  ASSERT_TRUE(bool(Held));
  auto Fut = std::async(std::launch::async, [&] {
    auto B = Pool.acquire();
    return B ? *B : nullptr;
  });
  // Each refused tryAcquire is a request of its own, and wakes the waiter,
  // which asks the budget again.
  constexpr unsigned Tries = 20;
  for (unsigned I = 0; I < Tries; ++I) {
    EXPECT_EQ(Pool.tryAcquire().get(), nullptr);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  Pool.release(*Held);
  EXPECT_EQ(within(Fut, "acquire waiting on the budget"), *Held);
  Pool.release(*Held);
  EXPECT_EQ(Budget.getStats().Refusals, Tries + 1);
  EXPECT_FALSE(bool(Pool.clear()));
}

TEST(StagingPoolTest, BuffersShrinkToFitASmallBudget) {
  FakeAllocatorTy A;
  // 2 MiB buffers cannot be had from 1 MiB: an eighth of it each.
  PinnedBudgetTy Budget(1 << 20);
  StagingPoolTy Pool(2 << 20, 32, A.pool(&Budget), "test");
  EXPECT_EQ(Pool.getBufferSize(), size_t(128) << 10);
  std::vector<StagingBufferTy *> Held;
  for (int I = 0; I < 8; ++I) {
    auto B = Pool.acquire();
    ASSERT_TRUE(bool(B)) << takeErrorMessage(B.takeError());
    Held.push_back(*B);
  }
  EXPECT_EQ(Budget.getStats().Used, size_t(1) << 20);
  for (StagingBufferTy *B : Held)
    Pool.release(B);
  // A budget with room keeps the size asked for.
  PinnedBudgetTy Large(1ULL << 30);
  StagingPoolTy Unchanged(2 << 20, 4, A.pool(&Large), "test");
  EXPECT_EQ(Unchanged.getBufferSize(), size_t(2) << 20);
}

TEST(StagingPoolTest, FreeBuffersGoBackWhenAnotherHolderIsRefused) {
  FakeAllocatorTy A;
  PinnedBudgetTy Budget(3 * Size);
  StagingPoolTy First(Size, 8, A.pool(&Budget), "first");
  StagingPoolTy Second(Size, 8, A.pool(&Budget), "second");
  auto B1 = First.acquire(), B2 = First.acquire(), B3 = First.acquire();
  ASSERT_TRUE(B1 && B2 && B3);
  // Two come back free; one stays leased.
  First.release(*B1);
  First.release(*B2);
  EXPECT_EQ(First.allocated(), 3u);
  auto S = Second.acquire();
  ASSERT_TRUE(bool(S)) << takeErrorMessage(S.takeError());
  EXPECT_EQ(First.allocated(), 1u) << "the free buffers went, the leased one "
                                      "stayed";
  EXPECT_EQ(A.live(), 2u);
  EXPECT_EQ(Budget.getStats().Used, 2 * Size);
  EXPECT_EQ(Budget.getStats().Refusals, 0u);
  // The first pool allocates again when it needs to.
  auto Again = First.acquire();
  ASSERT_TRUE(bool(Again));
  EXPECT_EQ(First.allocated(), 2u);
  First.release(*B3);
  First.release(*Again);
  Second.release(*S);
  EXPECT_FALSE(bool(First.clear()));
  EXPECT_FALSE(bool(Second.clear()));
  EXPECT_EQ(A.live(), 0u);
  EXPECT_EQ(Budget.getStats().Used, 0u);
}

TEST(StagingPoolTest, ASerialCopyOnABudgetOfOneBufferNeverHangs) {
  // A serial staged copy with room for one buffer: each copy's completion
  // (another thread) returns its buffer while the caller already asks for
  // the next, whose lease the budget refuses, and a third thread frees idle
  // buffers meanwhile. However these interleave, every acquire ends.
  FakeAllocatorTy A;
  PinnedBudgetTy Budget(Size);
  StagingPoolTy Pool(Size, 4, A.pool(&Budget), "test");
  std::atomic<bool> Stop{false};
  std::thread Reclaimer([&] {
    while (!Stop) {
      Pool.reclaimIdle();
      std::this_thread::yield();
    }
  });
  auto Fut = std::async(std::launch::async, [&] {
    std::thread Completion;
    std::string Failure;
    for (int I = 0; I < 3000 && Failure.empty(); ++I) {
      auto B = Pool.acquire();
      if (Completion.joinable())
        Completion.join();
      if (!B) {
        Failure = takeErrorMessage(B.takeError());
        break;
      }
      StagingBufferTy *Buffer = *B;
      Completion = std::thread([&Pool, Buffer, I] {
        if (I % 3)
          std::this_thread::yield();
        Pool.release(Buffer);
      });
    }
    if (Completion.joinable())
      Completion.join();
    return Failure;
  });
  EXPECT_EQ(within(Fut, "serial acquires on a budget of one buffer", 60), "");
  Stop = true;
  Reclaimer.join();
  EXPECT_FALSE(bool(Pool.clear()));
  EXPECT_EQ(Budget.getStats().Used, 0u);
}

TEST(StagingPoolTest, ReclaimIsSafeWhileCallersUseThePool) {
  // Callers acquire and release while another thread reclaims: every
  // buffer handed out is live, and all are freed exactly once.
  FakeAllocatorTy A;
  PinnedBudgetTy Budget(4 * Size);
  {
    StagingPoolTy Pool(Size, 4, A.pool(&Budget), "test");
    std::atomic<bool> Stop{false};
    std::thread Reclaimer([&] {
      while (!Stop)
        Pool.reclaimIdle();
    });
    std::vector<std::thread> Callers;
    for (int T = 0; T < 3; ++T)
      Callers.emplace_back([&] {
        for (int I = 0; I < 2000; ++I) {
          auto B = Pool.acquire();
          ASSERT_TRUE(bool(B)) << takeErrorMessage(B.takeError());
          std::memset((*B)->Ptr, I, Size);
          Pool.release(*B);
        }
      });
    for (auto &C : Callers)
      C.join();
    Stop = true;
    Reclaimer.join();
    EXPECT_FALSE(bool(Pool.clear()));
  }
  EXPECT_EQ(A.live(), 0u);
  EXPECT_EQ(Budget.getStats().Used, 0u);
}

} // namespace

// SPDX-License-Identifier: Apache-2.0
//
// ResourcePoolTy and PoolLeaseTy: growth, recycling, factory failures, lease
// ownership, and concurrent acquire/release without double hand-outs.
#include "offloadio/ResourcePool.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <atomic>
#include <set>
#include <thread>
#include <vector>

using namespace offloadio;

namespace {

/// A pooled resource that knows who made it and whether someone holds it.
struct ResTy {
  explicit ResTy(int Id, std::atomic<int> &Alive) : Id(Id), Alive(Alive) {
    ++Alive;
  }
  ~ResTy() { --Alive; }
  int Id;
  std::atomic<int> &Alive;
  /// Set by whoever holds the resource; a second holder finds it set.
  std::atomic<bool> InUse{false};
  /// Times forEach visited it.
  int Visits = 0;
};

using PoolTy = ResourcePoolTy<ResTy>;
using LeaseTy = PoolLeaseTy<ResTy>;

/// A factory that counts calls and fails on demand.
struct FactoryStateTy {
  std::atomic<int> Calls{0};
  std::atomic<int> Created{0};
  std::atomic<int> Alive{0};
  /// The 1-based call number that fails (0: none), and whether all calls
  /// from then on fail.
  int FailAt = 0;
  bool FailForever = false;

  PoolTy::FactoryTy factory() {
    return [this]() -> Expected<std::unique_ptr<ResTy>> {
      int Call = ++Calls;
      if (FailAt && (Call == FailAt || (FailForever && Call > FailAt)))
        return makeError(ErrorCode::OutOfResources,
                         "fake factory refused call {0}", Call);
      return std::make_unique<ResTy>(Created++, Alive);
    };
  }
};

ResTy *acquireOk(PoolTy &Pool) {
  Expected<ResTy *> R = Pool.acquire();
  if (!R) {
    ADD_FAILURE() << "acquire failed: " << takeErrorMessage(R.takeError());
    return nullptr;
  }
  EXPECT_NE(*R, nullptr);
  return *R;
}

TEST(ResourcePoolTest, NewPoolIsEmptyAndCreatesNothing) {
  FactoryStateTy F;
  PoolTy Pool(F.factory());
  EXPECT_EQ(Pool.capacity(), 0u);
  EXPECT_EQ(Pool.available(), 0u);
  EXPECT_EQ(F.Calls, 0);
}

TEST(ResourcePoolTest, GrowCreatesAndMakesAvailable) {
  FactoryStateTy F;
  PoolTy Pool(F.factory());
  ASSERT_FALSE(bool(Pool.grow(4)));
  EXPECT_EQ(Pool.capacity(), 4u);
  EXPECT_EQ(Pool.available(), 4u);
  EXPECT_EQ(F.Calls, 4);
  ASSERT_FALSE(bool(Pool.grow(0)));
  EXPECT_EQ(Pool.capacity(), 4u);
  ASSERT_FALSE(bool(Pool.grow(2)));
  EXPECT_EQ(Pool.capacity(), 6u);
  EXPECT_EQ(Pool.available(), 6u);
}

TEST(ResourcePoolTest, AcquireHandsOutDistinctResourcesWithoutCreating) {
  FactoryStateTy F;
  PoolTy Pool(F.factory());
  ASSERT_FALSE(bool(Pool.grow(4)));
  std::set<ResTy *> Got;
  for (int I = 0; I < 4; ++I) {
    ResTy *R = acquireOk(Pool);
    EXPECT_TRUE(Got.insert(R).second) << "resource handed out twice";
    EXPECT_EQ(Pool.available(), size_t(3 - I));
  }
  EXPECT_EQ(F.Calls, 4);
  EXPECT_EQ(Pool.capacity(), 4u);
  for (ResTy *R : Got)
    Pool.release(R);
  EXPECT_EQ(Pool.available(), 4u);
}

TEST(ResourcePoolTest, ReleasedResourceIsReused) {
  FactoryStateTy F;
  PoolTy Pool(F.factory());
  ASSERT_FALSE(bool(Pool.grow(2)));
  ResTy *A = acquireOk(Pool);
  ResTy *B = acquireOk(Pool);
  Pool.release(A);
  EXPECT_EQ(acquireOk(Pool), A);
  Pool.release(B);
  EXPECT_EQ(acquireOk(Pool), B);
  EXPECT_EQ(F.Calls, 2);
  EXPECT_EQ(Pool.available(), 0u);
}

TEST(ResourcePoolTest, AcquireOnEmptyPoolCreatesOne) {
  FactoryStateTy F;
  PoolTy Pool(F.factory());
  ResTy *R = acquireOk(Pool);
  EXPECT_EQ(F.Calls, 1);
  EXPECT_EQ(Pool.capacity(), 1u);
  EXPECT_EQ(Pool.available(), 0u);
  Pool.release(R);
  EXPECT_EQ(Pool.available(), 1u);
}

TEST(ResourcePoolTest, ExhaustedPoolDoubles) {
  FactoryStateTy F;
  PoolTy Pool(F.factory());
  ASSERT_FALSE(bool(Pool.grow(3)));
  std::set<ResTy *> Held;
  // Expected capacity after taking the (I+1)-th resource: 3, 6, 12, 24.
  size_t Expected = 3;
  for (int I = 0; I < 24; ++I) {
    if (size_t(I) == Expected)
      Expected *= 2;
    ResTy *R = acquireOk(Pool);
    ASSERT_TRUE(Held.insert(R).second);
    EXPECT_EQ(Pool.capacity(), Expected) << "after " << I + 1 << " acquires";
    EXPECT_EQ(Pool.available(), Expected - Held.size());
  }
  EXPECT_EQ(F.Calls, 24);
  for (ResTy *R : Held)
    Pool.release(R);
  EXPECT_EQ(Pool.available(), 24u);
}

TEST(ResourcePoolTest, GrowFailurePropagatesAndKeepsWhatWasMade) {
  FactoryStateTy F;
  F.FailAt = 3;
  PoolTy Pool(F.factory());
  Error Err = Pool.grow(5);
  ASSERT_TRUE(bool(Err));
  std::string Msg = takeErrorMessage(std::move(Err));
  EXPECT_NE(Msg.find("fake factory refused call 3"), std::string::npos) << Msg;
  // The pool owns every resource it made, and they are all usable.
  EXPECT_EQ(Pool.capacity(), size_t(F.Created));
  EXPECT_EQ(Pool.available(), Pool.capacity());
  // The factory works again: growth resumes.
  ASSERT_FALSE(bool(Pool.grow(2)));
  EXPECT_EQ(Pool.capacity(), size_t(F.Created));
  std::set<ResTy *> Got;
  for (size_t I = 0, E = Pool.capacity(); I < E; ++I)
    EXPECT_TRUE(Got.insert(acquireOk(Pool)).second);
  for (ResTy *R : Got)
    Pool.release(R);
}

TEST(ResourcePoolTest, AcquireFailurePropagatesAndPoolRecovers) {
  FactoryStateTy F;
  F.FailAt = 1;
  PoolTy Pool(F.factory());
  Expected<ResTy *> R = Pool.acquire();
  ASSERT_FALSE(bool(R));
  EXPECT_EQ(takeErrorCode(R.takeError()), ErrorCode::OutOfResources);
  EXPECT_EQ(Pool.capacity(), 0u);
  EXPECT_EQ(Pool.available(), 0u);
  // The next call succeeds: the failure left nothing half-built.
  ResTy *Ok = acquireOk(Pool);
  EXPECT_EQ(Pool.capacity(), 1u);
  Pool.release(Ok);
}

TEST(ResourcePoolTest, FailedDoublingLeavesHeldResourcesAlone) {
  FactoryStateTy F;
  PoolTy Pool(F.factory());
  ASSERT_FALSE(bool(Pool.grow(2)));
  ResTy *A = acquireOk(Pool);
  ResTy *B = acquireOk(Pool);
  F.FailAt = F.Calls + 1;
  F.FailForever = true;
  Expected<ResTy *> R = Pool.acquire();
  ASSERT_FALSE(bool(R));
  EXPECT_EQ(takeErrorCode(R.takeError()), ErrorCode::OutOfResources);
  EXPECT_EQ(Pool.capacity(), 2u);
  EXPECT_EQ(Pool.available(), 0u);
  // Released resources are served again without the broken factory.
  Pool.release(A);
  EXPECT_EQ(acquireOk(Pool), A);
  Pool.release(A);
  Pool.release(B);
  EXPECT_EQ(Pool.available(), 2u);
}

TEST(ResourcePoolTest, ForEachVisitsHeldAndFreeResources) {
  FactoryStateTy F;
  PoolTy Pool(F.factory());
  ASSERT_FALSE(bool(Pool.grow(5)));
  ResTy *Held1 = acquireOk(Pool);
  ResTy *Held2 = acquireOk(Pool);
  std::set<int> Ids;
  Pool.forEach([&](ResTy &R) {
    ++R.Visits;
    Ids.insert(R.Id);
  });
  EXPECT_EQ(Ids, (std::set<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(Held1->Visits, 1);
  EXPECT_EQ(Held2->Visits, 1);
  int Total = 0;
  Pool.forEach([&](ResTy &R) { Total += R.Visits; });
  EXPECT_EQ(Total, 5);
  // forEach does not change who holds what.
  EXPECT_EQ(Pool.available(), 3u);
  Pool.release(Held1);
  Pool.release(Held2);
}

TEST(ResourcePoolTest, ClearAndDestructionDestroyEverything) {
  FactoryStateTy F;
  {
    PoolTy Pool(F.factory());
    ASSERT_FALSE(bool(Pool.grow(3)));
    EXPECT_EQ(F.Alive, 3);
    Pool.clear();
    EXPECT_EQ(F.Alive, 0);
    EXPECT_EQ(Pool.capacity(), 0u);
    EXPECT_EQ(Pool.available(), 0u);
    // Usable after clear (deinit followed by init).
    ResTy *R = acquireOk(Pool);
    EXPECT_EQ(F.Alive, 1);
    Pool.release(R);
    ASSERT_FALSE(bool(Pool.grow(4)));
    EXPECT_EQ(F.Alive, 5);
  }
  EXPECT_EQ(F.Alive, 0);
}

//===----------------------------------------------------------------------===//
// PoolLeaseTy
//===----------------------------------------------------------------------===//

TEST(ResourcePoolTest, DefaultLeaseIsEmpty) {
  LeaseTy L;
  EXPECT_FALSE(bool(L));
  EXPECT_EQ(L.get(), nullptr);
  L.reset(); // Harmless.
}

TEST(ResourcePoolTest, LeaseReleasesOnDestruction) {
  FactoryStateTy F;
  PoolTy Pool(F.factory());
  ASSERT_FALSE(bool(Pool.grow(2)));
  ResTy *R = acquireOk(Pool);
  {
    LeaseTy L(Pool, R);
    EXPECT_TRUE(bool(L));
    EXPECT_EQ(L.get(), R);
    EXPECT_EQ(&*L, R);
    EXPECT_EQ(L->Id, R->Id);
    EXPECT_EQ(Pool.available(), 1u);
  }
  EXPECT_EQ(Pool.available(), 2u);
}

TEST(ResourcePoolTest, LeaseResetReleasesOnce) {
  FactoryStateTy F;
  PoolTy Pool(F.factory());
  ASSERT_FALSE(bool(Pool.grow(2)));
  LeaseTy L(Pool, acquireOk(Pool));
  L.reset();
  EXPECT_FALSE(bool(L));
  EXPECT_EQ(Pool.available(), 2u);
  L.reset();
  EXPECT_EQ(Pool.available(), 2u);
  // No duplicate on the free list: two acquires give two resources.
  ResTy *A = acquireOk(Pool);
  ResTy *B = acquireOk(Pool);
  EXPECT_NE(A, B);
  EXPECT_EQ(Pool.available(), 0u);
  Pool.release(A);
  Pool.release(B);
}

TEST(ResourcePoolTest, LeaseMoveConstructionTransfersOwnership) {
  FactoryStateTy F;
  PoolTy Pool(F.factory());
  ASSERT_FALSE(bool(Pool.grow(1)));
  ResTy *R = acquireOk(Pool);
  {
    LeaseTy A(Pool, R);
    LeaseTy B(std::move(A));
    EXPECT_FALSE(bool(A));
    EXPECT_EQ(B.get(), R);
    A.reset(); // The moved-from lease owns nothing.
    EXPECT_EQ(Pool.available(), 0u);
  }
  // Released exactly once.
  EXPECT_EQ(Pool.available(), 1u);
}

TEST(ResourcePoolTest, LeaseMoveAssignmentReleasesTheOldResource) {
  FactoryStateTy F;
  PoolTy Pool(F.factory());
  ASSERT_FALSE(bool(Pool.grow(2)));
  ResTy *R1 = acquireOk(Pool);
  ResTy *R2 = acquireOk(Pool);
  {
    LeaseTy A(Pool, R1);
    LeaseTy B(Pool, R2);
    A = std::move(B);
    // R1 went back when A took R2.
    EXPECT_EQ(Pool.available(), 1u);
    EXPECT_EQ(A.get(), R2);
    EXPECT_FALSE(bool(B));
    EXPECT_EQ(acquireOk(Pool), R1);
    Pool.release(R1);
  }
  EXPECT_EQ(Pool.available(), 2u);
}

TEST(ResourcePoolTest, LeaseSelfMoveAssignmentKeepsTheResource) {
  FactoryStateTy F;
  PoolTy Pool(F.factory());
  ASSERT_FALSE(bool(Pool.grow(1)));
  ResTy *R = acquireOk(Pool);
  {
    LeaseTy A(Pool, R);
    LeaseTy &Alias = A; // Through a reference, as a container would do it.
    A = std::move(Alias);
    EXPECT_EQ(A.get(), R);
    EXPECT_EQ(Pool.available(), 0u);
  }
  EXPECT_EQ(Pool.available(), 1u);
}

TEST(ResourcePoolTest, LeasesInAContainer) {
  FactoryStateTy F;
  PoolTy Pool(F.factory());
  {
    std::vector<LeaseTy> Leases;
    for (int I = 0; I < 100; ++I)
      Leases.emplace_back(Pool, acquireOk(Pool)); // Reallocation moves them.
    std::set<ResTy *> Distinct;
    for (auto &L : Leases)
      Distinct.insert(L.get());
    EXPECT_EQ(Distinct.size(), 100u);
    EXPECT_EQ(Pool.available(), Pool.capacity() - 100);
  }
  EXPECT_EQ(Pool.available(), Pool.capacity());
  EXPECT_EQ(Pool.capacity(), 128u); // 1, 2, 4, ..., 128.
}

//===----------------------------------------------------------------------===//
// Concurrency
//===----------------------------------------------------------------------===//

TEST(ResourcePoolTest, ConcurrentAcquireReleaseNeverSharesAResource) {
  constexpr int NumThreads = 8;
  constexpr int Iterations = 20000;
  FactoryStateTy F;
  PoolTy Pool(F.factory());
  ASSERT_FALSE(bool(Pool.grow(1)));
  std::atomic<int> DoubleHandOuts{0};
  std::atomic<int> Failures{0};
  std::atomic<int> Ready{0};

  auto Body = [&](int T) {
    // Start together so the pool has to grow under contention.
    ++Ready;
    while (Ready.load() < NumThreads)
      std::this_thread::yield();
    for (int I = 0; I < Iterations; ++I) {
      Expected<ResTy *> R = Pool.acquire();
      if (!R) {
        llvm::consumeError(R.takeError());
        ++Failures;
        continue;
      }
      if ((*R)->InUse.exchange(true))
        ++DoubleHandOuts;
      // Hold it briefly; sometimes through a lease.
      if ((I + T) % 3 == 0) {
        LeaseTy L(Pool, *R);
        if ((I & 7) == 0)
          std::this_thread::yield();
        if (!L->InUse.exchange(false))
          ++DoubleHandOuts;
      } else {
        if ((I & 7) == 0)
          std::this_thread::yield();
        if (!(*R)->InUse.exchange(false))
          ++DoubleHandOuts;
        Pool.release(*R);
      }
    }
  };
  std::vector<std::thread> Threads;
  for (int T = 0; T < NumThreads; ++T)
    Threads.emplace_back(Body, T);
  for (auto &Th : Threads)
    Th.join();

  EXPECT_EQ(DoubleHandOuts, 0);
  EXPECT_EQ(Failures, 0);
  EXPECT_EQ(Pool.available(), Pool.capacity());
  // The pool grows only when every resource is out; with 8 holders it
  // never needs more than 8 (1, 2, 4, 8).
  EXPECT_LE(Pool.capacity(), size_t(NumThreads));
  EXPECT_EQ(size_t(F.Created), Pool.capacity());
  // Every resource came back exactly once: draining the pool gives each
  // one once.
  std::set<ResTy *> Drained;
  for (size_t I = 0, E = Pool.capacity(); I < E; ++I)
    EXPECT_TRUE(Drained.insert(acquireOk(Pool)).second);
  EXPECT_EQ(Pool.available(), 0u);
  for (ResTy *R : Drained) {
    EXPECT_FALSE(R->InUse.load());
    Pool.release(R);
  }
}

TEST(ResourcePoolTest, ConcurrentForEachWhileAcquiring) {
  // forEach (drain() in the device) runs while other threads use the pool.
  FactoryStateTy F;
  PoolTy Pool(F.factory());
  ASSERT_FALSE(bool(Pool.grow(2)));
  std::atomic<bool> Done{false};
  std::thread Worker([&] {
    for (int I = 0; I < 5000; ++I) {
      ResTy *A = acquireOk(Pool);
      ResTy *B = acquireOk(Pool);
      ResTy *C = acquireOk(Pool);
      if (!A || !B || !C)
        break;
      Pool.release(C);
      Pool.release(B);
      Pool.release(A);
    }
    Done = true;
  });
  // At least one round even if the worker is already done.
  do {
    size_t Seen = 0;
    Pool.forEach([&](ResTy &R) { ++Seen; });
    EXPECT_GE(Seen, 2u);
  } while (!Done.load());
  Worker.join();
  EXPECT_EQ(Pool.capacity(), 4u);
  EXPECT_EQ(Pool.available(), 4u);
}

} // namespace

// SPDX-License-Identifier: Apache-2.0
//
// The host backend's streams and events: ordering, synchronisation, error
// collection, cross-stream events, ring growth and launch argument storage.
//
// Nothing here measures time. Where a test needs a stream to be busy, a
// callback blocks on a gate the test opens, so the state is known, not
// hoped for.
#include "HostStream.h"

#include "llvm/ADT/ScopeExit.h"

#include "gtest/gtest.h"

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

using namespace offloadio;
using namespace offloadio::host;

namespace {

constexpr CopyKindTy Kind = CopyKindTy::HostToHost;

::testing::AssertionResult contains(const std::string &Text,
                                    const std::string &Needle) {
  if (Text.find(Needle) != std::string::npos)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "'" << Text << "' does not contain '" << Needle << "'";
}

/// Consume \p Err, expecting success; prints the message otherwise.
::testing::AssertionResult succeeded(Error Err) {
  if (!Err)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << takeErrorMessage(std::move(Err));
}

/// The code and message of \p Err, which must be an offload-io error.
struct FailureTy {
  bool Failed = false;
  ErrorCode Code = ErrorCode::Success;
  std::string Message;
};
FailureTy failure(Error Err) {
  FailureTy F;
  F.Failed = bool(Err);
  llvm::handleAllErrors(
      std::move(Err),
      [&](const OffloadErrorTy &E) {
        F.Code = E.getCode();
        F.Message = E.getMessage();
      },
      [&](const llvm::ErrorInfoBase &E) {
        F.Code = ErrorCode::Internal;
        F.Message = E.message();
      });
  return F;
}

/// A callback that holds its stream until the test opens the gate.
struct GateTy {
  std::atomic<bool> Open{false};
  std::atomic<bool> Entered{false};

  static Error wait(void *Data) {
    auto *G = static_cast<GateTy *>(Data);
    G->Entered.store(true, std::memory_order_release);
    while (!G->Open.load(std::memory_order_acquire))
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    return Error::success();
  }
  void open() { Open.store(true, std::memory_order_release); }
  /// Wait until the worker is inside the callback.
  void waitEntered() const {
    while (!Entered.load(std::memory_order_acquire))
      std::this_thread::yield();
  }
};

/// Declared after everything queued work touches: on any exit, including a
/// failed ASSERT, it opens the gate and drains the streams before that data
/// goes away.
class UnblockOnExitTy {
public:
  UnblockOnExitTy(GateTy &Gate, std::initializer_list<HostStreamTy *> Streams)
      : Gate(Gate), Streams(Streams) {}
  ~UnblockOnExitTy() {
    Gate.open();
    for (HostStreamTy *S : Streams)
      llvm::consumeError(S->synchronize());
  }

private:
  GateTy &Gate;
  std::vector<HostStreamTy *> Streams;
};

/// Counts its runs. Only the stream's worker touches Count; the test reads
/// it after synchronize(), which must order the two (TSan checks that).
struct CounterTy {
  int Count = 0;
  static Error bump(void *Data) {
    ++static_cast<CounterTy *>(Data)->Count;
    return Error::success();
  }
};

/// A callback that fails with a given code and text.
struct FailTy {
  ErrorCode Code;
  const char *Text;
  int Runs = 0;
  static Error fail(void *Data) {
    auto *F = static_cast<FailTy *>(Data);
    ++F->Runs;
    return makeError(F->Code, "{0}", F->Text);
  }
};

/// Appends its index to a shared vector, so that order can be checked.
struct AppendTy {
  std::vector<size_t> *Order;
  size_t Index;
  static Error append(void *Data) {
    auto *A = static_cast<AppendTy *>(Data);
    A->Order->push_back(A->Index);
    return Error::success();
  }
};

/// A kernel that records the argument values it was launched with.
class FakeLaunchTy final : public HostLaunchTy {
public:
  Error run(void *const *Args, uint32_t NumArgs) const override {
    Calls.emplace_back(Args, Args + NumArgs);
    if (Order)
      Order->push_back(NumArgs ? reinterpret_cast<uintptr_t>(Args[0]) : 0);
    if (FailText)
      return makeError(ErrorCode::InvalidArgument, "{0}", FailText);
    return Error::success();
  }

  mutable std::vector<std::vector<void *>> Calls;
  std::vector<size_t> *Order = nullptr;
  const char *FailText = nullptr;
};

void *argValue(uintptr_t V) { return reinterpret_cast<void *>(V); }

using BufTy = std::array<unsigned char, 256>;

BufTy pattern(unsigned Seed) {
  BufTy B;
  for (size_t I = 0; I < B.size(); ++I)
    B[I] = static_cast<unsigned char>(I * 7 + Seed * 13 + 1);
  return B;
}

//===----------------------------------------------------------------------===//
// One stream
//===----------------------------------------------------------------------===//

TEST(HostStreamTest, NewStreamIsIdle) {
  HostStreamTy S;
  EXPECT_EQ(S.submitted(), 0u);
  EXPECT_TRUE(S.reached(0));
  Expected<bool> Q = S.query();
  ASSERT_TRUE(bool(Q));
  EXPECT_TRUE(*Q);
  EXPECT_TRUE(succeeded(S.synchronize()));
}

TEST(HostStreamTest, DependentCopiesRunInOrder) {
  // Each copy reads what the previous one wrote, so any reordering leaves
  // zeros somewhere down the chain.
  constexpr size_t N = 64;
  std::vector<BufTy> Bufs(N);
  for (auto &B : Bufs)
    B.fill(0);
  Bufs[0] = pattern(1);
  const BufTy Zero{};
  GateTy Gate;
  HostStreamTy S;
  UnblockOnExitTy Unblock(Gate, {&S});

  // Queue everything behind the gate so the worker sees a full queue.
  ASSERT_TRUE(succeeded(S.hostCallback(GateTy::wait, &Gate)));
  for (size_t I = 0; I + 1 < N; ++I)
    ASSERT_TRUE(succeeded(
        S.copyAsync(Bufs[I + 1].data(), Bufs[I].data(), sizeof(BufTy), Kind)));
  // Clearing the source last must not affect the chain.
  ASSERT_TRUE(
      succeeded(S.copyAsync(Bufs[0].data(), Zero.data(), sizeof(BufTy), Kind)));
  EXPECT_EQ(S.submitted(), N + 1);
  Gate.open();
  ASSERT_TRUE(succeeded(S.synchronize()));

  EXPECT_EQ(Bufs[0], Zero);
  for (size_t I = 1; I < N; ++I)
    EXPECT_EQ(Bufs[I], pattern(1)) << "buffer " << I;
}

/// Heap memory standing in for pinned memory, counted.
struct HeapPinnedAllocatorTy final : PinnedAllocatorTy {
  Expected<void *> allocatePinned(size_t Size) override {
    ++Allocations;
    return std::malloc(Size);
  }
  Error freePinned(void *Ptr, size_t) override {
    ++Frees;
    std::free(Ptr);
    return Error::success();
  }
  unsigned Allocations = 0, Frees = 0;
};

TEST(HostStreamTest, CaptureBlocksAreReservedInTheBudget) {
  // A busy stream captures small uploads; each new capture block holds its
  // bytes in the budget until the stream is destroyed.
  PinnedBudgetTy Budget(1ULL << 30);
  HeapPinnedAllocatorTy Heap;
  PinnedPoolTy Pinned(Budget, Heap);
  BufTy Src = pattern(7), Dst{};
  {
    GateTy Gate;
    HostStreamTy S(&Pinned);
    UnblockOnExitTy Unblock(Gate, {&S});
    ASSERT_TRUE(succeeded(S.hostCallback(GateTy::wait, &Gate)));
    ASSERT_TRUE(succeeded(S.copyAsync(Dst.data(), Src.data(), sizeof(BufTy),
                                      CopyKindTy::HostToDevice)));
    EXPECT_EQ(Budget.getStats().Used, HostStreamTy::PageableCaptureLimit);
    // Captured: the source may change at once.
    Src = pattern(8);
    Gate.open();
    ASSERT_TRUE(succeeded(S.synchronize()));
    EXPECT_EQ(Dst, pattern(7));
  }
  EXPECT_EQ(Budget.getStats().Used, 0u);
  EXPECT_EQ(Heap.Allocations, 1u);
  EXPECT_EQ(Heap.Frees, 1u) << "the block goes back with the stream";
}

TEST(HostStreamTest, AnUploadOverBudgetWaitsForTheStreamInstead) {
  // No room for a capture block: copyAsync returns only once the stream
  // has reached the copy, so the caller may still reuse its memory.
  PinnedBudgetTy Budget(HostStreamTy::PageableCaptureLimit - 1);
  HeapPinnedAllocatorTy Heap;
  PinnedPoolTy Pinned(Budget, Heap);
  BufTy Src = pattern(5), Dst{};
  GateTy Gate;
  HostStreamTy S(&Pinned);
  UnblockOnExitTy Unblock(Gate, {&S});
  ASSERT_TRUE(succeeded(S.hostCallback(GateTy::wait, &Gate)));
  std::atomic<bool> Returned{false};
  std::thread Opener([&] {
    Gate.waitEntered();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_FALSE(Returned.load()) << "copyAsync returned before the stream "
                                     "reached the copy";
    Gate.open();
  });
  Error Err = S.copyAsync(Dst.data(), Src.data(), sizeof(BufTy),
                          CopyKindTy::HostToDevice);
  Returned = true;
  Opener.join();
  ASSERT_TRUE(succeeded(std::move(Err)));
  EXPECT_EQ(Dst, pattern(5)) << "done before copyAsync returned";
  EXPECT_EQ(Budget.getStats().Refusals, 1u);
  EXPECT_EQ(Budget.getStats().Used, 0u);
  EXPECT_EQ(Heap.Allocations, 0u) << "nothing allocated past a refusal";
  ASSERT_TRUE(succeeded(S.synchronize()));
}

TEST(HostStreamTest, AnUploadWhoseBlockCannotBeAllocatedWaitsInstead) {
  // The budget has room but the allocator fails: the copy still succeeds,
  // from the caller's memory, and the budget gets its bytes back.
  struct FailingAllocatorTy final : PinnedAllocatorTy {
    Expected<void *> allocatePinned(size_t Size) override {
      return makeErrnoError(ENOMEM, "no pinned memory for {0} bytes", Size);
    }
    Error freePinned(void *, size_t) override { return Error::success(); }
  } Failing;
  PinnedBudgetTy Budget(HostStreamTy::PageableCaptureLimit * 4);
  PinnedPoolTy Pinned(Budget, Failing);
  BufTy Src = pattern(6), Dst{};
  GateTy Gate;
  HostStreamTy S(&Pinned);
  UnblockOnExitTy Unblock(Gate, {&S});
  ASSERT_TRUE(succeeded(S.hostCallback(GateTy::wait, &Gate)));
  std::thread Opener([&] {
    Gate.waitEntered();
    Gate.open();
  });
  Error Err = S.copyAsync(Dst.data(), Src.data(), sizeof(BufTy),
                          CopyKindTy::HostToDevice);
  Opener.join();
  ASSERT_TRUE(succeeded(std::move(Err)));
  EXPECT_EQ(Dst, pattern(6)) << "done before copyAsync returned";
  EXPECT_EQ(Budget.getStats().Used, 0u);
  ASSERT_TRUE(succeeded(S.synchronize()));
}

TEST(HostStreamTest, OverlappingCopyBehavesLikeMemmove) {
  std::vector<unsigned char> Buf(100);
  std::iota(Buf.begin(), Buf.end(), 0);
  HostStreamTy S;
  ASSERT_TRUE(succeeded(S.copyAsync(Buf.data() + 10, Buf.data(), 50, Kind)));
  ASSERT_TRUE(succeeded(S.synchronize()));
  for (int I = 0; I < 50; ++I)
    EXPECT_EQ(Buf[10 + I], I);
}

TEST(HostStreamTest, SynchronizeWaitsForAllWork) {
  constexpr int N = 1000;
  CounterTy Counter;
  std::vector<BufTy> Dst(N);
  const BufTy Src = pattern(2);
  HostStreamTy S;
  for (int I = 0; I < N; ++I) {
    ASSERT_TRUE(succeeded(S.hostCallback(CounterTy::bump, &Counter)));
    ASSERT_TRUE(
        succeeded(S.copyAsync(Dst[I].data(), Src.data(), sizeof(BufTy), Kind)));
  }
  ASSERT_TRUE(succeeded(S.synchronize()));
  EXPECT_EQ(Counter.Count, N);
  for (int I = 0; I < N; ++I)
    EXPECT_EQ(Dst[I], Src) << I;
  EXPECT_EQ(S.submitted(), uint64_t(2 * N));
  EXPECT_TRUE(S.reached(2 * N));
  Expected<bool> Q = S.query();
  ASSERT_TRUE(bool(Q));
  EXPECT_TRUE(*Q);
}

TEST(HostStreamTest, QueryIsFalseWhileACallbackBlocks) {
  GateTy Gate;
  BufTy Src = pattern(3), Dst{};
  HostStreamTy S;
  UnblockOnExitTy Unblock(Gate, {&S});
  ASSERT_TRUE(succeeded(S.hostCallback(GateTy::wait, &Gate)));
  ASSERT_TRUE(
      succeeded(S.copyAsync(Dst.data(), Src.data(), sizeof(BufTy), Kind)));
  HostEventTy Event;
  ASSERT_TRUE(succeeded(S.recordEvent(Event)));

  // Before and after the worker reaches the gate: pending either way.
  for (int Round = 0; Round < 2; ++Round) {
    Expected<bool> Q = S.query();
    ASSERT_TRUE(bool(Q));
    EXPECT_FALSE(*Q) << "round " << Round;
    Expected<bool> EQ = Event.query();
    ASSERT_TRUE(bool(EQ));
    EXPECT_FALSE(*EQ) << "round " << Round;
    EXPECT_FALSE(S.reached(S.submitted()));
    Gate.waitEntered();
  }

  Gate.open();
  ASSERT_TRUE(succeeded(S.synchronize()));
  Expected<bool> Q = S.query();
  ASSERT_TRUE(bool(Q));
  EXPECT_TRUE(*Q);
  Expected<bool> EQ = Event.query();
  ASSERT_TRUE(bool(EQ));
  EXPECT_TRUE(*EQ);
  EXPECT_EQ(Dst, Src);
}

TEST(HostStreamTest, QueryBecomesTrueWithoutSynchronize) {
  CounterTy Counter;
  HostStreamTy S;
  ASSERT_TRUE(succeeded(S.hostCallback(CounterTy::bump, &Counter)));
  // Polling alone must see the work finish (query_async loops like this).
  while (true) {
    Expected<bool> Q = S.query();
    ASSERT_TRUE(bool(Q)) << takeErrorMessage(Q.takeError());
    if (*Q)
      break;
    std::this_thread::yield();
  }
  EXPECT_EQ(Counter.Count, 1);
}

TEST(HostStreamTest, CallbackErrorIsReportedBySynchronizeOnce) {
  FailTy Fail{ErrorCode::InvalidImage, "callback 42 refused"};
  HostStreamTy S;
  ASSERT_TRUE(succeeded(S.hostCallback(FailTy::fail, &Fail)));
  FailureTy F = failure(S.synchronize());
  ASSERT_TRUE(F.Failed);
  EXPECT_EQ(F.Code, ErrorCode::InvalidImage);
  EXPECT_TRUE(contains(F.Message, "callback 42 refused"));
  EXPECT_EQ(Fail.Runs, 1);

  // The error was collected: the stream is clean and works again.
  EXPECT_TRUE(succeeded(S.synchronize()));
  Expected<bool> Q = S.query();
  ASSERT_TRUE(bool(Q));
  EXPECT_TRUE(*Q);
  BufTy Src = pattern(4), Dst{};
  ASSERT_TRUE(
      succeeded(S.copyAsync(Dst.data(), Src.data(), sizeof(BufTy), Kind)));
  EXPECT_TRUE(succeeded(S.synchronize()));
  EXPECT_EQ(Dst, Src);
}

TEST(HostStreamTest, CallbackErrorIsReportedByQueryOnce) {
  FailTy Fail{ErrorCode::Busy, "query sees this"};
  HostStreamTy S;
  ASSERT_TRUE(succeeded(S.hostCallback(FailTy::fail, &Fail)));
  FailureTy F;
  while (true) {
    Expected<bool> Q = S.query();
    if (!Q) {
      F = failure(Q.takeError());
      break;
    }
    ASSERT_FALSE(*Q) << "work finished but its error was not reported";
    std::this_thread::yield();
  }
  EXPECT_EQ(F.Code, ErrorCode::Busy);
  EXPECT_TRUE(contains(F.Message, "query sees this"));
  Expected<bool> Q = S.query();
  ASSERT_TRUE(bool(Q));
  EXPECT_TRUE(*Q);
  EXPECT_TRUE(succeeded(S.synchronize()));
}

TEST(HostStreamTest, ForeignCallbackErrorKeepsItsText) {
  HostStreamTy S;
  ASSERT_TRUE(succeeded(S.hostCallback(
      [](void *) -> Error {
        return llvm::make_error<llvm::StringError>(
            "vendor said no", llvm::inconvertibleErrorCode());
      },
      nullptr)));
  FailureTy F = failure(S.synchronize());
  ASSERT_TRUE(F.Failed);
  EXPECT_EQ(F.Code, ErrorCode::BackendError);
  EXPECT_TRUE(contains(F.Message, "vendor said no"));
  EXPECT_TRUE(succeeded(S.synchronize()));
}

TEST(HostStreamTest, AfterFailureDataWorkIsSkippedButCallbacksRun) {
  FailTy First{ErrorCode::BackendError, "first failure"};
  FailTy Second{ErrorCode::Internal, "second failure"};
  CounterTy Counter;
  FakeLaunchTy Launch;
  void *Args[] = {argValue(1), argValue(2)};
  BufTy Src = pattern(5), Dst{};
  HostStreamTy S;
  ASSERT_TRUE(succeeded(S.hostCallback(FailTy::fail, &First)));
  ASSERT_TRUE(
      succeeded(S.copyAsync(Dst.data(), Src.data(), sizeof(BufTy), Kind)));
  ASSERT_TRUE(succeeded(S.launchAsync(Launch, Args, 2)));
  ASSERT_TRUE(succeeded(S.hostCallback(CounterTy::bump, &Counter)));
  ASSERT_TRUE(succeeded(S.hostCallback(FailTy::fail, &Second)));
  ASSERT_TRUE(succeeded(S.hostCallback(CounterTy::bump, &Counter)));

  FailureTy F = failure(S.synchronize());
  ASSERT_TRUE(F.Failed);
  // The first error wins, with its code.
  EXPECT_EQ(F.Code, ErrorCode::BackendError);
  EXPECT_TRUE(contains(F.Message, "first failure"));
  EXPECT_FALSE(contains(F.Message, "second failure"));
  // Copies and launches after the failure did not run ...
  EXPECT_EQ(Dst, BufTy{});
  EXPECT_TRUE(Launch.Calls.empty());
  // ... callbacks did, the failing one included.
  EXPECT_EQ(Counter.Count, 2);
  EXPECT_EQ(Second.Runs, 1);

  // The later failure was folded into the first, not kept for next time.
  EXPECT_TRUE(succeeded(S.synchronize()));
  // Data work runs again once the error is collected.
  ASSERT_TRUE(
      succeeded(S.copyAsync(Dst.data(), Src.data(), sizeof(BufTy), Kind)));
  ASSERT_TRUE(succeeded(S.launchAsync(Launch, Args, 2)));
  EXPECT_TRUE(succeeded(S.synchronize()));
  EXPECT_EQ(Dst, Src);
  EXPECT_EQ(Launch.Calls.size(), 1u);
}

TEST(HostStreamTest, WaitForReportsWithoutClearing) {
  FailTy Fail{ErrorCode::NotFound, "kept for synchronize"};
  HostStreamTy S;
  ASSERT_TRUE(succeeded(S.hostCallback(FailTy::fail, &Fail)));
  uint64_t End = S.submitted();
  EXPECT_EQ(End, 1u);
  // Work before the failure: no error.
  EXPECT_TRUE(succeeded(S.waitFor(0)));
  for (int I = 0; I < 2; ++I) {
    FailureTy F = failure(S.waitFor(End));
    EXPECT_TRUE(F.Failed);
    EXPECT_EQ(F.Code, ErrorCode::NotFound);
    EXPECT_TRUE(contains(F.Message, "kept for synchronize"));
  }
  FailureTy F = failure(S.synchronize());
  EXPECT_TRUE(F.Failed);
  EXPECT_TRUE(succeeded(S.waitFor(End)));
}

TEST(HostStreamTest, DestructorRunsQueuedWork) {
  CounterTy Counter;
  GateTy Gate;
  {
    HostStreamTy S;
    // Opens the gate, but does not synchronize, on any exit.
    auto Open = llvm::make_scope_exit([&] { Gate.open(); });
    ASSERT_TRUE(succeeded(S.hostCallback(GateTy::wait, &Gate)));
    for (int I = 0; I < 100; ++I)
      ASSERT_TRUE(succeeded(S.hostCallback(CounterTy::bump, &Counter)));
    // No synchronize: the destructor must drain, not drop, the queue.
  }
  EXPECT_EQ(Counter.Count, 100);
}

//===----------------------------------------------------------------------===//
// Kernel launches
//===----------------------------------------------------------------------===//

TEST(HostStreamTest, LaunchCopiesArgumentsInlineAndOnTheHeap) {
  // 3 fits the inline slots, 40 does not; 24 and 25 sit on the boundary.
  const uint32_t Counts[] = {0, 3, 24, 25, 40};
  FakeLaunchTy Launch;
  GateTy Gate;
  std::vector<std::vector<void *>> Want;
  HostStreamTy S;
  UnblockOnExitTy Unblock(Gate, {&S});
  ASSERT_TRUE(succeeded(S.hostCallback(GateTy::wait, &Gate)));
  for (uint32_t N : Counts) {
    std::vector<void *> Args(N);
    for (uint32_t I = 0; I < N; ++I)
      Args[I] = argValue(0x1000 * (N + 1) + I);
    Want.push_back(Args);
    ASSERT_TRUE(succeeded(S.launchAsync(Launch, Args.data(), N)));
    // The caller's array is dead once launchAsync returns.
    std::fill(Args.begin(), Args.end(), argValue(0xdead));
  }
  Gate.open();
  ASSERT_TRUE(succeeded(S.synchronize()));
  ASSERT_EQ(Launch.Calls.size(), std::size(Counts));
  for (size_t I = 0; I < std::size(Counts); ++I)
    EXPECT_EQ(Launch.Calls[I], Want[I]) << Counts[I] << " arguments";
}

TEST(HostStreamTest, LaunchErrorReachesSynchronize) {
  FakeLaunchTy Launch;
  Launch.FailText = "kernel trapped";
  void *Args[40];
  for (uintptr_t I = 0; I < 40; ++I)
    Args[I] = argValue(I);
  HostStreamTy S;
  ASSERT_TRUE(succeeded(S.launchAsync(Launch, Args, 40)));
  FailureTy F = failure(S.synchronize());
  ASSERT_TRUE(F.Failed);
  EXPECT_EQ(F.Code, ErrorCode::InvalidArgument);
  EXPECT_TRUE(contains(F.Message, "kernel trapped"));
  ASSERT_EQ(Launch.Calls.size(), 1u);
  EXPECT_EQ(Launch.Calls[0].size(), 40u);
  EXPECT_TRUE(succeeded(S.synchronize()));
}

//===----------------------------------------------------------------------===//
// Ring growth
//===----------------------------------------------------------------------===//

TEST(HostStreamTest, RingGrowsWhileTheWorkerIsBlocked) {
  // 10,000 operations queue up behind the gate, forcing the ring through
  // many doublings while it is full. Launches with inline and with heap
  // arguments are mixed in, since growth moves them.
  constexpr size_t N = 10000;
  std::vector<size_t> Order;
  Order.reserve(N);
  std::vector<AppendTy> Ctx(N);
  FakeLaunchTy Launch;
  Launch.Order = &Order;
  GateTy Gate;
  HostStreamTy S;
  UnblockOnExitTy Unblock(Gate, {&S});
  ASSERT_TRUE(succeeded(S.hostCallback(GateTy::wait, &Gate)));
  for (size_t I = 0; I < N; ++I) {
    if (I % 7 == 3 || I % 11 == 5) {
      // Argument J is I + J, so the recorder can check every slot.
      uint32_t NumArgs = I % 7 == 3 ? 3 : 40;
      std::vector<void *> Args(NumArgs);
      for (uint32_t J = 0; J < NumArgs; ++J)
        Args[J] = argValue(I + J);
      ASSERT_TRUE(succeeded(S.launchAsync(Launch, Args.data(), NumArgs)));
    } else {
      Ctx[I] = {&Order, I};
      ASSERT_TRUE(succeeded(S.hostCallback(AppendTy::append, &Ctx[I])));
    }
  }
  EXPECT_EQ(S.submitted(), N + 1);
  Expected<bool> Q = S.query();
  ASSERT_TRUE(bool(Q));
  EXPECT_FALSE(*Q);
  Gate.open();
  ASSERT_TRUE(succeeded(S.synchronize()));

  ASSERT_EQ(Order.size(), N);
  for (size_t I = 0; I < N; ++I)
    ASSERT_EQ(Order[I], I) << "operation " << I << " out of order";
  for (const auto &Call : Launch.Calls) {
    uintptr_t First = reinterpret_cast<uintptr_t>(Call[0]);
    ASSERT_TRUE(Call.size() == 3 || Call.size() == 40);
    for (size_t J = 0; J < Call.size(); ++J)
      ASSERT_EQ(reinterpret_cast<uintptr_t>(Call[J]), First + J)
          << "launch " << First << " argument " << J;
  }
  EXPECT_TRUE(S.reached(N + 1));
}

TEST(HostStreamTest, RingWrapsAroundRepeatedly) {
  // Steady traffic far beyond the initial ring size, never full: exercises
  // index wrap-around rather than growth.
  std::vector<size_t> Order;
  std::vector<AppendTy> Ctx(5000);
  HostStreamTy S;
  for (size_t I = 0; I < Ctx.size(); ++I) {
    Ctx[I] = {&Order, I};
    ASSERT_TRUE(succeeded(S.hostCallback(AppendTy::append, &Ctx[I])));
    if (I % 40 == 39)
      ASSERT_TRUE(succeeded(S.synchronize()));
  }
  ASSERT_TRUE(succeeded(S.synchronize()));
  ASSERT_EQ(Order.size(), Ctx.size());
  for (size_t I = 0; I < Order.size(); ++I)
    ASSERT_EQ(Order[I], I);
}

//===----------------------------------------------------------------------===//
// Events
//===----------------------------------------------------------------------===//

TEST(HostStreamTest, UnrecordedEventIsComplete) {
  HostEventTy Event;
  auto [Stream, Seq] = Event.get();
  EXPECT_EQ(Stream, nullptr);
  EXPECT_EQ(Seq, 0u);
  Expected<bool> Q = Event.query();
  ASSERT_TRUE(bool(Q));
  EXPECT_TRUE(*Q);
  EXPECT_TRUE(succeeded(Event.synchronize()));

  HostStreamTy S;
  CounterTy Counter;
  ASSERT_TRUE(succeeded(S.waitEvent(Event)));
  ASSERT_TRUE(succeeded(S.hostCallback(CounterTy::bump, &Counter)));
  EXPECT_TRUE(succeeded(S.synchronize()));
  EXPECT_EQ(Counter.Count, 1);
}

TEST(HostStreamTest, EventRecordsTheCurrentEnd) {
  HostStreamTy S;
  HostEventTy Event;
  CounterTy Counter;
  for (int I = 0; I < 5; ++I)
    ASSERT_TRUE(succeeded(S.hostCallback(CounterTy::bump, &Counter)));
  ASSERT_TRUE(succeeded(S.recordEvent(Event)));
  auto [Stream, Seq] = Event.get();
  EXPECT_EQ(Stream, &S);
  EXPECT_EQ(Seq, 5u);
  EXPECT_TRUE(succeeded(Event.synchronize()));
  // Synchronizing the event waits for the recorded work.
  EXPECT_TRUE(S.reached(5));
  Expected<bool> Q = Event.query();
  ASSERT_TRUE(bool(Q));
  EXPECT_TRUE(*Q);
  EXPECT_TRUE(succeeded(S.synchronize()));
  EXPECT_EQ(Counter.Count, 5);
}

TEST(HostStreamTest, EventCoversOnlyWorkBeforeIt) {
  BufTy Src = pattern(6), Dst{};
  GateTy Gate;
  HostStreamTy S;
  UnblockOnExitTy Unblock(Gate, {&S});
  HostEventTy Before, After;
  ASSERT_TRUE(
      succeeded(S.copyAsync(Dst.data(), Src.data(), sizeof(BufTy), Kind)));
  ASSERT_TRUE(succeeded(S.recordEvent(Before)));
  ASSERT_TRUE(succeeded(S.hostCallback(GateTy::wait, &Gate)));
  ASSERT_TRUE(succeeded(S.recordEvent(After)));

  // Returns although the stream is blocked behind the event.
  EXPECT_TRUE(succeeded(Before.synchronize()));
  EXPECT_EQ(Dst, Src);
  Expected<bool> QB = Before.query();
  ASSERT_TRUE(bool(QB));
  EXPECT_TRUE(*QB);
  Expected<bool> QA = After.query();
  ASSERT_TRUE(bool(QA));
  EXPECT_FALSE(*QA);

  Gate.open();
  EXPECT_TRUE(succeeded(After.synchronize()));
  QA = After.query();
  ASSERT_TRUE(bool(QA));
  EXPECT_TRUE(*QA);
  EXPECT_TRUE(succeeded(S.synchronize()));
}

TEST(HostStreamTest, WaitEventOrdersWorkAcrossStreams) {
  // A is held at the gate with a copy X -> Y behind it; B waits for A's
  // event and then copies Y -> Z, so Z must end up with X's contents.
  BufTy X = pattern(7), Y{}, Z{};
  GateTy Gate;
  HostStreamTy A, B;
  UnblockOnExitTy Unblock(Gate, {&A, &B});
  HostEventTy Event;
  ASSERT_TRUE(succeeded(A.hostCallback(GateTy::wait, &Gate)));
  ASSERT_TRUE(succeeded(A.copyAsync(Y.data(), X.data(), sizeof(BufTy), Kind)));
  ASSERT_TRUE(succeeded(A.recordEvent(Event)));
  ASSERT_TRUE(succeeded(B.waitEvent(Event)));
  ASSERT_TRUE(succeeded(B.copyAsync(Z.data(), Y.data(), sizeof(BufTy), Kind)));

  Gate.waitEntered();
  Expected<bool> QB = B.query();
  ASSERT_TRUE(bool(QB));
  EXPECT_FALSE(*QB) << "B ran past an event of a blocked stream";
  Expected<bool> QE = Event.query();
  ASSERT_TRUE(bool(QE));
  EXPECT_FALSE(*QE);

  Gate.open();
  ASSERT_TRUE(succeeded(B.synchronize()));
  EXPECT_EQ(Z, X);
  // B finishing implies the event completed.
  QE = Event.query();
  ASSERT_TRUE(bool(QE));
  EXPECT_TRUE(*QE);
  EXPECT_TRUE(succeeded(Event.synchronize()));
  EXPECT_TRUE(succeeded(A.synchronize()));
}

TEST(HostStreamTest, WaitOnOwnEventDoesNotDeadlock) {
  BufTy Src = pattern(8), Mid{}, Dst{};
  GateTy Gate;
  HostStreamTy S;
  UnblockOnExitTy Unblock(Gate, {&S});
  HostEventTy Event;
  ASSERT_TRUE(succeeded(S.hostCallback(GateTy::wait, &Gate)));
  ASSERT_TRUE(
      succeeded(S.copyAsync(Mid.data(), Src.data(), sizeof(BufTy), Kind)));
  ASSERT_TRUE(succeeded(S.recordEvent(Event)));
  ASSERT_TRUE(succeeded(S.waitEvent(Event)));
  ASSERT_TRUE(
      succeeded(S.copyAsync(Dst.data(), Mid.data(), sizeof(BufTy), Kind)));
  Gate.open();
  ASSERT_TRUE(succeeded(S.synchronize()));
  EXPECT_EQ(Dst, Src);
}

TEST(HostStreamTest, ErrorBeforeEventReachesTheWaitingStream) {
  FailTy Fail{ErrorCode::Busy, "A broke"};
  CounterTy Counter;
  BufTy Src = pattern(9), Dst{};
  GateTy Gate;
  HostStreamTy A, B;
  UnblockOnExitTy Unblock(Gate, {&A, &B});
  HostEventTy Event;
  ASSERT_TRUE(succeeded(A.hostCallback(GateTy::wait, &Gate)));
  ASSERT_TRUE(succeeded(A.hostCallback(FailTy::fail, &Fail)));
  ASSERT_TRUE(succeeded(A.recordEvent(Event)));
  // A is still at the gate, so B really queues a wait.
  ASSERT_TRUE(succeeded(B.waitEvent(Event)));
  ASSERT_TRUE(
      succeeded(B.copyAsync(Dst.data(), Src.data(), sizeof(BufTy), Kind)));
  ASSERT_TRUE(succeeded(B.hostCallback(CounterTy::bump, &Counter)));
  Gate.open();

  FailureTy FB = failure(B.synchronize());
  ASSERT_TRUE(FB.Failed);
  EXPECT_EQ(FB.Code, ErrorCode::Busy);
  EXPECT_TRUE(contains(FB.Message, "A broke"));
  // B's copy depended on failed work and was skipped; its callback ran.
  EXPECT_EQ(Dst, BufTy{});
  EXPECT_EQ(Counter.Count, 1);
  EXPECT_TRUE(succeeded(B.synchronize()));

  // The event reports A's error too, and leaves it for A's owner.
  FailureTy FE = failure(Event.synchronize());
  EXPECT_TRUE(FE.Failed);
  EXPECT_TRUE(contains(FE.Message, "A broke"));
  FailureTy FA = failure(A.synchronize());
  EXPECT_TRUE(FA.Failed);
  EXPECT_TRUE(contains(FA.Message, "A broke"));
  EXPECT_TRUE(succeeded(A.synchronize()));
}

TEST(HostStreamTest, ErrorAfterEventDoesNotReachTheWaitingStream) {
  FailTy Fail{ErrorCode::BackendError, "after the event"};
  BufTy Src = pattern(10), Dst{};
  GateTy Gate;
  HostStreamTy A, B;
  UnblockOnExitTy Unblock(Gate, {&A, &B});
  HostEventTy Event;
  ASSERT_TRUE(succeeded(A.hostCallback(GateTy::wait, &Gate)));
  ASSERT_TRUE(succeeded(A.recordEvent(Event)));
  ASSERT_TRUE(succeeded(A.hostCallback(FailTy::fail, &Fail)));
  ASSERT_TRUE(succeeded(B.waitEvent(Event)));
  ASSERT_TRUE(
      succeeded(B.copyAsync(Dst.data(), Src.data(), sizeof(BufTy), Kind)));
  Gate.open();
  EXPECT_TRUE(succeeded(B.synchronize()));
  EXPECT_EQ(Dst, Src);
  FailureTy FA = failure(A.synchronize());
  EXPECT_TRUE(FA.Failed);
  EXPECT_TRUE(contains(FA.Message, "after the event"));
}

// The same program as ErrorBeforeEventReachesTheWaitingStream with A
// already past the event when B waits: waitEvent() must treat a completed
// but failed event like a pending one and hand A's error to B, or whether
// B fails would depend on timing.
TEST(HostStreamTest,
     ErrorBeforeCompletedEventReachesTheWaitingStream) {
  FailTy Fail{ErrorCode::Busy, "A broke early"};
  HostStreamTy A, B;
  HostEventTy Event;
  ASSERT_TRUE(succeeded(A.hostCallback(FailTy::fail, &Fail)));
  ASSERT_TRUE(succeeded(A.recordEvent(Event)));
  // A has passed the event; its error is still pending.
  FailureTy FE = failure(Event.synchronize());
  ASSERT_TRUE(FE.Failed);
  ASSERT_TRUE(succeeded(B.waitEvent(Event)));
  FailureTy FB = failure(B.synchronize());
  EXPECT_TRUE(FB.Failed);
  EXPECT_TRUE(contains(FB.Message, "A broke early"));
  llvm::consumeError(A.synchronize());
}

TEST(HostStreamTest, EventPingPongBetweenStreams) {
  // A chain of copies alternating between two streams, each step waiting
  // on the other stream's event. Nothing is gated: the workers race for
  // real, and only the events keep the chain intact.
  constexpr size_t Steps = 300;
  std::vector<std::array<unsigned char, 64>> Bufs(Steps + 1);
  for (auto &B : Bufs)
    B.fill(0);
  for (size_t I = 0; I < Bufs[0].size(); ++I)
    Bufs[0][I] = static_cast<unsigned char>(I + 1);
  HostStreamTy A, B;
  HostEventTy EA, EB;
  for (size_t I = 0; I < Steps; ++I) {
    bool OnA = I % 2 == 0;
    HostStreamTy &S = OnA ? A : B;
    HostEventTy &Mine = OnA ? EA : EB;
    HostEventTy &Theirs = OnA ? EB : EA;
    ASSERT_TRUE(succeeded(S.waitEvent(Theirs)));
    ASSERT_TRUE(
        succeeded(S.copyAsync(Bufs[I + 1].data(), Bufs[I].data(), 64, Kind)));
    // Re-recording is safe: the other stream's wait captured the old point
    // when it was enqueued.
    ASSERT_TRUE(succeeded(S.recordEvent(Mine)));
  }
  EXPECT_TRUE(succeeded(A.synchronize()));
  EXPECT_TRUE(succeeded(B.synchronize()));
  for (size_t I = 1; I <= Steps; ++I)
    ASSERT_EQ(Bufs[I], Bufs[0]) << "step " << I;
}

//===----------------------------------------------------------------------===//
// Concurrent producers
//===----------------------------------------------------------------------===//

/// Checks that one producer's callbacks run in that producer's order.
struct ProducerOpTy {
  int *LastSeen; ///< The producer's last index run; worker-only.
  int Index;
  std::atomic<int> *Violations;
  static Error check(void *Data) {
    auto *Op = static_cast<ProducerOpTy *>(Data);
    if (*Op->LastSeen + 1 != Op->Index)
      ++*Op->Violations;
    *Op->LastSeen = Op->Index;
    return Error::success();
  }
};

TEST(HostStreamTest, ConcurrentProducersKeepTheirOwnOrder) {
  constexpr int NumProducers = 4;
  constexpr int PerProducer = 2500;
  std::vector<int> LastSeen(NumProducers, -1);
  std::vector<std::vector<ProducerOpTy>> Ops(NumProducers);
  std::atomic<int> Violations{0};
  std::atomic<int> EnqueueFailures{0};
  for (int P = 0; P < NumProducers; ++P)
    for (int I = 0; I < PerProducer; ++I)
      Ops[P].push_back({&LastSeen[P], I, &Violations});

  HostStreamTy S;
  std::atomic<bool> Stop{false};
  // A thread polling the stream while it is fed, as query_async would.
  std::thread Poller([&] {
    HostEventTy Event;
    while (!Stop.load()) {
      Expected<bool> Q = S.query();
      if (!Q) {
        llvm::consumeError(Q.takeError());
        ++EnqueueFailures;
      }
      llvm::consumeError(S.recordEvent(Event));
      Expected<bool> EQ = Event.query();
      if (!EQ)
        llvm::consumeError(EQ.takeError());
      std::this_thread::yield();
    }
  });
  std::vector<std::thread> Producers;
  for (int P = 0; P < NumProducers; ++P)
    Producers.emplace_back([&, P] {
      for (auto &Op : Ops[P])
        if (auto Err = S.hostCallback(ProducerOpTy::check, &Op)) {
          llvm::consumeError(std::move(Err));
          ++EnqueueFailures;
        }
    });
  for (auto &T : Producers)
    T.join();
  Stop = true;
  Poller.join();
  ASSERT_TRUE(succeeded(S.synchronize()));
  EXPECT_EQ(Violations, 0);
  EXPECT_EQ(EnqueueFailures, 0);
  for (int P = 0; P < NumProducers; ++P)
    EXPECT_EQ(LastSeen[P], PerProducer - 1) << "producer " << P;
  EXPECT_EQ(S.submitted(), uint64_t(NumProducers * PerProducer));
}

} // namespace

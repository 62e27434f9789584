// SPDX-License-Identifier: Apache-2.0
// PinnedBudgetTy: reservations against a cap, private and process-wide
// accounts, and a randomised run against a model.
#include "offloadio/PinnedBudget.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace offloadio;

namespace {

/// Takes the process's account variable out of the environment for one
/// test and puts the old value back afterwards.
class AccountVariableGuard {
public:
  AccountVariableGuard() {
    if (const char *Old = std::getenv(PinnedBudgetTy::AccountVariable))
      Saved = Old;
    unsetenv(PinnedBudgetTy::AccountVariable);
  }
  ~AccountVariableGuard() {
    if (Saved.empty())
      unsetenv(PinnedBudgetTy::AccountVariable);
    else
      setenv(PinnedBudgetTy::AccountVariable, Saved.c_str(), 1);
  }

private:
  std::string Saved;
};

TEST(PinnedBudgetTest, ReservesUpToTheCapAndNoFurther) {
  PinnedBudgetTy Budget(1000);
  auto A = Budget.reserve(600, "staging buffer");
  ASSERT_TRUE(bool(A));
  EXPECT_EQ(A->size(), 600u);
  auto B = Budget.reserve(400, "file-engine ring");
  ASSERT_TRUE(bool(B));
  EXPECT_EQ(Budget.getStats().Used, 1000u);

  auto C = Budget.reserve(1, "small-download buffer");
  ASSERT_FALSE(bool(C));
  ErrorDetailsTy Details = takeErrorDetails(C.takeError());
  EXPECT_EQ(Details.Code, ErrorCode::OutOfResources);
  EXPECT_NE(Details.Message.find("small-download buffer needs 1 bytes"),
            std::string::npos)
      << Details.Message;
  EXPECT_NE(Details.Message.find("OFFLOADIO_PINNED_MAX"), std::string::npos);
  EXPECT_NE(Details.Message.find("1000 of the 1000 bytes"), std::string::npos)
      << Details.Message;

  A->release();
  EXPECT_EQ(A->size(), 0u);
  EXPECT_EQ(Budget.getStats().Used, 400u);
  auto D = Budget.reserve(600, "staging buffer");
  EXPECT_TRUE(bool(D));

  PinnedBudgetStatsTy Stats = Budget.getStats();
  EXPECT_EQ(Stats.Cap, 1000u);
  EXPECT_EQ(Stats.Peak, 1000u);
  EXPECT_EQ(Stats.Refusals, 1u);
  EXPECT_FALSE(Budget.isShared());
}

TEST(PinnedBudgetTest, OnlyTheFirstTryOfARequestCountsAsARefusal) {
  PinnedBudgetTy Budget(1000);
  auto Held = Budget.reserve(900, "held");
  ASSERT_TRUE(bool(Held));
  for (PinnedTryTy Try :
       {PinnedTryTy::First, PinnedTryTy::Again, PinnedTryTy::Again}) {
    auto Refused = Budget.reserve(200, "retried", nullptr, Try);
    ASSERT_FALSE(bool(Refused));
    // The caller hears of each refusal, counted or not.
    EXPECT_NE(
        takeErrorMessage(Refused.takeError()).find("OFFLOADIO_PINNED_MAX"),
        std::string::npos);
  }
  EXPECT_EQ(Budget.getStats().Refusals, 1u);
  auto Granted = Budget.reserve(100, "granted", nullptr, PinnedTryTy::Again);
  EXPECT_TRUE(bool(Granted));
  EXPECT_EQ(Budget.getStats().Refusals, 1u);
}

TEST(PinnedBudgetTest, ARequestLargerThanTheCapIsRefusedWithoutOverflow) {
  PinnedBudgetTy Budget(100);
  auto Huge = Budget.reserve(SIZE_MAX, "huge");
  EXPECT_FALSE(bool(Huge));
  llvm::consumeError(Huge.takeError());
  EXPECT_EQ(Budget.getStats().Used, 0u);
  auto Zero = Budget.reserve(0, "nothing");
  ASSERT_TRUE(bool(Zero));
  EXPECT_EQ(Zero->size(), 0u);
}

TEST(PinnedBudgetTest, AMovedReservationGivesItsBytesBackOnce) {
  PinnedBudgetTy Budget(100);
  {
    auto A = Budget.reserve(60, "a");
    ASSERT_TRUE(bool(A));
    PinnedReservationTy Moved = std::move(*A);
    EXPECT_EQ(A->size(), 0u);
    EXPECT_EQ(Moved.size(), 60u);
    PinnedReservationTy Assigned;
    auto B = Budget.reserve(30, "b");
    ASSERT_TRUE(bool(B));
    Assigned = std::move(*B);
    // Assigning over a held reservation gives the old bytes back first.
    Assigned = std::move(Moved);
    EXPECT_EQ(Budget.getStats().Used, 60u);
  }
  EXPECT_EQ(Budget.getStats().Used, 0u);
}

TEST(PinnedBudgetTest, RandomisedAgainstAModel) {
  std::mt19937 Rng(1234);
  PinnedBudgetTy Budget(1 << 20);
  std::vector<PinnedReservationTy> Held;
  uint64_t ModelUsed = 0, ModelPeak = 0, ModelRefusals = 0;
  for (int Step = 0; Step < 20000; ++Step) {
    if (Held.empty() || Rng() % 3 != 0) {
      size_t Bytes = Rng() % (1 << 17);
      auto R = Budget.reserve(Bytes, "random");
      if (ModelUsed + Bytes <= (1u << 20)) {
        ASSERT_TRUE(bool(R)) << "step " << Step;
        ModelUsed += Bytes;
        ModelPeak = std::max(ModelPeak, ModelUsed);
        Held.push_back(std::move(*R));
      } else {
        ASSERT_FALSE(bool(R)) << "step " << Step;
        llvm::consumeError(R.takeError());
        ++ModelRefusals;
      }
    } else {
      size_t I = Rng() % Held.size();
      ModelUsed -= Held[I].size();
      std::swap(Held[I], Held.back());
      Held.pop_back();
    }
    PinnedBudgetStatsTy Stats = Budget.getStats();
    ASSERT_EQ(Stats.Used, ModelUsed) << "step " << Step;
    ASSERT_EQ(Stats.Peak, ModelPeak) << "step " << Step;
    ASSERT_EQ(Stats.Refusals, ModelRefusals) << "step " << Step;
  }
}

TEST(PinnedBudgetTest, ConcurrentReservationsNeverExceedTheCap) {
  PinnedBudgetTy Budget(10000);
  std::vector<std::thread> Threads;
  for (int T = 0; T < 4; ++T)
    Threads.emplace_back([&Budget, T] {
      std::mt19937 Rng(T);
      for (int I = 0; I < 5000; ++I) {
        auto R = Budget.reserve(1 + Rng() % 3000, "thread");
        if (!R)
          llvm::consumeError(R.takeError());
      }
    });
  for (auto &T : Threads)
    T.join();
  PinnedBudgetStatsTy Stats = Budget.getStats();
  EXPECT_EQ(Stats.Used, 0u);
  EXPECT_LE(Stats.Peak, 10000u);
  EXPECT_GT(Stats.Peak, 0u);
}

TEST(PinnedBudgetTest, PluginsOfOneProcessShareOneAccount) {
  AccountVariableGuard Guard;
  auto First = PinnedBudgetTy::joinProcessAccount(1000);
  ASSERT_TRUE(bool(First)) << takeErrorMessage(First.takeError());
  EXPECT_TRUE((*First)->isShared());
  const char *Name = std::getenv(PinnedBudgetTy::AccountVariable);
  ASSERT_NE(Name, nullptr);
  EXPECT_EQ(std::string(Name).rfind(std::to_string(getpid()) + ":", 0), 0u)
      << Name;

  // A later plugin joins the same account; its own cap does not apply.
  auto Second = PinnedBudgetTy::joinProcessAccount(5000);
  ASSERT_TRUE(bool(Second)) << takeErrorMessage(Second.takeError());
  EXPECT_EQ((*Second)->getStats().Cap, 1000u);
  auto A = (*First)->reserve(700, "first plugin");
  ASSERT_TRUE(bool(A));
  EXPECT_EQ((*Second)->getStats().Used, 700u);
  auto B = (*Second)->reserve(400, "second plugin");
  ASSERT_FALSE(bool(B));
  llvm::consumeError(B.takeError());
  EXPECT_EQ((*First)->getStats().Refusals, 1u);
  A->release();
  EXPECT_EQ((*Second)->getStats().Used, 0u);
}

TEST(PinnedBudgetTest, AForgedOrStaleAccountVariableIsNotTrusted) {
  AccountVariableGuard Guard;
  // Standard input is no account, another pid's account is not ours, and
  // junk is junk: each gives a fresh account of the cap asked for.
  std::string Forged[] = {std::to_string(getpid()) + ":0",
                          std::to_string(getpid() + 1) + ":3", "junk",
                          std::to_string(getpid()) + ":99999"};
  for (const std::string &Value : Forged) {
    setenv(PinnedBudgetTy::AccountVariable, Value.c_str(), 1);
    auto Budget = PinnedBudgetTy::joinProcessAccount(321);
    ASSERT_TRUE(bool(Budget)) << takeErrorMessage(Budget.takeError());
    EXPECT_EQ((*Budget)->getStats().Cap, 321u) << Value;
    EXPECT_NE(std::string(std::getenv(PinnedBudgetTy::AccountVariable)), Value);
  }
}

TEST(PinnedBudgetTest, AChildAfterForkOpensAnAccountOfItsOwn) {
  AccountVariableGuard Guard;
  auto Parent = PinnedBudgetTy::joinProcessAccount(1000);
  ASSERT_TRUE(bool(Parent)) << takeErrorMessage(Parent.takeError());
  auto Held = (*Parent)->reserve(900, "parent");
  ASSERT_TRUE(bool(Held));
  pid_t Child = fork();
  ASSERT_GE(Child, 0);
  if (Child == 0) {
    // The parent's 900 bytes must not count against the child.
    auto Own = PinnedBudgetTy::joinProcessAccount(1000);
    if (!Own) {
      llvm::consumeError(Own.takeError());
      _exit(2);
    }
    auto R = (*Own)->reserve(900, "child");
    bool Ok = bool(R);
    if (!R)
      llvm::consumeError(R.takeError());
    // A handle that joined in the parent moves to an account of the
    // child's own, and the parent's reservation gives nothing back here.
    auto ViaParent = (*Parent)->reserve(900, "child, through the parent's");
    Ok &= bool(ViaParent);
    if (ViaParent)
      ViaParent->release();
    else
      llvm::consumeError(ViaParent.takeError());
    Held->release();
    _exit(Ok ? 0 : 1);
  }
  int Status = 0;
  ASSERT_EQ(waitpid(Child, &Status, 0), Child);
  ASSERT_TRUE(WIFEXITED(Status));
  EXPECT_EQ(WEXITSTATUS(Status), 0);
  // Nothing the child reserved or released reached the parent's account.
  EXPECT_EQ((*Parent)->getStats().Used, 900u);
}

/// A holder of reservations that gives back those marked idle when asked,
/// unless it is busy with them at that moment (its lock is held).
class FakeHolderTy final : public PinnedReclaimableTy {
public:
  explicit FakeHolderTy(PinnedBudgetTy &Budget) : Budget(Budget) {
    Budget.addReclaimable(*this);
  }
  ~FakeHolderTy() override { Budget.removeReclaimable(*this); }
  /// Reserve \p Bytes; idle ones may be reclaimed.
  bool hold(size_t Bytes, bool Idle) {
    auto R = Budget.reserve(Bytes, "fake holder", this);
    if (!R) {
      llvm::consumeError(R.takeError());
      return false;
    }
    std::lock_guard<std::mutex> Guard(Lock);
    (Idle ? IdleHeld : BusyHeld).push_back(std::move(*R));
    return true;
  }
  /// Give back every reservation.
  void dropAll() {
    std::lock_guard<std::mutex> Guard(Lock);
    IdleHeld.clear();
    BusyHeld.clear();
  }
  size_t reclaimIdle() override {
    std::unique_lock<std::mutex> Guard(Lock, std::try_to_lock);
    if (!Guard)
      return 0;
    ++Asked;
    size_t Bytes = 0;
    for (PinnedReservationTy &R : IdleHeld)
      Bytes += R.size();
    IdleHeld.clear();
    return Bytes;
  }
  PinnedBudgetTy &Budget;
  std::mutex Lock;
  std::vector<PinnedReservationTy> IdleHeld, BusyHeld;
  unsigned Asked = 0;
};

TEST(PinnedBudgetTest, ARefusalFirstTakesBackWhatOtherHoldersKeepIdle) {
  PinnedBudgetTy Budget(1000);
  FakeHolderTy A(Budget), B(Budget);
  ASSERT_TRUE(A.hold(300, /*Idle=*/true));
  ASSERT_TRUE(A.hold(300, /*Idle=*/false));
  ASSERT_TRUE(B.hold(300, /*Idle=*/true));
  EXPECT_EQ(A.Asked + B.Asked, 0u) << "nobody is asked while there is room";
  // 500 do not fit beside 900: the idle 600 go back, the busy 300 stay.
  auto R = Budget.reserve(500, "newcomer");
  ASSERT_TRUE(bool(R)) << takeErrorMessage(R.takeError());
  EXPECT_EQ(A.Asked, 1u);
  EXPECT_EQ(B.Asked, 1u);
  EXPECT_TRUE(A.IdleHeld.empty() && B.IdleHeld.empty());
  EXPECT_EQ(Budget.getStats().Used, 800u);
  EXPECT_EQ(Budget.getStats().Refusals, 0u) << "not refused in the end";
  // Busy memory is not taken: this one is refused, and says why.
  auto Refused = Budget.reserve(300, "another");
  ASSERT_FALSE(bool(Refused));
  EXPECT_NE(takeErrorMessage(Refused.takeError()).find("OFFLOADIO_PINNED_MAX"),
            std::string::npos);
  EXPECT_EQ(Budget.getStats().Refusals, 1u);
  // Nothing can make room for more than the cap: nobody is asked.
  unsigned Asked = A.Asked;
  auto Huge = Budget.reserve(2000, "huge");
  ASSERT_FALSE(bool(Huge));
  llvm::consumeError(Huge.takeError());
  EXPECT_EQ(A.Asked, Asked);
}

TEST(PinnedBudgetTest, WaitingCountsTheRoomThatIsFreeWithWhatBusyHoldersFree) {
  // 600 free now and 100 busy that will be freed: 650 come once the busy
  // holder goes idle, though the busy bytes alone are fewer than 650.
  PinnedBudgetTy Budget(1000);
  FakeHolderTy Busy(Budget);
  ASSERT_TRUE(Busy.hold(100, /*Idle=*/false));
  FakeHolderTy Other(Budget);
  ASSERT_TRUE(Other.hold(300, /*Idle=*/false));
  struct BusyBytesTy final : public PinnedReclaimableTy {
    explicit BusyBytesTy(PinnedBudgetTy &Budget) : Budget(Budget) {
      Budget.addReclaimable(*this);
    }
    ~BusyBytesTy() override { Budget.removeReclaimable(*this); }
    size_t reclaimIdle() override { return 0; }
    size_t busyBytes() const override { return Bytes; }
    PinnedBudgetTy &Budget;
    std::atomic<size_t> Bytes{100};
  } Reporter(Budget);
  std::thread Finisher([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    Busy.dropAll();
    Reporter.Bytes = 0;
  });
  EXPECT_TRUE(Budget.waitForRoom(650, nullptr));
  Finisher.join();
  // Beyond what is free and busy together, it does not wait.
  EXPECT_FALSE(Budget.waitForRoom(800, nullptr));
}

TEST(PinnedBudgetTest, AHolderIsNotAskedForItsOwnReservation) {
  PinnedBudgetTy Budget(1000);
  FakeHolderTy A(Budget), B(Budget);
  ASSERT_TRUE(A.hold(600, /*Idle=*/true));
  ASSERT_TRUE(B.hold(300, /*Idle=*/true));
  // A's own reservation takes B's idle memory, not its own.
  ASSERT_TRUE(A.hold(400, /*Idle=*/false));
  EXPECT_EQ(A.Asked, 0u);
  EXPECT_EQ(B.Asked, 1u);
  EXPECT_EQ(A.IdleHeld.size(), 1u);
  EXPECT_EQ(Budget.getStats().Used, 1000u);
  {
    // A holder that is gone is not asked.
    FakeHolderTy C(Budget);
  }
  A.IdleHeld.clear();
  EXPECT_EQ(Budget.getStats().Used, 400u);
}

TEST(PinnedBudgetTest, ConcurrentRefusalsReclaimWithoutLosingBytes) {
  // Threads hold reservations, keep some idle, and reserve past the cap;
  // the account never exceeds it and ends at zero.
  PinnedBudgetTy Budget(64 << 10);
  std::vector<std::unique_ptr<FakeHolderTy>> Holders;
  for (int T = 0; T < 4; ++T)
    Holders.push_back(std::make_unique<FakeHolderTy>(Budget));
  std::vector<std::thread> Threads;
  for (int T = 0; T < 4; ++T)
    Threads.emplace_back([&, T] {
      std::mt19937 Rng(T);
      for (int I = 0; I < 3000; ++I) {
        Holders[T]->hold(1 + Rng() % (8 << 10), Rng() % 2);
        if (Rng() % 3 == 0)
          Holders[T]->dropAll();
      }
    });
  for (auto &T : Threads)
    T.join();
  EXPECT_LE(Budget.getStats().Peak, 64u << 10);
  unsigned Asked = 0;
  for (auto &H : Holders) {
    Asked += H->Asked;
    H->dropAll();
  }
  EXPECT_GT(Asked, 0u);
  EXPECT_EQ(Budget.getStats().Used, 0u);
}

TEST(PinnedBudgetTest, BuffersFitASmallCap) {
  // An eighth of the cap, in whole pages, never below one page.
  EXPECT_EQ(PinnedBudgetTy(1ULL << 30).fitBuffer(2 << 20), size_t(2) << 20);
  EXPECT_EQ(PinnedBudgetTy(16 << 20).fitBuffer(2 << 20), size_t(2) << 20);
  EXPECT_EQ(PinnedBudgetTy(1 << 20).fitBuffer(2 << 20), size_t(128) << 10);
  EXPECT_EQ(PinnedBudgetTy((1 << 20) + 100).fitBuffer(2 << 20),
            size_t(128) << 10);
  EXPECT_EQ(PinnedBudgetTy(1 << 20).fitBuffer(64 << 10), size_t(64) << 10);
  EXPECT_EQ(PinnedBudgetTy(1000).fitBuffer(2 << 20), size_t(4096));
}

} // namespace

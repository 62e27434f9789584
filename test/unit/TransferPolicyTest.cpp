// SPDX-License-Identifier: Apache-2.0
//
// TransferPolicyTy: the route of each piece of a copy from its lock state,
// its size, the pageable mode and the backend's capture limit, against a
// model written from the documented rules; and the settings' variables,
// the deprecated name included.
#include "offloadio/Envar.h"
#include "offloadio/TransferPolicy.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <random>

using namespace offloadio;

namespace {

/// The rules of docs/errors-and-env.md, written out independently.
CopyRouteTy expectedRoute(PageablePolicyTy Mode, size_t Threshold,
                          size_t CaptureLimit, bool Locked, size_t Size) {
  if (Locked)
    return CopyRouteTy::PinnedDMA;
  if (Mode == PageablePolicyTy::Lock)
    return CopyRouteTy::LockForCopy;
  if (Mode == PageablePolicyTy::Staged)
    return CopyRouteTy::Staged;
  if (CaptureLimit && Size <= CaptureLimit)
    return CopyRouteTy::BackendCaptures;
  return Size >= Threshold ? CopyRouteTy::StagedParallel
                           : CopyRouteTy::Staged;
}

TransferPolicyTy policy(PageablePolicyTy Mode, size_t Threshold,
                        size_t CaptureLimit) {
  TransferSettingsTy Settings;
  Settings.Pageable = Mode;
  Settings.ParallelStagingThreshold = Threshold;
  return TransferPolicyTy(Settings, CaptureLimit);
}

TEST(TransferPolicyTest, LockedPiecesAlwaysGoByDMA) {
  for (auto Mode : {PageablePolicyTy::Auto, PageablePolicyTy::Staged,
                    PageablePolicyTy::Lock})
    for (size_t Size : {size_t(1), size_t(64 << 10), size_t(1) << 30})
      EXPECT_EQ(policy(Mode, 1 << 20, 64 << 10).route(true, Size),
                CopyRouteTy::PinnedDMA)
          << Size;
}

TEST(TransferPolicyTest, AutoModeNeverLocks) {
  auto P = policy(PageablePolicyTy::Auto, 1 << 20, 64 << 10);
  EXPECT_EQ(P.route(false, 1), CopyRouteTy::BackendCaptures);
  EXPECT_EQ(P.route(false, 64 << 10), CopyRouteTy::BackendCaptures);
  EXPECT_EQ(P.route(false, (64 << 10) + 1), CopyRouteTy::Staged);
  EXPECT_EQ(P.route(false, (1 << 20) - 1), CopyRouteTy::Staged);
  EXPECT_EQ(P.route(false, 1 << 20), CopyRouteTy::StagedParallel);
  EXPECT_EQ(P.route(false, size_t(1) << 34), CopyRouteTy::StagedParallel);
}

TEST(TransferPolicyTest, BackendWithoutCaptureStagesSmallCopies) {
  auto P = policy(PageablePolicyTy::Auto, 1 << 20, 0);
  EXPECT_EQ(P.getCaptureLimit(), 0u);
  EXPECT_EQ(P.route(false, 1), CopyRouteTy::Staged);
  EXPECT_EQ(P.route(false, 4096), CopyRouteTy::Staged);
}

TEST(TransferPolicyTest, CaptureLimitComesBeforeTheThreshold) {
  // A threshold below the capture limit does not take small copies away
  // from the backend.
  auto P = policy(PageablePolicyTy::Auto, 0, 64 << 10);
  EXPECT_EQ(P.route(false, 100), CopyRouteTy::BackendCaptures);
  EXPECT_EQ(P.route(false, (64 << 10) + 1), CopyRouteTy::StagedParallel);
}

TEST(TransferPolicyTest, StagedAndLockModesIgnoreSize) {
  for (size_t Size : {size_t(1), size_t(64 << 10), size_t(1) << 30}) {
    EXPECT_EQ(policy(PageablePolicyTy::Staged, 0, 64 << 10).route(false, Size),
              CopyRouteTy::Staged);
    EXPECT_EQ(policy(PageablePolicyTy::Lock, 0, 64 << 10).route(false, Size),
              CopyRouteTy::LockForCopy);
  }
}

TEST(TransferPolicyTest, RandomCasesMatchTheModel) {
  std::mt19937_64 Rng(14);
  const PageablePolicyTy Modes[] = {PageablePolicyTy::Auto,
                                    PageablePolicyTy::Staged,
                                    PageablePolicyTy::Lock};
  for (int I = 0; I < 20000; ++I) {
    auto Mode = Modes[Rng() % 3];
    size_t Threshold = Rng() % 4 ? size_t(1) << (Rng() % 32) : Rng() % 4096;
    size_t Limit = Rng() % 3 ? size_t(64 << 10) : Rng() % 8192;
    bool Locked = Rng() % 4 == 0;
    size_t Size = 1 + (size_t(Rng()) >> (Rng() % 60));
    EXPECT_EQ(policy(Mode, Threshold, Limit).route(Locked, Size),
              expectedRoute(Mode, Threshold, Limit, Locked, Size))
        << "mode " << int(Mode) << " threshold " << Threshold << " limit "
        << Limit << " locked " << Locked << " size " << Size;
  }
}

/// The settings' variables, unset around each test.
class TransferSettingsEnvTest : public ::testing::Test {
protected:
  void SetUp() override { clear(); }
  void TearDown() override { clear(); }
  static void clear() {
    for (const char *V :
         {"OFFLOADIO_PAGEABLE_PATH", "OFFLOADIO_PARALLEL_STAGING_THRESHOLD",
          "OFFLOADIO_LOCK_THRESHOLD",
          "OFFLOADIO_REPORTED_DEPRECATED_OFFLOADIO_LOCK_THRESHOLD"})
      unsetenv(V);
  }
};

TEST_F(TransferSettingsEnvTest, Defaults) {
  auto S = TransferSettingsTy::fromEnv();
  EXPECT_EQ(S.Pageable, PageablePolicyTy::Auto);
  EXPECT_EQ(S.ParallelStagingThreshold, size_t(1) << 20);
}

TEST_F(TransferSettingsEnvTest, NewNameIsRead) {
  setenv("OFFLOADIO_PAGEABLE_PATH", "staged", 1);
  setenv("OFFLOADIO_PARALLEL_STAGING_THRESHOLD", "256K", 1);
  auto S = TransferSettingsTy::fromEnv();
  EXPECT_EQ(S.Pageable, PageablePolicyTy::Staged);
  EXPECT_EQ(S.ParallelStagingThreshold, size_t(256) << 10);
}

TEST_F(TransferSettingsEnvTest, OldNameStillWorksAndWarnsOnce) {
  setenv("OFFLOADIO_LOCK_THRESHOLD", "32K", 1);
  testing::internal::CaptureStderr();
  auto S = TransferSettingsTy::fromEnv();
  auto Again = TransferSettingsTy::fromEnv();
  std::string Err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(S.ParallelStagingThreshold, size_t(32) << 10);
  EXPECT_EQ(Again.ParallelStagingThreshold, size_t(32) << 10);
  const std::string Warning =
      "OFFLOADIO_LOCK_THRESHOLD is deprecated; use "
      "OFFLOADIO_PARALLEL_STAGING_THRESHOLD";
  size_t First = Err.find(Warning);
  ASSERT_NE(First, std::string::npos) << Err;
  EXPECT_EQ(Err.find(Warning, First + 1), std::string::npos)
      << "warned twice: " << Err;
}

TEST_F(TransferSettingsEnvTest, NewNameWinsOverTheOld) {
  setenv("OFFLOADIO_LOCK_THRESHOLD", "32K", 1);
  setenv("OFFLOADIO_PARALLEL_STAGING_THRESHOLD", "2M", 1);
  testing::internal::CaptureStderr();
  auto S = TransferSettingsTy::fromEnv();
  std::string Err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(S.ParallelStagingThreshold, size_t(2) << 20);
  EXPECT_NE(Err.find("deprecated"), std::string::npos) << Err;
}

} // namespace

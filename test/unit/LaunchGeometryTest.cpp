// SPDX-License-Identifier: Apache-2.0
//
// deriveLaunchLimits, the one place that turns what a backend reports into
// a device's launch limits: each clamp (the vendor's caps, the grid's
// threads, the defaults within the maxima, nothing below 1), the OpenMP
// variables replacing the defaults within the device's bounds, the figures
// the backends report giving the limits they had before, and limits
// already within bounds coming out unchanged (the per-launch rules,
// computeLaunchDims, are KernelDimsTest's).
#include "offloadio/LaunchGeometry.h"
#include "offloadio/Device.h"

#include "gtest/gtest.h"

#include <random>

using namespace offloadio;

namespace {

DeviceLimitsTy derived(DeviceLimitsTy L, uint32_t OmpNumTeams = 0,
                       uint32_t OmpThreadLimit = 0) {
  deriveLaunchLimits(L, OmpNumTeams, OmpThreadLimit);
  return L;
}

TEST(LaunchGeometryTest, TheVendorsCapsBoundTheDevicesMaxima) {
  DeviceLimitsTy L;
  L.MaxThreads = 2048;
  L.ThreadsCap = 1024;
  L.MaxTeams = 1u << 30;
  L.TeamsCap = 1u << 20;
  L.DefaultThreads = 256;
  L.DefaultTeams = 440;
  DeviceLimitsTy D = derived(L);
  EXPECT_EQ(D.MaxThreads, 1024u);
  EXPECT_EQ(D.MaxTeams, 1u << 20);
  EXPECT_EQ(D.DefaultThreads, 256u);
  EXPECT_EQ(D.DefaultTeams, 440u);
}

TEST(LaunchGeometryTest, TheGridsThreadsBoundTheTeams) {
  DeviceLimitsTy L;
  L.MaxThreads = 1024;
  L.MaxTeams = UINT32_MAX;
  L.MaxGridThreads = 1024 * 1000 + 1023;
  L.DefaultTeams = 5000;
  L.DefaultThreads = 256;
  DeviceLimitsTy D = derived(L);
  EXPECT_EQ(D.MaxTeams, 1000u) << "whole teams of the largest size";
  EXPECT_EQ(D.DefaultTeams, 1000u);
  // A grid smaller than one team of the largest size still has a team.
  L.MaxGridThreads = 100;
  EXPECT_EQ(derived(L).MaxTeams, 1u);
}

TEST(LaunchGeometryTest, DefaultsStayWithinTheMaximaAndNothingIsZero) {
  DeviceLimitsTy L;
  L.MaxThreads = 64;
  L.MaxTeams = 8;
  L.DefaultThreads = 128;
  L.DefaultTeams = 3200;
  DeviceLimitsTy D = derived(L);
  EXPECT_EQ(D.DefaultThreads, 64u);
  EXPECT_EQ(D.DefaultTeams, 8u);

  DeviceLimitsTy Zero;
  Zero.MaxThreads = Zero.MaxTeams = Zero.DefaultThreads = Zero.DefaultTeams = 0;
  D = derived(Zero);
  EXPECT_EQ(D.MaxThreads, 1u);
  EXPECT_EQ(D.MaxTeams, 1u);
  EXPECT_EQ(D.DefaultThreads, 1u);
  EXPECT_EQ(D.DefaultTeams, 1u);
}

TEST(LaunchGeometryTest, OmpVariablesReplaceTheDefaultsWithinTheDevice) {
  DeviceLimitsTy L;
  L.MaxThreads = 256;
  L.MaxTeams = 1024;
  L.DefaultThreads = 128;
  L.DefaultTeams = 64;
  DeviceLimitsTy D = derived(L, 16, 32);
  EXPECT_EQ(D.DefaultTeams, 16u);
  EXPECT_EQ(D.DefaultThreads, 32u);
  D = derived(L, 5000, 100000);
  EXPECT_EQ(D.DefaultTeams, 1024u);
  EXPECT_EQ(D.DefaultThreads, 256u);
  // 0: not set.
  D = derived(L, 0, 0);
  EXPECT_EQ(D.DefaultTeams, 64u);
  EXPECT_EQ(D.DefaultThreads, 128u);
}

TEST(LaunchGeometryTest, TheBackendsFiguresGiveTheLimitsTheyHadBefore) {
  // An AMDGPU agent (gfx90a): 1024-thread work-groups, a grid of 2^32-1
  // work-items, 104 compute units.
  DeviceLimitsTy AMD;
  AMD.MaxThreads = 1024;
  AMD.ThreadsCap = 1024;
  AMD.MaxTeams = UINT32_MAX;
  AMD.TeamsCap = 1u << 20;
  AMD.MaxGridThreads = UINT32_MAX;
  AMD.DefaultThreads = 256;
  AMD.DefaultTeams = 104 * 4;
  DeviceLimitsTy D = derived(AMD);
  EXPECT_EQ(D.MaxThreads, 1024u);
  EXPECT_EQ(D.MaxTeams, std::min<uint32_t>(UINT32_MAX / 1024, 1u << 20));
  EXPECT_EQ(D.DefaultThreads, 256u);
  EXPECT_EQ(D.DefaultTeams, 416u);
  // A CUDA device: 1024-thread blocks, 2^31-1 blocks.
  DeviceLimitsTy NV;
  NV.MaxThreads = 1024;
  NV.MaxTeams = 2147483647u;
  NV.DefaultThreads = 128;
  NV.DefaultTeams = 3200;
  D = derived(NV);
  EXPECT_EQ(D.MaxThreads, 1024u);
  EXPECT_EQ(D.MaxTeams, 2147483647u);
  EXPECT_EQ(D.DefaultThreads, 128u);
  EXPECT_EQ(D.DefaultTeams, 3200u);
  // The host: one team of one thread.
  DeviceLimitsTy Host;
  D = derived(Host);
  EXPECT_EQ(D.MaxThreads, 1u);
  EXPECT_EQ(D.MaxTeams, 1u);
  EXPECT_EQ(D.DefaultThreads, 1u);
  EXPECT_EQ(D.DefaultTeams, 1u);
}

TEST(LaunchGeometryTest, DerivedLimitsAreAFixedPoint) {
  std::mt19937 Rng(42);
  auto Pick = [&](std::initializer_list<uint64_t> Values) {
    return *(Values.begin() + Rng() % Values.size());
  };
  for (unsigned Run = 0; Run < 2000; ++Run) {
    DeviceLimitsTy L;
    L.MaxThreads = uint32_t(Pick({0, 1, 64, 1024, 4096}));
    L.ThreadsCap = uint32_t(Pick({1024, UINT32_MAX}));
    L.MaxTeams = uint32_t(Pick({0, 1, 7, 65536, UINT32_MAX}));
    L.TeamsCap = uint32_t(Pick({1u << 20, UINT32_MAX}));
    L.MaxGridThreads = Pick({0, 100, 1 << 20, UINT32_MAX});
    L.DefaultThreads = uint32_t(Pick({0, 1, 128, 256, 2048}));
    L.DefaultTeams = uint32_t(Pick({0, 1, 440, 3200, 1u << 24}));
    uint32_t Teams = uint32_t(Pick({0, 3, 1u << 30}));
    uint32_t Threads = uint32_t(Pick({0, 5, 1u << 30}));
    DeviceLimitsTy D = derived(L, Teams, Threads);
    ASSERT_GE(D.MaxThreads, 1u);
    ASSERT_GE(D.MaxTeams, 1u);
    ASSERT_LE(D.MaxThreads, L.ThreadsCap);
    ASSERT_LE(D.MaxTeams, L.TeamsCap);
    if (L.MaxGridThreads >= D.MaxThreads)
      ASSERT_LE(uint64_t(D.MaxTeams) * D.MaxThreads, L.MaxGridThreads);
    ASSERT_GE(D.DefaultThreads, 1u);
    ASSERT_LE(D.DefaultThreads, D.MaxThreads);
    ASSERT_GE(D.DefaultTeams, 1u);
    ASSERT_LE(D.DefaultTeams, D.MaxTeams);
    // Deriving again changes nothing.
    DeviceLimitsTy Again = derived(D);
    ASSERT_EQ(Again.MaxThreads, D.MaxThreads);
    ASSERT_EQ(Again.MaxTeams, D.MaxTeams);
    ASSERT_EQ(Again.DefaultThreads, D.DefaultThreads);
    ASSERT_EQ(Again.DefaultTeams, D.DefaultTeams);
  }
}

} // namespace

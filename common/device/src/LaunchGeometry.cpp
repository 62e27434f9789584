// SPDX-License-Identifier: Apache-2.0
#include "offloadio/LaunchGeometry.h"
#include "offloadio/Device.h"

#include <algorithm>

using namespace offloadio;

void offloadio::deriveLaunchLimits(DeviceLimitsTy &Limits, uint32_t OmpNumTeams,
                                   uint32_t OmpTeamsThreadLimit) {
  Limits.MaxThreads =
      std::max(1u, std::min(Limits.MaxThreads, Limits.ThreadsCap));
  uint64_t Teams = std::min(Limits.MaxTeams, Limits.TeamsCap);
  if (Limits.MaxGridThreads)
    Teams =
        std::min<uint64_t>(Teams, Limits.MaxGridThreads / Limits.MaxThreads);
  Limits.MaxTeams = uint32_t(std::max<uint64_t>(1, Teams));
  // The OpenMP variables replace the backend's defaults, as upstream
  // plugins do; the device bounds both.
  uint32_t Threads =
      OmpTeamsThreadLimit ? OmpTeamsThreadLimit : Limits.DefaultThreads;
  Limits.DefaultThreads = std::max(1u, std::min(Threads, Limits.MaxThreads));
  uint32_t DefaultTeams = OmpNumTeams ? OmpNumTeams : Limits.DefaultTeams;
  Limits.DefaultTeams = std::max(1u, std::min(DefaultTeams, Limits.MaxTeams));
}

namespace {

/// Ceiling of \p A / \p B without the sum that wraps near 2^64.
uint64_t divideRoundingUp(uint64_t A, uint64_t B) {
  return A / B + (A % B != 0);
}

/// Smallest power of two not below \p Value (Value >= 1).
uint64_t powerOfTwoAtLeast(uint64_t Value) {
  uint64_t P = 1;
  while (P < Value && P < (uint64_t(1) << 63))
    P <<= 1;
  return P;
}

} // namespace

LaunchDimsTy offloadio::computeLaunchDims(const DeviceLimitsTy &Limits,
                                          uint32_t KernelMaxThreads,
                                          const KernelConfigTy &Config,
                                          const GeometryRulesTy &Rules,
                                          uint32_t MinThreadsForLowTripCount,
                                          const KernelArgsTy &KernelArgs) {
  LaunchDimsTy Dims;
  const ExecModeTy Mode = Config.ExecMode;
  const bool Bare = Rules.BareKernelsTakeClauses && Config.IsBare;
  uint32_t MaxThreads =
      std::max(1u, std::min(KernelMaxThreads, Limits.MaxThreads));
  uint64_t Preferred = Limits.DefaultThreads;
  if (Rules.KernelThreadBounds) {
    if (Config.MaxThreads > 0)
      MaxThreads = std::min(MaxThreads, Config.MaxThreads);
    if (Config.MinThreads > 0)
      Preferred = std::max<uint64_t>(Preferred, Config.MinThreads);
  }

  uint64_t Threads = Preferred;
  if (Bare && KernelArgs.ThreadLimit[0] > 0) {
    Threads = KernelArgs.ThreadLimit[0];
  } else {
    if (KernelArgs.ThreadLimit[0] > 0) {
      // The device runtime gives a generic-mode team's parallel regions all
      // threads but one warp's, so the clause's count comes on top of it.
      Threads = KernelArgs.ThreadLimit[0];
      if (Mode == ExecModeTy::Generic)
        Threads += Limits.WarpSize;
    }
    Threads = std::min<uint64_t>(Threads, MaxThreads);
  }
  uint64_t NumThreads = std::max<uint64_t>(1, Threads);

  uint64_t Teams;
  if (Bare && KernelArgs.NumTeams[0] > 0) {
    Teams = KernelArgs.NumTeams[0];
  } else if (KernelArgs.NumTeams[0] > 0) {
    Teams = std::min(KernelArgs.NumTeams[0], Limits.MaxTeams);
  } else {
    const uint64_t Default = Limits.DefaultTeams;
    Teams = Default;
    if (uint64_t Trip = KernelArgs.Tripcount) {
      uint64_t TripTeams;
      if (Mode != ExecModeTy::SPMD) {
        // Generic and generic-SPMD: the trip count is the distribute loop's
        // alone (the nested parallel loop is inside each iteration), so one
        // team per iteration.
        TripTeams = Trip;
      } else if (!Rules.LowTripCountThreads ||
                 Trip / NumThreads >= Default ||
                 (Rules.ThreadLimitClauseKeepsThreads &&
                  KernelArgs.ThreadLimit[0] > 0)) {
        // SPMD: every thread takes one iteration.
        TripTeams = divideRoundingUp(Trip, NumThreads);
      } else {
        // Too short a loop to fill the default teams with full blocks:
        // fewer threads per team (a power of two, never more than asked
        // for, never below the minimum) for more teams.
        uint64_t MinThreads = std::max<uint64_t>(
            1, std::min<uint64_t>(MinThreadsForLowTripCount, NumThreads));
        if (Trip / MinThreads >= Default)
          NumThreads = std::min(
              NumThreads, powerOfTwoAtLeast(divideRoundingUp(Trip, Default)));
        else
          NumThreads = MinThreads;
        TripTeams = divideRoundingUp(Trip, NumThreads);
      }
      // Long loops are capped at the default so that teams are reused.
      Teams = std::min(TripTeams, Default);
    }
    Teams = std::min<uint64_t>(Teams, Limits.MaxTeams);
  }
  Dims.NumThreads = uint32_t(std::min<uint64_t>(NumThreads, UINT32_MAX));
  Dims.NumTeams = uint32_t(std::max<uint64_t>(1, std::min<uint64_t>(Teams, UINT32_MAX)));
  return Dims;
}

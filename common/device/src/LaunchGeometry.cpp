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

LaunchDimsTy offloadio::computeLaunchDims(const DeviceLimitsTy &Limits,
                                          uint32_t KernelMaxThreads,
                                          ExecModeTy Mode,
                                          const KernelArgsTy &KernelArgs) {
  LaunchDimsTy Dims;
  uint32_t MaxThreads =
      std::max(1u, std::min(KernelMaxThreads, Limits.MaxThreads));
  uint64_t Threads = Limits.DefaultThreads;
  if (KernelArgs.ThreadLimit[0] > 0) {
    // The device runtime gives a generic-mode team's parallel regions all
    // threads but one warp's, so the clause's count comes on top of it.
    Threads = KernelArgs.ThreadLimit[0];
    if (Mode == ExecModeTy::Generic)
      Threads += Limits.WarpSize;
  }
  Dims.NumThreads =
      uint32_t(std::max<uint64_t>(1, std::min<uint64_t>(Threads, MaxThreads)));

  uint64_t Teams;
  if (KernelArgs.NumTeams[0] > 0) {
    Teams = std::min(KernelArgs.NumTeams[0], Limits.MaxTeams);
  } else {
    Teams = Limits.DefaultTeams;
    if (uint64_t Trip = KernelArgs.Tripcount) {
      // SPMD: every thread takes one iteration. Generic and generic-SPMD:
      // the trip count is the distribute loop's alone (the nested parallel
      // loop is inside each iteration), so one team per iteration. Long
      // loops are capped at the default so that teams are reused. Rounded
      // up without the sum that wraps near 2^64.
      uint64_t TripTeams =
          Mode == ExecModeTy::SPMD
              ? Trip / Dims.NumThreads + (Trip % Dims.NumThreads != 0)
              : Trip;
      Teams = std::min<uint64_t>(TripTeams, Limits.DefaultTeams);
    }
    Teams = std::min<uint64_t>(Teams, Limits.MaxTeams);
  }
  Dims.NumTeams = uint32_t(std::max<uint64_t>(1, Teams));
  return Dims;
}

// SPDX-License-Identifier: Apache-2.0
//
// Launch geometry, computed here alone: the teams and threads a device
// allows and defaults to (deriveLaunchLimits, once per device at init),
// and those of each launch (computeLaunchDims). Backends only report their
// device's numbers in DeviceLimitsTy (Device.h); kernels only report the
// largest team their code allows (GenericKernelTy::getMaxThreads). The
// rules are those of the stock NextGen plugins of the libomptarget version
// served (GeometryRulesTy says where they differ), so that a program sees
// the teams and threads it sees with the stock plugin.
#ifndef OFFLOADIO_LAUNCHGEOMETRY_H
#define OFFLOADIO_LAUNCHGEOMETRY_H

#include "offloadio/ABI.h"

#include <cstdint>

namespace offloadio {

struct DeviceLimitsTy;

/// Grid of one launch.
struct LaunchDimsTy {
  uint32_t NumTeams = 1;   ///< Blocks / work-groups.
  uint32_t NumThreads = 1; ///< Threads per team, as launched.
};

/// The values clang 16 stores in the int8 global <kernel>_exec_mode
/// (OMPTgtExecModeFlags).
enum class ExecModeTy : int8_t {
  /// One thread of the team's last warp runs the region and wakes the
  /// others for parallel regions.
  Generic = 1,
  /// Every thread runs the region.
  SPMD = 2,
  /// Generic code that the compiler turned into SPMD code.
  GenericSPMD = 3,
};

/// What a kernel's image records about how it must be launched.
struct KernelConfigTy {
  ExecModeTy ExecMode = ExecModeTy::SPMD;
  /// The image records no configuration for the kernel (libomptarget 18:
  /// no <kernel>_kernel_environment, as for every host kernel): its
  /// num_teams and thread_limit clauses are taken as they are.
  bool IsBare = false;
  /// Fewest threads per team the kernel wants; 0: not recorded.
  uint32_t MinThreads = 0;
  /// Most threads per team the kernel's code allows; 0: not recorded.
  uint32_t MaxThreads = 0;
  /// Bytes of one team's reduction data, and how many teams' data the
  /// reduction buffer holds; both non-zero when the kernel has a teams
  /// reduction that needs a buffer from the plugin (libomptarget 18).
  uint32_t ReductionDataSize = 0;
  uint32_t ReductionBufferLength = 0;

  /// Whether a launch must allocate a reduction buffer.
  bool needsReductionBuffer() const {
    return ReductionDataSize && ReductionBufferLength;
  }
};

/// Where the launch-geometry rules of libomptarget versions differ.
struct GeometryRulesTy {
  /// 17 and later: an SPMD loop too short to give every default team a
  /// full block of threads gets fewer threads per team, down to
  /// LIBOMPTARGET_MIN_THREADS_FOR_LOW_TRIP_COUNT, and more teams.
  bool LowTripCountThreads = false;
  /// 18: the thread_limit clause disables that lowering.
  bool ThreadLimitClauseKeepsThreads = false;
  /// 18: a bare kernel (KernelConfigTy::IsBare) gets its num_teams and
  /// thread_limit clauses unclamped.
  bool BareKernelsTakeClauses = false;
  /// 18: the kernel's recorded MinThreads raises, and MaxThreads lowers,
  /// the threads per team.
  bool KernelThreadBounds = false;
};

/// Turn what a backend reported in \p Limits into the device's launch
/// limits, in place:
/// - MaxThreads: the device's, within ThreadsCap, at least 1;
/// - MaxTeams: the device's, within TeamsCap and the grid's threads
///   (MaxGridThreads / MaxThreads), at least 1;
/// - DefaultThreads: \p OmpTeamsThreadLimit (OMP_TEAMS_THREAD_LIMIT) if
///   not 0, else the backend's; within 1..MaxThreads;
/// - DefaultTeams: \p OmpNumTeams (OMP_NUM_TEAMS) if not 0, else the
///   backend's; within 1..MaxTeams.
/// Limits already within those bounds come out unchanged.
void deriveLaunchLimits(DeviceLimitsTy &Limits, uint32_t OmpNumTeams,
                        uint32_t OmpTeamsThreadLimit);

/// The geometry of one launch, by libomptarget 16's rules, changed as
/// \p Rules say for later versions (\p MinThreadsForLowTripCount is
/// LIBOMPTARGET_MIN_THREADS_FOR_LOW_TRIP_COUNT):
/// - threads: the thread_limit clause, plus one warp in generic mode (the
///   main thread's, so that parallel regions get the threads asked for),
///   else the device default; capped by the device and the kernel;
/// - teams: the num_teams clause capped by the device; else, with a loop
///   trip count, one team per thread-block of iterations in SPMD mode and
///   one per distribute iteration in generic and generic-SPMD mode; long
///   loops are capped at the device default so that teams are reused.
/// \p KernelMaxThreads is the largest block the compiled kernel allows.
LaunchDimsTy computeLaunchDims(const DeviceLimitsTy &Limits,
                               uint32_t KernelMaxThreads,
                               const KernelConfigTy &Config,
                               const GeometryRulesTy &Rules,
                               uint32_t MinThreadsForLowTripCount,
                               const KernelArgsTy &KernelArgs);

} // namespace offloadio

#endif // OFFLOADIO_LAUNCHGEOMETRY_H

// SPDX-License-Identifier: Apache-2.0
//
// TransferPolicyTy: which route each piece of a host <-> device copy takes,
// from whether the piece is locked, its size, the pageable-copy mode the
// program chose and what the backend captures at enqueue. The device's copy
// code (DeviceTransfers.cpp) asks it and carries the answer out; nothing
// else decides a route.
#ifndef OFFLOADIO_TRANSFERPOLICY_H
#define OFFLOADIO_TRANSFERPOLICY_H

#include "offloadio/SettingTable.h"

#include <cstddef>

namespace offloadio {

/// How copies from and to memory that is not locked are served
/// (OFFLOADIO_PAGEABLE_PATH).
enum class PageablePolicyTy {
  /// By size: copies the backend captures at enqueue go to it directly;
  /// the rest go through bounce buffers, with the copy threads sharing the
  /// host side from the parallel-staging threshold on. Nothing is locked.
  Auto,
  /// Always through bounce buffers, one chunk after the other.
  Staged,
  /// Always lock the memory for the duration of the copy, and wait for it.
  Lock,
};

/// The route of one contiguous piece of a host <-> device copy.
enum class CopyRouteTy {
  /// The piece lies in locked memory: DMA straight from or to it.
  PinnedDMA,
  /// Lock the piece, DMA, wait for the copy, unlock.
  LockForCopy,
  /// Small enough for the backend to capture at enqueue: uploads go to the
  /// stream as they are; downloads land in a small-download bounce buffer
  /// whose copy-out is deferred to the stream's owner, or, when none is
  /// free, go to the stream as they are.
  BackendCaptures,
  /// Through bounce buffers, chunk by chunk on the calling thread; the
  /// call stays asynchronous.
  Staged,
  /// Through bounce buffers, the copy threads sharing the memcpy side;
  /// downloads return once every chunk is out.
  StagedParallel,
};

/// Printable name of a route (info lines, test messages).
const char *copyRouteName(CopyRouteTy Route);

/// The settings of the copy policy, each with its default and its valid
/// values.
struct TransferSettingsTy {
  /// OFFLOADIO_PAGEABLE_PATH: auto, staged or lock.
  PageablePolicyTy Pageable = PageablePolicyTy::Auto;
  /// OFFLOADIO_PARALLEL_STAGING_THRESHOLD (formerly
  /// OFFLOADIO_LOCK_THRESHOLD): size from which, in auto mode, the copy
  /// threads share the host side of a staged copy; any size.
  size_t ParallelStagingThreshold = DefaultParallelStagingThreshold;

  /// Default of ParallelStagingThreshold.
  static constexpr size_t DefaultParallelStagingThreshold =
      settingDecl(SettingId::ParallelStagingThreshold).Default;

  /// Read both variables once; the old name still works, with a
  /// deprecation warning on stderr once per process.
  static TransferSettingsTy fromEnv();
};

/// Chooses the route of each piece of a host <-> device copy.
class TransferPolicyTy {
public:
  /// \p CaptureLimit is the backend's answer to "the largest copy from or
  /// to pageable memory you capture at enqueue" (0: none).
  TransferPolicyTy(const TransferSettingsTy &Settings, size_t CaptureLimit)
      : Settings(Settings), CaptureLimit(CaptureLimit) {}

  /// The route of a piece of \p Size bytes (uploads and downloads alike);
  /// \p Locked says whether its host side lies in locked memory.
  CopyRouteTy route(bool Locked, size_t Size) const;

  /// The largest pageable copy the backend captures at enqueue.
  size_t getCaptureLimit() const { return CaptureLimit; }
  /// The settings the policy was made with.
  const TransferSettingsTy &getSettings() const { return Settings; }

private:
  TransferSettingsTy Settings;
  size_t CaptureLimit;
};

} // namespace offloadio

#endif // OFFLOADIO_TRANSFERPOLICY_H

// SPDX-License-Identifier: Apache-2.0
//
// Running a host thread on a device's CPUs (HostTopology.h). A thread that
// serves several devices (a file worker, IOWorker.h) moves to the CPUs of
// each device it turns to, and back to the mask it started with for a
// device without a placement, with one system call per change and none
// while it stays. A failure to move is reported once per device as an
// info line (OFFLOADIO_INFO) and ends the placement of that device; the
// thread's work goes on wherever it runs.
#ifndef OFFLOADIO_THREADAFFINITY_H
#define OFFLOADIO_THREADAFFINITY_H

#include "offloadio/CpuSet.h"
#include "offloadio/HostTopology.h"

#include "llvm/ADT/StringRef.h"

#include <atomic>
#include <cstdint>
#include <optional>

namespace offloadio {

class InfoTy;

/// The affinity system calls, on the calling thread; tests substitute
/// their own. Each returns 0 or the errno of the failure.
class AffinitySysTy {
public:
  virtual ~AffinitySysTy();
  /// sched_getaffinity(0): the calling thread's CPUs into \p Cpus.
  virtual int getThreadAffinity(CpuSetTy &Cpus);
  /// sched_setaffinity(0, \p Cpus): the calling thread runs on \p Cpus.
  virtual int setThreadAffinity(const CpuSetTy &Cpus);
};

/// The placement of one device's host threads, shared by the threads that
/// serve it.
class DevicePlacementTy {
public:
  DevicePlacementTy() = default;
  DevicePlacementTy(const DevicePlacementTy &) = delete;
  DevicePlacementTy &operator=(const DevicePlacementTy &) = delete;

  /// Place the device's threads as \p Placement says; failures are
  /// reported through \p Info (null: not reported) for device
  /// \p DeviceId. Before any thread serves the device.
  void set(CpuPlacementTy Placement, const InfoTy *Info, int32_t DeviceId);

  /// What set() was given.
  const CpuPlacementTy &get() const { return Placement; }
  /// The CPUs a thread serving the device runs on; null: the thread's own
  /// mask (no placement, or it failed).
  const CpuSetTy *cpus() const {
    if (!Placement.placed() || Stopped.load(std::memory_order_relaxed))
      return nullptr;
    return &Placement.Cpus;
  }
  /// Whether a failure ended the placement.
  bool stopped() const { return Stopped.load(std::memory_order_relaxed); }
  /// \p Call failed with \p Errno for a thread serving the device: the
  /// first failure is reported, and the placement ends.
  void fail(int Errno, llvm::StringRef Call);

private:
  CpuPlacementTy Placement;
  const InfoTy *Info = nullptr;
  int32_t DeviceId = -1;
  std::atomic<bool> Stopped{false};
};

/// The CPUs of the calling thread as it moves between devices; one per
/// thread, used by that thread alone.
class ThreadPlacementTy {
public:
  explicit ThreadPlacementTy(AffinitySysTy &Sys) : Sys(Sys) {}
  ThreadPlacementTy(const ThreadPlacementTy &) = delete;
  ThreadPlacementTy &operator=(const ThreadPlacementTy &) = delete;

  /// Run the calling thread on the CPUs of \p Device (null: a device
  /// without placement), or on the mask the thread had before its first
  /// move when the device has none; nothing when it runs there already.
  void enter(DevicePlacementTy *Device);

private:
  AffinitySysTy &Sys;
  /// The thread's mask before its first move; read then.
  std::optional<CpuSetTy> Original;
  /// The CPUs it was moved to; none while it runs on Original.
  std::optional<CpuSetTy> Current;
};

} // namespace offloadio

#endif // OFFLOADIO_THREADAFFINITY_H

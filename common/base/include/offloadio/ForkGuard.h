// SPDX-License-Identifier: Apache-2.0
//
// Detection of use after fork(). A child process inherits a copy of the
// plugin, but not the threads behind its streams and file engine, nor a
// usable vendor context (CUDA and HSA do not survive fork), and any lock a
// parent thread held at the fork stays locked forever. A child that touched
// a device the parent had initialised would hang or corrupt memory; instead
// it gets an error that says what happened.
//
// The guard owns one page mapped with MADV_WIPEONFORK: the kernel hands a
// child that page zero-filled, so "this process armed the guard" is one
// atomic load of a word that reads nonzero only in the arming process. No
// pthread_atfork handler is needed (such a handler cannot be unregistered,
// and would need a global to find the plugin).
#ifndef OFFLOADIO_FORKGUARD_H
#define OFFLOADIO_FORKGUARD_H

#include "offloadio/Error.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Compiler.h"

#include <atomic>
#include <sys/types.h>

namespace offloadio {

/// Tells whether the current process is a child forked after the guard was
/// armed.
class ForkGuardTy {
public:
  ForkGuardTy();
  ~ForkGuardTy();
  ForkGuardTy(const ForkGuardTy &) = delete;
  ForkGuardTy &operator=(const ForkGuardTy &) = delete;

  /// Record that this process initialised a device: children forked from
  /// now on are refused. Idempotent; cheap after the first call.
  void arm();

  /// Whether this process is a child forked after arm(). The common case
  /// (armed, not forked) costs one relaxed atomic load.
  bool inForkedChild() const {
    if (LLVM_LIKELY(Sentinel->load(std::memory_order_relaxed) != 0))
      return false;
    return inForkedChildSlow();
  }

  /// The pid of the process that armed the guard, 0 if none did.
  pid_t getOwnerPid() const {
    return OwnerPid.load(std::memory_order_acquire);
  }

  /// The error for \p What ("device 0") used in a forked child: names this
  /// process, the one that initialised the devices, and \p Detail (why the
  /// object is that process's, e.g. "initialised it").
  Error makeForkedError(const llvm::Twine &What,
                        const llvm::Twine &Detail) const;

private:
  bool inForkedChildSlow() const;

  /// Points into the wipe-on-fork page, or at Fallback where the kernel has
  /// no MADV_WIPEONFORK (then the slow path compares pids).
  std::atomic<int> *Sentinel;
  /// Stays 0: the sentinel where no wipe-on-fork page could be had.
  std::atomic<int> Fallback{0};
  /// The page, or null.
  void *Page = nullptr;
  /// Copied into children as is, unlike the sentinel.
  std::atomic<pid_t> OwnerPid{0};
};

} // namespace offloadio

#endif // OFFLOADIO_FORKGUARD_H

// SPDX-License-Identifier: Apache-2.0
//
// What a teardown (waiting for a device's work, running its images'
// destructors, deinit, freeing the device and pinned host memory the
// framework holds) does with a vendor driver that has shut down. The backends only name that answer
// (ErrorCode::DriverShutDown: CUDA_ERROR_DEINITIALIZED,
// HSA_STATUS_ERROR_NOT_INITIALIZED); this is the one place that decides
// what it means.
#ifndef OFFLOADIO_TEARDOWN_H
#define OFFLOADIO_TEARDOWN_H

#include "offloadio/Error.h"

#include <utility>

namespace offloadio {

/// The errors of one teardown's steps. A driver that has shut down (as at
/// a process's exit, once the driver's own exit handler ran: a Python
/// interpreter's exit does this before libomptarget's) took the device's
/// work and memory with it: nothing is left to wait for or to give back.
/// Its first answer therefore ends the teardown quietly: that answer is
/// dropped, and every later step is skipped, so that the teardown asks a
/// dead driver once, not once per stream or buffer. Every other error is
/// kept. Outside a teardown the same answer is an error like any other
/// (the backends' message says the driver was shut down).
class TeardownTy {
public:
  TeardownTy() = default;
  TeardownTy(const TeardownTy &) = delete;
  TeardownTy &operator=(const TeardownTy &) = delete;
  /// A result not taken (finish, takeForEnclosing) is dropped.
  ~TeardownTy() {
    llvm::consumeError(std::move(Result));
    llvm::consumeError(std::move(DriverAnswer));
  }

  /// Run \p Step (returning Error) unless the driver was found shut down,
  /// and keep its result (add).
  template <typename FnTy> void run(FnTy &&Step) {
    if (!DriverGone)
      add(std::forward<FnTy>(Step)());
  }

  /// Keep \p Err's errors; an answer that the driver has shut down is
  /// noted instead, once, and ends the teardown (driverGone).
  void add(Error Err);

  /// Note whether \p Err says the driver has shut down, and drop the rest
  /// of it: for errors that their own caller reports (a copy's failure, at
  /// its stream's synchronize), which the teardown only waits through.
  void addDriverAnswerOnly(Error Err);

  /// Whether a step found the driver shut down: the steps left are
  /// skipped.
  bool driverGone() const { return DriverGone; }

  /// The result of a teardown that is itself one step of another (the
  /// buffers of a pool freed inside a device's deinit): the errors kept,
  /// and the driver's answer if it was shut down, so that the enclosing
  /// teardown stops too. Call once.
  Error takeForEnclosing();

  /// The result of a whole teardown: the errors kept. The driver having
  /// shut down is success. Call once.
  Error finish() { return std::move(Result); }

private:
  Error Result = Error::success();
  /// The driver's first "shut down" answer, for takeForEnclosing.
  Error DriverAnswer = Error::success();
  bool DriverGone = false;
};

} // namespace offloadio

#endif // OFFLOADIO_TEARDOWN_H

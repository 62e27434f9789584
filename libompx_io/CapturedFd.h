// SPDX-License-Identifier: Apache-2.0
//
// The duplicates that the depend calls (DependIO.cpp) make of the program's
// descriptors at the call, so that the task transfers from the file the
// descriptor named then, whatever the program does with the number before
// the task starts.
#ifndef OMPX_IO_CAPTUREDFD_H
#define OMPX_IO_CAPTUREDFD_H

#include "offloadio/io/SysCalls.h"

#include <string>
#include <unistd.h>
#include <utility>

namespace ompxio {

/// A duplicate of one of the program's descriptors, made at a depend call;
/// move-only, closed with its owner.
class CapturedFdTy {
public:
  CapturedFdTy() = default;
  /// Own \p Fd, a duplicate.
  explicit CapturedFdTy(int Fd) : Fd(Fd) {}
  CapturedFdTy(CapturedFdTy &&Other) noexcept
      : Fd(std::exchange(Other.Fd, -1)) {}
  CapturedFdTy &operator=(CapturedFdTy &&Other) noexcept {
    std::swap(Fd, Other.Fd);
    return *this;
  }
  CapturedFdTy(const CapturedFdTy &) = delete;
  ~CapturedFdTy() {
    // A duplicate's close only drops a reference to the open file, which
    // the program's descriptor or the plugin's duplicate still holds:
    // nothing is written back, nothing can fail that anyone could act on.
    if (Fd >= 0)
      (void)::close(Fd);
  }

  /// The duplicate; -1 when none is held.
  int get() const { return Fd; }

private:
  int Fd = -1;
};

/// Duplicate the program's \p Fd into \p Out with \p Sys (fcntl
/// F_DUPFD_CLOEXEC); 0, or the errno with the reason, naming the call and
/// the descriptor, in \p Why.
int captureFd(offloadio::SysTy &Sys, int Fd, CapturedFdTy &Out,
              std::string &Why);

} // namespace ompxio

#endif // OMPX_IO_CAPTUREDFD_H

// SPDX-License-Identifier: Apache-2.0
//
// The process that created an object, for state that a forked child
// inherits but must leave alone at exit (its transfers, tasks and locks are
// the parent's). The plugins detect fork with ForkGuardTy; libompx_io, free
// of LLVM, asks this. Header-only and free of LLVM.
#ifndef OFFLOADIO_CREATORPROCESS_H
#define OFFLOADIO_CREATORPROCESS_H

#include <sys/types.h>
#include <unistd.h>

namespace offloadio {

/// Remembers the process it was made in.
class CreatorProcessTy {
public:
  /// Whether the calling process is the one that made this (not a child
  /// forked from it since).
  bool isCurrent() const { return ::getpid() == Pid; }

private:
  pid_t Pid = ::getpid();
};

} // namespace offloadio

#endif // OFFLOADIO_CREATORPROCESS_H

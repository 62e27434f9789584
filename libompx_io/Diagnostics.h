// SPDX-License-Identifier: Apache-2.0
//
// What libompx_io tells the program when a call fails: the per-thread
// message behind ompx_io_last_error, the prefix of its stderr lines, and the
// explanation for a device that no offload-io plugin serves.
#ifndef OMPX_IO_DIAGNOSTICS_H
#define OMPX_IO_DIAGNOSTICS_H

#include "offloadio/LastErrorStore.h"

#include <atomic>
#include <cerrno>
#include <optional>
#include <string>

namespace ompxio {

/// The owner of libompx_io's failure messages (offloadio/LastErrorStore.h).
struct LibraryErrorOwnerTag;

/// This thread's failure messages: the last one is what ompx_io_last_error
/// returns, valid until the thread's next failed call.
using LibraryErrorsTy = offloadio::LastErrorStoreTy<LibraryErrorOwnerTag>;

/// Set errno to \p Errno and record \p Message as this thread's last
/// failure; -1.
int fail(int Errno, std::string Message);

/// While alive, the failures of library calls that this thread makes on
/// behalf of another call (a depend task's body, a completion notification)
/// are recorded here instead of in the thread's last error, and errno is
/// restored at the end. The thread's message is not touched, so the text
/// ompx_io_last_error handed out stays valid until the thread's next failed
/// call of its own. No program code may run inside one: the program's
/// failures, and its ompx_io_last_error, would meet the diversion's
/// message. Scopes nest; on the stack only.
class ErrorDiversionTy {
public:
  ErrorDiversionTy() : SavedErrno(errno) {}
  ~ErrorDiversionTy() { errno = SavedErrno; }
  ErrorDiversionTy(const ErrorDiversionTy &) = delete;
  ErrorDiversionTy &operator=(const ErrorDiversionTy &) = delete;

  /// The last failure recorded since this scope began; "" when none.
  const std::string &message() const { return Diversion.message(); }

private:
  LibraryErrorsTy::DiversionTy Diversion;
  int SavedErrno;
};

/// The prefix of the library's stderr lines: "ompx-io[<pid>]".
std::string linePrefix();

/// Whether OMPX_IO_INFO or OFFLOADIO_INFO asks for diagnostics, read
/// with the plugins' own readers (offloadio/Envar.h), so that an invalid
/// value is refused, with a warning, as the plugins refuse it. Read at each
/// use: only misuse and exit paths print.
bool infoEnabled();

/// Why \p Call on OpenMP device \p Device (none: a call about the process,
/// such as the settings or the pinned budget) found no offload-io
/// plugin to serve it: the device does not exist, or the offload plugins
/// libomptarget loaded (named by path) are not offload-io's, and how to
/// load ours. The second case is also printed on stderr, the first time
/// \p Warned is found false.
std::string explainNotServed(const char *Call, std::optional<int> Device,
                             std::atomic<bool> &Warned);

} // namespace ompxio

#endif // OMPX_IO_DIAGNOSTICS_H

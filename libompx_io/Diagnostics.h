// SPDX-License-Identifier: Apache-2.0
//
// What libompx_io tells the program when a call fails: the per-thread
// message behind ompx_io_last_error, the prefix of its stderr lines, and the
// explanation for a device that no offload-io plugin serves.
#ifndef OMPX_IO_DIAGNOSTICS_H
#define OMPX_IO_DIAGNOSTICS_H

#include <atomic>
#include <optional>
#include <string>

namespace ompxio {

/// This thread's last failure message, as ompx_io_last_error returns it.
std::string &lastError();

/// Set errno to \p Errno and this thread's last error to \p Message; -1.
int fail(int Errno, std::string Message);

/// The prefix of the library's stderr lines: "ompx-io[<pid>]".
std::string linePrefix();

/// Whether OMPX_IO_INFO or LIBOMPTARGET_INFO asks for diagnostics. Read at
/// each use: only misuse and exit paths print.
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

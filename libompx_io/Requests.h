// SPDX-License-Identifier: Apache-2.0
//
// The requests of the single-transfer calls (ompx_target_pread_async and
// the others of Requests.cpp): what one is, and how one is started. The
// handles given to the program are request numbers in the library's
// registry (Library.h, HandleRegistry.h).
#ifndef OMPX_IO_REQUESTS_H
#define OMPX_IO_REQUESTS_H

#include "HandleRegistry.h"
#include "PluginDirectory.h"
#include "ompx_io.h"

#include <string>
#include <sys/types.h>

namespace ompxio {

/// A request in flight, as the registry keeps it.
struct RequestTy {
  const PluginTy *Plugin = nullptr; ///< Null for host requests, done already.
  void *Inner = nullptr;            ///< The plugin's request.
  ssize_t HostResult = 0;           ///< Host requests: the result ...
  int HostErrno = 0;                ///< ... its errno ...
  std::string HostWhy;              ///< ... and why it failed.
};

/// The requests in flight, by handle.
using RequestRegistryTy = HandleRegistryTy<ompx_io_request_t, RequestTy>;

/// Finish \p R, left at exit: wait for its transfer and release it.
void finishLeftRequest(RequestTy &R);

/// Start a transfer for \p Call, the API function that messages name, into
/// \p R: done already on the initial device (R.Plugin null), in flight in a
/// plugin otherwise. 0, or -1 with errno and the last error set when it was
/// refused.
int startTransfer(const char *Call, bool IsWrite, int Fd, void *Buf,
                  size_t Count, off_t Offset, int Device, RequestTy &R);

} // namespace ompxio

#endif // OMPX_IO_REQUESTS_H

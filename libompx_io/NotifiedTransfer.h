// SPDX-License-Identifier: Apache-2.0
//
// A transfer that reports its outcome to a waiter when it completes, instead
// of through a handle the program waits for: the completion side of the
// OpenMP-depend API (DependIO.cpp). Defined in NotifiedTransfer.cpp; its
// transfers start as the handle-based ones do (Requests.h).
#ifndef OMPX_IO_NOTIFIEDTRANSFER_H
#define OMPX_IO_NOTIFIEDTRANSFER_H

#include <cstddef>
#include <memory>
#include <string>
#include <sys/types.h>

namespace ompxio {

/// One transfer's arguments, as ompx_target_pread_async takes them.
struct TransferArgsTy {
  const char *Call; ///< The API function that messages name.
  bool IsWrite;
  int Fd;
  void *Buf;
  size_t Count;
  off_t Offset;
  int Device;
};

/// How a transfer ended.
struct TransferOutcomeTy {
  ssize_t Result = -1; ///< Bytes transferred, or -1.
  int Errno = 0;       ///< 0, or the errno of the failure.
  std::string Message; ///< The failure, as ompx_io_last_error words it.
};

/// Receives the outcome of one transfer.
class TransferWaiterTy {
public:
  virtual ~TransferWaiterTy() = default;
  /// Called once, from any thread (a plugin's engine thread for a device
  /// transfer); must not block. The waiter is destroyed right after.
  virtual void transferDone(TransferOutcomeTy Outcome) = 0;
};

/// Start the transfer of \p Args and give its outcome to \p Waiter once it
/// completed: from the plugin's engine thread that completes it, or before
/// returning when it was refused or ran on the initial device (host memory,
/// transferred here). Never waits for a device transfer. The calling
/// thread's errno and ompx_io_last_error are left as they were.
void submitNotified(const TransferArgsTy &Args,
                    std::unique_ptr<TransferWaiterTy> Waiter);

} // namespace ompxio

#endif // OMPX_IO_NOTIFIEDTRANSFER_H

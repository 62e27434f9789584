// SPDX-License-Identifier: Apache-2.0
//
// One device's share of a batch of file operations (ompx_io_batch_submit).
// The share holds one of the engine's OMPX_IO_MAX_REQUESTS slots however
// many operations it has, one duplicate per distinct caller descriptor and
// one O_DIRECT decision per descriptor and direction. Each operation, or
// each run of small operations of one file and direction whose ranges
// touch, is a request (IORequest.h) that borrows those descriptors; the
// workers serve them as any other.
#ifndef OFFLOADIO_IO_IOBATCH_H
#define OFFLOADIO_IO_IOBATCH_H

#include "offloadio/Error.h"
#include "offloadio/io/IORequest.h"
#include "offloadio/io/IOSlot.h"

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace offloadio {

/// One operation of a share, as the engine takes it.
struct IOBatchOpTy {
  IORequestTy::OpTy Op;
  int Fd;        ///< The caller's descriptor.
  void *DevPtr;  ///< Memory of the share's device.
  size_t Count;  ///< Bytes.
  off_t Offset;  ///< File offset.
};

/// The outcome of one operation.
struct IOBatchResultTy {
  size_t Bytes = 0;    ///< Bytes moved, when Errno is 0.
  int Errno = 0;       ///< 0, or the errno of the failure.
  std::string Message; ///< What failed, when Errno is not 0.
};

/// One device's share of a batch: created holding its slot, filled and
/// started by IOEngineTy::startBatch, waited for, destroyed.
class IOBatchTy {
public:
  explicit IOBatchTy(IOSlotTy Slot) : Slot(std::move(Slot)) {}
  /// Waits for the requests still in flight, then closes the descriptors
  /// and gives the slot back.
  ~IOBatchTy();
  IOBatchTy(const IOBatchTy &) = delete;
  IOBatchTy &operator=(const IOBatchTy &) = delete;

  /// Whether every operation is done.
  bool isDone() const;
  /// Block until every operation is done; the outcome of each, in the
  /// order they were given to startBatch.
  std::vector<IOBatchResultTy> wait();

  /// Run \p Notify once every operation is done: in the worker that
  /// finishes the last request, as the engine's last act on the share, or
  /// at once, in the calling thread, when all are done. From then on the
  /// share must not be destroyed before \p Notify ran, which may destroy
  /// it. One per share (EINVAL for a second, or without a function); only
  /// after IOEngineTy::startBatch.
  Error notifyWhenDone(IORequestTy::NotificationTy Notify);

  /// Operations of the share.
  size_t numOps() const { return Ops.size(); }
  /// Requests the operations became (fewer when some were gathered).
  size_t numRequests() const { return Requests.size(); }
  /// Descriptors the share opened (duplicates and reopens).
  size_t numDescriptors() const { return OwnedFds.size(); }

  /// \name Filled by IOEngineTy::startBatch.
  /// @{
  /// Make room for \p N operations, none mapped yet.
  void resize(size_t N) { Ops.resize(N); }
  /// Operation \p Index failed at submission with \p Err.
  void failOp(size_t Index, Error Err);
  /// Operation \p Index moves nothing (count 0, accepted).
  void completeOp(size_t Index) { Ops[Index].Done = true; }
  /// Keep \p Fd, a descriptor the share opened, until it is destroyed.
  void adoptDescriptor(int Fd) { OwnedFds.push_back(Fd); }
  /// Take \p R, which borrows the share's descriptors; its index.
  size_t addRequest(std::unique_ptr<IORequestTy> R);
  /// Operation \p Index is bytes [\p Begin, \p Begin + \p Len) of request
  /// \p Request.
  void mapOp(size_t Index, size_t Request, size_t Begin, size_t Len);
  /// @}

private:
  /// Where an operation's result comes from.
  struct OpStateTy {
    size_t Request = SIZE_MAX; ///< Its request, or none.
    size_t Begin = 0, Len = 0; ///< Its bytes of the request.
    bool Done = false;         ///< Count 0: nothing to move.
    int Errno = 0;             ///< Refused at submission: why.
    std::string Message;
  };

  /// One of the requests, or the registration itself, is done with the
  /// notification: the last of them runs it.
  void countDown();
  /// The notification of \p Self, an IOBatchTy, from one of its requests.
  static void requestDone(void *Self) {
    static_cast<IOBatchTy *>(Self)->countDown();
  }

  std::mutex NotifyLock; ///< Guards OnDone and Left.
  IORequestTy::NotificationTy OnDone;
  /// Requests not yet done, plus one while notifyWhenDone registers.
  size_t Left = 0;

  /// Given back last, after every descriptor is closed.
  IOSlotTy Slot;
  /// Closed after the requests that borrow them are destroyed.
  std::vector<int> OwnedFds;
  std::vector<std::unique_ptr<IORequestTy>> Requests;
  std::vector<OpStateTy> Ops;
};

} // namespace offloadio

#endif // OFFLOADIO_IO_IOBATCH_H

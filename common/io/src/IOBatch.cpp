// SPDX-License-Identifier: Apache-2.0
#include "offloadio/io/IOBatch.h"

#include <cerrno>
#include <unistd.h>

using namespace offloadio;

IOBatchTy::~IOBatchTy() {
  // The requests wait for their workers as they are destroyed; only then
  // are the descriptors they borrowed free to close.
  Requests.clear();
  for (int Fd : OwnedFds)
    ::close(Fd);
}

void IOBatchTy::failOp(size_t Index, Error Err) {
  ErrorDetailsTy D = takeErrorDetails(std::move(Err));
  OpStateTy &Op = Ops[Index];
  Op.Message = std::move(D.Message);
  // Non-POSIX failures map to the closest errno, as for a request.
  Op.Errno = errnoFor(D);
  Op.Request = SIZE_MAX;
}

size_t IOBatchTy::addRequest(std::unique_ptr<IORequestTy> R) {
  Requests.push_back(std::move(R));
  return Requests.size() - 1;
}

void IOBatchTy::mapOp(size_t Index, size_t Request, size_t Begin,
                      size_t Len) {
  OpStateTy &Op = Ops[Index];
  Op.Request = Request;
  Op.Begin = Begin;
  Op.Len = Len;
}

Error IOBatchTy::notifyWhenDone(IORequestTy::NotificationTy Notify) {
  if (!Notify.Fn)
    return makeErrnoError(EINVAL, "completion notification without a "
                                  "function for batch share {0}",
                          static_cast<void *>(this));
  {
    std::lock_guard<std::mutex> Guard(NotifyLock);
    if (OnDone.Fn)
      return makeErrnoError(EINVAL, "batch share {0} already has a "
                                    "completion notification",
                            static_cast<void *>(this));
    OnDone = Notify;
    // The extra one is this registration's: no request that finishes
    // meanwhile (here or in a worker) can run the notification, which may
    // destroy the share, while the loop below still walks its requests.
    Left = Requests.size() + 1;
  }
  for (auto &R : Requests)
    if (Error Err = R->notifyWhenDone({&IOBatchTy::requestDone, this}))
      // A request of the share has no other notification: cannot happen,
      // but a lost count would hang the notification for ever.
      llvm::consumeError(std::move(Err)), countDown();
  countDown();
  return Error::success();
}

void IOBatchTy::countDown() {
  IORequestTy::NotificationTy Notify;
  {
    std::lock_guard<std::mutex> Guard(NotifyLock);
    if (--Left)
      return;
    Notify = OnDone;
  }
  // Outside the lock and last: the notification may destroy the share.
  Notify.Fn(Notify.Arg);
}

bool IOBatchTy::isDone() const {
  for (const auto &R : Requests)
    if (!R->isDone())
      return false;
  return true;
}

std::vector<IOBatchResultTy> IOBatchTy::wait() {
  std::vector<IOBatchResultTy> Results(Ops.size());
  for (size_t I = 0; I < Ops.size(); ++I) {
    const OpStateTy &Op = Ops[I];
    IOBatchResultTy &Out = Results[I];
    if (Op.Errno) {
      Out.Errno = Op.Errno;
      Out.Message = Op.Message;
      continue;
    }
    if (Op.Done || Op.Request == SIZE_MAX)
      continue;
    auto N = Requests[Op.Request]->waitRange(Op.Begin, Op.Len);
    if (N) {
      Out.Bytes = *N;
      continue;
    }
    ErrorDetailsTy D = takeErrorDetails(N.takeError());
    Out.Errno = errnoFor(D);
    Out.Message = std::move(D.Message);
  }
  return Results;
}

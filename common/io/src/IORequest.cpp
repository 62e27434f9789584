// SPDX-License-Identifier: Apache-2.0
#include "offloadio/io/IORequest.h"

#include <algorithm>
#include <cerrno>
#include <unistd.h>
#include <utility>

using namespace offloadio;

IORequestTy::IORequestTy(OpTy Op, int Fd, char *DevPtr, size_t Count,
                         off_t Offset, IOPathTy Path, size_t ChunkSize,
                         bool Append)
    : Op(Op), Fd(Fd), BufFd(Fd), DevPtr(DevPtr), Count(Count), Offset(Offset),
      Path(unsigned(Path)), Layout(IOChunkLayoutTy::plain(Count, ChunkSize)),
      Append(Append), ChunkBytes(Layout.numChunks()) {
  Done = ChunkBytes.empty();
}

IORequestTy::~IORequestTy() {
  // A request dropped without wait() may still have chunks in the workers'
  // hands: they must be done with it before its memory goes.
  if (Queued) {
    std::unique_lock<std::mutex> Guard(Lock);
    DoneCV.wait(Guard, [&] { return Done; });
  }
  if (!OwnsDescriptors)
    return;
  if (Fd >= 0)
    ::close(Fd);
  if (TwinFd >= 0)
    ::close(TwinFd);
}

void IORequestTy::gather(std::vector<IOSegmentTy> List) {
  Segments = std::move(List);
  // One chunk, whatever the chunk size: the batch gathers no more than a
  // chunk's bytes (the staging buffers hold them).
  Layout = IOChunkLayoutTy::plain(Count, Count ? Count : 1);
  ChunkBytes.assign(Layout.numChunks(), 0);
  Done = ChunkBytes.empty();
}

void IORequestTy::applyDirect(IODirectSetupTy Setup) {
  if (Setup.BufFd >= 0)
    BufFd = Setup.BufFd;
  DirectFd = Setup.DirectFd;
  TwinFd = Setup.TwinFd;
  DirectAlign = Setup.MemAlign;
  DirectNote = std::move(Setup.Note);
  if (Setup.Layout) {
    Layout = *Setup.Layout;
    ChunkBytes.assign(Layout.numChunks(), 0);
    Done = ChunkBytes.empty();
  }
}

bool IORequestTy::isDone() const {
  std::lock_guard<std::mutex> Guard(Lock);
  return Done;
}

void IORequestTy::recordChunk(size_t Index, size_t Bytes) {
  std::lock_guard<std::mutex> Guard(Lock);
  ChunkBytes[Index] = Bytes;
}

void IORequestTy::recordError(size_t Index, Error Err, size_t At) {
  ErrorDetailsTy D = takeErrorDetails(std::move(Err));
  std::lock_guard<std::mutex> Guard(Lock);
  if (Index > ErrorChunk || (Index == ErrorChunk && At >= ErrorAt))
    return;
  ErrorChunk = Index;
  ErrorAt = At;
  ErrorMessage = std::make_unique<std::string>(std::move(D.Message));
  // Non-POSIX failures (no staging memory, a backend error) map to the
  // closest errno (ErrorCodes.def): ENOMEM for resources, EIO for a
  // backend.
  ErrorErrno = errnoFor(D);
}

bool IORequestTy::failed() const {
  std::lock_guard<std::mutex> Guard(Lock);
  return ErrorChunk != SIZE_MAX;
}

void IORequestTy::finishChunks(size_t N) {
  NotificationTy Notify;
  {
    std::lock_guard<std::mutex> Guard(Lock);
    FinishedChunks += N;
    if (FinishedChunks < ChunkBytes.size())
      return;
    // Every byte landed: the program may free the buffers now.
    BusyMarks.clear();
    Done = true;
    Notify = std::exchange(OnDone, NotificationTy());
    DoneCV.notify_all();
  }
  // Outside the lock and last: the notification may destroy the request.
  if (Notify.Fn)
    Notify.Fn(Notify.Arg);
}

Error IORequestTy::notifyWhenDone(NotificationTy Notify) {
  if (!Notify.Fn)
    return makeErrnoError(EINVAL, "completion notification without a "
                                  "function for request {0}",
                          static_cast<void *>(this));
  {
    std::lock_guard<std::mutex> Guard(Lock);
    // Registered here or observed Done here, under the lock that
    // finishChunks() completes the request under: exactly one of the two
    // runs it.
    if (OnDone.Fn)
      return makeErrnoError(EINVAL, "request {0} already has a completion "
                                    "notification",
                            static_cast<void *>(this));
    if (!Done) {
      OnDone = Notify;
      return Error::success();
    }
  }
  Notify.Fn(Notify.Arg);
  return Error::success();
}

Expected<size_t> IORequestTy::waitRange(size_t Begin, size_t Len) {
  std::unique_lock<std::mutex> Guard(Lock);
  DoneCV.wait(Guard, [&] { return Done; });
  // POSIX semantics: bytes up to the first short chunk (end of file); an
  // error before the range's end fails it, so nothing is lost silently.
  size_t End = Begin + Len, Total = 0;
  for (size_t I = 0; I < ChunkBytes.size(); ++I) {
    size_t ChunkBegin = Layout.chunkOffset(I);
    size_t ChunkLen = Layout.chunkLength(I);
    if (ChunkBegin >= End)
      break;
    if (ChunkBegin + ChunkLen <= Begin)
      continue;
    // The range's part of the chunk, from the chunk's start.
    size_t Lo = Begin > ChunkBegin ? Begin - ChunkBegin : 0;
    size_t Hi = std::min(End - ChunkBegin, ChunkLen);
    size_t Got = ChunkBytes[I];
    size_t Moved = Got > Lo ? std::min(Got, Hi) - Lo : 0;
    if (I > ErrorChunk || (I == ErrorChunk && ErrorAt < Hi)) {
      // Except at the file size limit: like pwrite(2), a write that reached
      // it returns what it wrote before it, and EFBIG only if that is
      // nothing.
      if (Op == Write && ErrorErrno == EFBIG && Total + Moved > 0)
        return Total + Moved;
      return makeErrnoError(ErrorErrno, "{0}", *ErrorMessage);
    }
    Total += Moved;
    if (Got < Hi)
      break;
  }
  return Total;
}

// SPDX-License-Identifier: Apache-2.0
//
// The requests of one engine waiting for workers, and the claims of their
// chunks. A request leaves the queue with the claim of its last chunk,
// while the claimed chunks keep it alive.
#ifndef OFFLOADIO_IO_IOREQUESTQUEUE_H
#define OFFLOADIO_IO_IOREQUESTQUEUE_H

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>

namespace offloadio {

class IORequestTy;

/// Queued requests and chunk claims; the workers block in nextRequest, or
/// a pool of workers serving several queues polls tryNextRequest and is
/// woken through the queue's wakeup (IOWorkerPool.h).
class IORequestQueueTy {
public:
  /// Call \p Wakeup, without the queue's lock held, whenever a request
  /// becomes ready: after push() and endAppend(). Set before any push.
  void setWakeup(std::function<void()> Wakeup) {
    this->Wakeup = std::move(Wakeup);
  }
  /// Queue \p R; an append request goes on the append lane. Never blocks
  /// beyond the queue's lock.
  void push(IORequestTy &R) {
    IORequestTy *One = &R;
    pushAll(&One, 1);
  }
  /// Queue the \p N requests \p Rs in order, under one hold of the lock
  /// and with one wakeup (a batch's requests). Never blocks beyond the
  /// queue's lock.
  void pushAll(IORequestTy *const *Rs, size_t N);
  /// Next request with unclaimed chunks, with its next chunk claimed into
  /// \p Chunk; blocks; null once stopping and empty.
  IORequestTy *nextRequest(size_t &Chunk);
  /// Like nextRequest, but null at once when no request is ready.
  IORequestTy *tryNextRequest(size_t &Chunk);
  /// Whether no request is queued and none is served on the append lane.
  bool idle();
  /// Claim the next chunk of \p R, whose earlier chunk the caller holds
  /// unfinished; false when all are claimed.
  bool nextChunk(IORequestTy &R, size_t &Chunk);
  /// The worker serving the append lane is done with its request.
  void endAppend();
  /// Wake the workers to stop once the queue is empty.
  void stop();

private:
  /// Claim a chunk of \p R with Lock held; the last claim takes \p R off
  /// the queue, before any worker can finish it and wait() can free it.
  size_t claimLocked(IORequestTy &R);
  /// Whether the append lane's front request may be served, with Lock held.
  bool appendReadyLocked() const {
    return !AppendActive && !AppendQueue.empty();
  }
  /// The next ready request with a chunk claimed, or null; Lock held.
  IORequestTy *claimNextLocked(size_t &Chunk);
  /// Call Wakeup, if set.
  void wake() {
    if (Wakeup)
      Wakeup();
  }

  std::mutex Lock;
  std::condition_variable CV;
  std::deque<IORequestTy *> Queue;
  /// The append lane: O_APPEND writes, served one at a time in submission
  /// order, each by one worker in chunk order, so that each lands whole and
  /// in order after the one before (POSIX promises aio_write as much).
  std::deque<IORequestTy *> AppendQueue;
  bool AppendActive = false; ///< A worker serves the lane's front request.
  bool Stopping = false;
  std::function<void()> Wakeup;
};

} // namespace offloadio

#endif // OFFLOADIO_IO_IOREQUESTQUEUE_H

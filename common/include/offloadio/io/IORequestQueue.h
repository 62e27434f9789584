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
#include <mutex>

namespace offloadio {

class IORequestTy;

/// Queued requests and chunk claims; the workers block in nextRequest.
class IORequestQueueTy {
public:
  /// Queue \p R; an append request goes on the append lane. Never blocks
  /// beyond the queue's lock.
  void push(IORequestTy &R);
  /// Next request with unclaimed chunks, with its next chunk claimed into
  /// \p Chunk; blocks; null once stopping and empty.
  IORequestTy *nextRequest(size_t &Chunk);
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

  std::mutex Lock;
  std::condition_variable CV;
  std::deque<IORequestTy *> Queue;
  /// The append lane: O_APPEND writes, served one at a time in submission
  /// order, each by one worker in chunk order, so that each lands whole and
  /// in order after the one before (POSIX promises aio_write as much).
  std::deque<IORequestTy *> AppendQueue;
  bool AppendActive = false; ///< A worker serves the lane's front request.
  bool Stopping = false;
};

} // namespace offloadio

#endif // OFFLOADIO_IO_IOREQUESTQUEUE_H

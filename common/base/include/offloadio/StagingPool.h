// SPDX-License-Identifier: Apache-2.0
//
// Pinned bounce buffers for copies from and to memory that is not locked.
// Buffers are allocated once per device and recycled; a lease returns its
// buffer when the copy that used it has completed.
//
// A buffer comes back one of two ways: a stream callback releases it
// (release()), or its holder hands it over with the event recorded behind
// the copy that reads it (releaseAfter()). The second costs no vendor call
// and never stalls the stream, as a host callback does between two copies:
// acquire() takes back such buffers whose events have completed, and only
// at the cap waits for one of those copies (polling them, since copies on
// different streams complete in any order), so the ring of buffers
// synchronises only when it wraps.
//
// Bounded: at most MaxBuffers exist (OFFLOADIO_STAGING_BUFFERS, lowered to
// fit OFFLOADIO_STAGING_POOL_MAX bytes), and a lease beyond them waits for a
// return. That wait cannot deadlock, even for one caller that needs more
// buffers than the pool has, because every holder obeys one rule: a buffer
// is either handed to a stream (a completion callback, or an event recorded
// behind its copy, returns it), or returned by its holder, before that
// holder asks for another one. Stream progress never waits for a lease
// (callbacks only return buffers, and an event names work already
// enqueued), so every leased buffer comes back in bounded time, whoever
// waits.
//
// Every buffer is a lease of the device's pinned pool (PinnedPoolTy), so
// reserved in the process's pinned-memory budget before it is allocated,
// and the pool's buffers are no larger than the budget's fitBuffer() allows: a small budget gets smaller
// buffers, so copies take more of them. A refusal while some of the pool's
// buffers are out makes acquire() wait for one of them, by the rule above;
// with none out it waits while other holders' busy memory will come back
// (PinnedBudgetTy::waitForRoom), else the refusal is returned; tryAcquire()
// answers null. The pool is
// one of the budget's reclaimable holders: the buffers it keeps free go back
// to the budget when another holder's reservation is refused.
#ifndef OFFLOADIO_STAGINGPOOL_H
#define OFFLOADIO_STAGINGPOOL_H

#include "offloadio/Error.h"
#include "offloadio/PinnedBudget.h"
#include "offloadio/PinnedPool.h"
#include "offloadio/ResourcePool.h"
#include "offloadio/Stream.h"
#include "offloadio/Teardown.h"

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace offloadio {

class StagingPoolTy;

/// One pinned bounce buffer and the copy it currently serves.
struct StagingBufferTy {
  StagingPoolTy *Pool = nullptr; ///< Owner, for the completion callback.
  void *Ptr = nullptr;           ///< Pinned memory, getBufferSize() bytes.
  void *CopyOutDst = nullptr;    ///< Device -> host: final destination.
  size_t CopyOutSize = 0;        ///< Device -> host: bytes to copy out.
  PinnedLeaseTy Lease;           ///< The memory at Ptr, from the pinned pool.
};

/// A bounded pool of equally sized pinned host buffers.
class StagingPoolTy final : public PinnedReclaimableTy {
public:
  /// \p MaxBuffers bounds the pinned memory held: \p BufferSize each,
  /// leased from \p Pinned for \p Purpose (named in the budget's refusal);
  /// \p BufferSize is lowered to what its budget fits (getBufferSize()
  /// says). \p Pinned must outlive the pool.
  StagingPoolTy(size_t BufferSize, unsigned MaxBuffers, PinnedPoolTy &Pinned,
                std::string Purpose = "staging buffer");
  ~StagingPoolTy() override;
  StagingPoolTy(const StagingPoolTy &) = delete;
  StagingPoolTy &operator=(const StagingPoolTy &) = delete;

  /// Size of every buffer.
  size_t getBufferSize() const { return BufferSize; }

  /// Take a buffer, allocating one while under the cap. At the cap it waits
  /// for a buffer to come back: completion of earlier copies always returns
  /// them, so the wait is bounded by the device's progress. So it does when
  /// the budget refuses a new buffer while others are out. A failed
  /// allocation is returned, and leaves its room to the next caller.
  Expected<StagingBufferTy *> acquire();
  /// Like acquire(), but at the cap, or when the budget refuses a buffer,
  /// it returns null at once instead of waiting. For holders that cannot promise to return a buffer before
  /// asking for another (deferred copy-outs).
  Expected<StagingBufferTy *> tryAcquire();
  /// Give a buffer back (called from completion callbacks).
  void release(StagingBufferTy *Buffer);
  /// Give a buffer back once \p Done completes: \p Done is recorded behind
  /// the copy that reads the buffer. Never waits and makes no vendor call;
  /// acquire() reclaims it (see the file comment).
  void releaseAfter(StagingBufferTy *Buffer, PoolLeaseTy<EventTy> Done);

  /// Stream callback: release the StagingBufferTy in \p Data.
  static Error releaseCallback(void *Data);
  /// Stream callback: copy the buffer to its CopyOutDst, then release it.
  static Error copyOutCallback(void *Data);

  /// Free the buffers that are neither leased nor in flight (the budget
  /// asks when it refuses another holder); the pool allocates again when
  /// it needs them.
  size_t reclaimIdle() override;

  /// Buffers allocated so far.
  unsigned allocated() const;
  /// The most buffers the pool allocates.
  unsigned getMaxBuffers() const { return MaxBuffers; }
  /// Free every buffer; all must have been released (those handed over
  /// with releaseAfter() are waited for). A teardown (TeardownTy): once
  /// the vendor driver answers that it has shut down, the buffers left are
  /// dropped without a call, and that answer is returned.
  Error clear();
  /// clear() as a step of \p Teardown: once the driver has shut down
  /// (before or during it), no call reaches it.
  void clear(TeardownTy &Teardown);

private:
  /// acquire() and tryAcquire(): wait at the cap, or not.
  Expected<StagingBufferTy *> take(bool Wait);
  /// Move the buffers of InFlight whose events have completed to
  /// Available. Asks the events without holding Lock: a vendor call must
  /// not wait under a lock that stream callbacks take (release() runs on
  /// the driver's callback thread).
  void reclaimCompleted();
  /// Take the oldest buffer of InFlight, once its copy is done unless
  /// \p Wait is false; null when none is in flight. For clear(), which
  /// waits for every copy anyway. The wait's error is added to
  /// \p Teardown.
  StagingBufferTy *takeOldest(bool Wait, TeardownTy &Teardown);
  /// A buffer of releaseAfter() and the event its copy completes.
  struct InFlightTy {
    StagingBufferTy *Buffer = nullptr;
    PoolLeaseTy<EventTy> Done;
  };

  size_t BufferSize;
  unsigned MaxBuffers;
  PinnedPoolTy &Pinned;
  std::string Purpose;
  mutable std::mutex Lock;
  std::condition_variable Returned;
  std::vector<std::unique_ptr<StagingBufferTy>> All;
  /// Allocations under way outside the lock, counted against the cap.
  unsigned Pending = 0;
  /// Buffers reclaimIdle() is freeing outside the lock, whose bytes are
  /// not yet back in the budget.
  unsigned Freeing = 0;
  std::vector<StagingBufferTy *> Available;
  /// Guards InFlight. Never held with Lock, and never taken by stream
  /// callbacks, so the event calls made under it cannot wait for them.
  std::mutex InFlightLock;
  /// Buffers handed over with releaseAfter(), in the order of their copies.
  std::deque<InFlightTy> InFlight;
  /// InFlight.size(), for checks under Lock.
  std::atomic<size_t> InFlightCount{0};
};

} // namespace offloadio

#endif // OFFLOADIO_STAGINGPOOL_H

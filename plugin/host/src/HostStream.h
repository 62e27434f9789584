// SPDX-License-Identifier: Apache-2.0
//
// Host streams: each stream is an in-order queue served by its own worker
// thread, so asynchronous entry points really are asynchronous on the CPU and
// nowait, events, query_async and synchronize are exercised for real.
#ifndef OFFLOADIO_HOST_HOSTSTREAM_H
#define OFFLOADIO_HOST_HOSTSTREAM_H

#include "offloadio/PinnedPool.h"
#include "offloadio/Stream.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace offloadio {
namespace host {

class HostStreamTy;

/// A function the worker runs for a kernel launch: the callee and its
/// argument values. Executing it is the kernel backend's business.
class HostLaunchTy {
public:
  virtual ~HostLaunchTy();
  /// Run the kernel with \p NumArgs argument values.
  virtual Error run(void *const *Args, uint32_t NumArgs) const = 0;
};

/// A position in one stream.
class HostEventTy final : public EventTy {
public:
  Error synchronize() override;
  Expected<bool> query() override;

  /// Set the event to the current end of \p Stream.
  void record(HostStreamTy &Stream);
  /// The recorded stream and sequence number (null stream: never recorded,
  /// which counts as complete).
  std::pair<HostStreamTy *, uint64_t> get() const;

private:
  mutable std::mutex Lock;
  HostStreamTy *Stream = nullptr;
  uint64_t Seq = 0;
};

/// An in-order queue with one worker thread, named oio-host-<DeviceId>.
class HostStreamTy final : public StreamTy {
public:
  /// Capture blocks are leased from \p Pinned (none: plain heap blocks,
  /// not counted); the pool must outlive the stream. \p DeviceId names
  /// the thread.
  explicit HostStreamTy(PinnedPoolTy *Pinned = nullptr, unsigned DeviceId = 0);
  ~HostStreamTy() override;

  Error copyAsync(void *Dst, const void *Src, size_t Size,
                  CopyKindTy Kind) override;
  Error recordEvent(EventTy &Event) override;
  Error waitEvent(EventTy &Event) override;
  Error hostCallback(HostCallbackTy Fn, void *Data) override;
  Error synchronize() override;
  Expected<bool> query() override;

  /// Copies up to this size run on the caller's thread when the stream is
  /// idle; uploads up to this size on a busy stream have their source
  /// captured at enqueue (when the budget refuses a new capture block, the
  /// upload waits for the stream to reach it instead). The device reports it as its pageable capture
  /// limit (GenericDeviceTy::getPageableCaptureLimit).
  static constexpr size_t PageableCaptureLimit = 64 << 10;

  /// Enqueue a kernel launch; the argument values are copied.
  Error launchAsync(const HostLaunchTy &Launch, void *const *Args,
                    uint32_t NumArgs);

  /// Number of operations enqueued so far.
  uint64_t submitted() const;
  /// Block until \p Seq operations have completed; returns the error of an
  /// operation before \p Seq, if any, without clearing it.
  Error waitFor(uint64_t Seq);
  /// Whether an operation before \p Seq failed (error not yet collected).
  bool failedBefore(uint64_t Seq) const;
  /// Whether \p Seq operations have completed.
  bool reached(uint64_t Seq) const {
    return Completed.load(std::memory_order_acquire) >= Seq;
  }

private:
  /// Inline argument slots; launches with more arguments allocate.
  static constexpr unsigned InlineArgs = 24;

  /// A block of PageableCaptureLimit bytes that holds the source of a
  /// queued upload: a lease of the pinned pool, or (without one) a heap
  /// block.
  struct CaptureTy {
    PinnedLeaseTy Lease;
    std::unique_ptr<char[]> Heap;
    /// The block, or null if there is none.
    char *data() const {
      return Heap ? Heap.get() : static_cast<char *>(Lease.get());
    }
  };

  struct OpTy {
    enum KindTy : uint8_t { CopyOp, LaunchOp, WaitOp, CallbackOp } Kind = CopyOp;
    void *Dst = nullptr;
    const void *Src = nullptr;
    size_t Size = 0;
    const HostLaunchTy *Launch = nullptr;
    uint32_t NumArgs = 0;
    void *Args[InlineArgs];
    std::unique_ptr<void *[]> ExtraArgs;
    CaptureTy Capture; ///< Source captured at enqueue, if any.
    HostStreamTy *WaitStream = nullptr;
    uint64_t WaitSeq = 0;
    HostCallbackTy Fn = nullptr;
    void *Data = nullptr;
  };

  /// Queue \p Op; \p Seq, if given, gets the count of operations that
  /// must complete for it to be done.
  Error enqueue(OpTy &&Op, uint64_t *Seq = nullptr);
  /// Block until \p Seq operations have completed; errors stay for
  /// synchronize.
  void waitForQuietly(uint64_t Seq);
  void workerLoop();
  Error execute(OpTy &Op);
  Error takeError();

  mutable std::mutex Lock;
  std::condition_variable WorkCV;
  std::condition_variable DoneCV;
  /// Ring of pending operations; grows (doubling) only when full.
  std::vector<OpTy> Ring;
  uint64_t Head = 0; ///< Next operation to run.
  uint64_t Tail = 0; ///< Next free slot.
  std::atomic<uint64_t> Completed{0};
  bool Stop = false;
  /// A small copy runs on the caller's thread (see copyAsync).
  bool InlineRunning = false;
  /// Where capture blocks come from; may be null.
  PinnedPoolTy *Pinned;
  /// Recycled capture blocks of queued small host-to-device copies.
  std::vector<CaptureTy> FreeCaptures;
  /// First error of queued work since the last synchronize, and the
  /// sequence number of the operation that failed.
  std::unique_ptr<std::string> FailMessage;
  ErrorCode FailCode = ErrorCode::Success;
  uint64_t FailSeq = 0;
  std::thread Worker;
};

} // namespace host
} // namespace offloadio

#endif // OFFLOADIO_HOST_HOSTSTREAM_H

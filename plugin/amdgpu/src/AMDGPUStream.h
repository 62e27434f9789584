// SPDX-License-Identifier: Apache-2.0
//
// Streams and events on HSA signals.
//
// A stream is a chain of operations: each operation's completion signal is
// the dependency of the next one, so the chain runs in order while the
// caller never blocks. Copies are hsa_amd_memory_async_copy calls, kernel
// launches and dependency barriers are AQL packets on one of the device's
// queues, and host callbacks run from hsa_amd_signal_async_handler on the
// previous signal and then complete a signal of their own. The last
// operation's signal is the tail; an event is a reference to a tail.
#ifndef OFFLOADIO_AMDGPU_AMDGPUSTREAM_H
#define OFFLOADIO_AMDGPU_AMDGPUSTREAM_H

#include "AMDGPUContext.h"
#include "AMDGPUKernargPool.h"
#include "AMDGPUKernel.h"
#include "AMDGPUQueue.h"
#include "AMDGPUSignal.h"

#include "offloadio/Stream.h"

#include "llvm/ADT/SmallVector.h"

#include <deque>
#include <mutex>
#include <optional>
#include <string>

namespace offloadio {
namespace amdgpu {

/// Wait until \p Signal is done, checking every so often whether the queue
/// that should complete it died (its packets then never complete). Returns
/// an error for a dead queue; a negative signal value is left to the caller.
Error waitSignal(const AMDGPUContextTy &Ctx, const AMDGPUSignalTy &Signal);

/// An event: the tail signal of a stream at the time it was recorded.
class AMDGPUEventTy final : public EventTy {
public:
  AMDGPUEventTy(const AMDGPUContextTy &Ctx, int32_t DeviceId)
      : Ctx(Ctx), DeviceId(DeviceId) {}

  Error synchronize() override;
  Expected<bool> query() override;

  /// Point the event at \p Signal (null: nothing to wait for).
  void set(AMDGPUSignalRefTy Signal);
  /// The recorded signal, with a reference for the caller.
  AMDGPUSignalRefTy get() const;

private:
  const AMDGPUContextTy &Ctx;
  const int32_t DeviceId;
  mutable std::mutex Lock;
  AMDGPUSignalRefTy Signal;
};

/// One in-order stream of a device.
class AMDGPUStreamTy final : public StreamTy {
public:
  AMDGPUStreamTy(AMDGPUContextTy &Ctx, hsa_agent_t Agent, AMDGPUQueueTy &Queue,
                 AMDGPUKernargPoolTy &Kernargs, int32_t DeviceId)
      : Ctx(Ctx), Agent(Agent), Queue(Queue), Kernargs(Kernargs),
        DeviceId(DeviceId) {}
  ~AMDGPUStreamTy() override;

  Error copyAsync(void *Dst, const void *Src, size_t Size,
                  CopyKindTy Kind) override;
  Error recordEvent(EventTy &Event) override;
  Error waitEvent(EventTy &Event) override;
  Error hostCallback(HostCallbackTy Fn, void *Data) override;
  Error synchronize() override;
  Expected<bool> query() override;

  /// Enqueue an async copy between explicit agents (device to device
  /// across GPUs). Both pointers must be accessible to the agents' engines.
  Error copyBetweenAgents(void *Dst, hsa_agent_t DstAgent, const void *Src,
                          hsa_agent_t SrcAgent, size_t Size, CopyKindTy Kind);

  /// Enqueue a kernel dispatch. The stream sets the completion signal and
  /// owns \p Kernarg from now on (returned to its pool when the kernel is
  /// done, or at once if enqueueing fails). \p KernelName must outlive the
  /// launch.
  Error launch(hsa_kernel_dispatch_packet_t Packet, AMDGPUKernargSlotTy Kernarg,
               const std::string &KernelName);

  /// The AQL queue the stream's packets go to.
  AMDGPUQueueTy &getQueue() const { return Queue; }

private:
  enum class OpKindTy : uint8_t { Copy, Dispatch, Barrier, HostCall };

  /// One enqueued operation, kept until its completion signal is done.
  /// HostCall records are read by the runtime's handler thread, which is
  /// why they live in a deque (push_back/pop_front keep references valid).
  struct OpTy {
    OpKindTy Kind = OpKindTy::Copy;
    AMDGPUSignalRefTy Completion;
    /// Signals the operation waits for; held until it is done.
    llvm::SmallVector<AMDGPUSignalRefTy, 2> Deps;
    /// Copy and host-copy arguments.
    void *Dst = nullptr;
    const void *Src = nullptr;
    size_t Size = 0;
    CopyKindTy CopyKind = CopyKindTy::HostToDevice;
    /// Dispatch: the kernel's name and its argument buffer.
    const std::string *KernelName = nullptr;
    AMDGPUKernargSlotTy Kernarg;
    /// HostCall: the callback (null: a host-to-host memmove).
    HostCallbackTy Fn = nullptr;
    void *Data = nullptr;
    AMDGPUStreamTy *Stream = nullptr;
  };

  /// hsa_amd_signal_async_handler callback of HostCall operations.
  static bool hostCallHandler(hsa_signal_value_t Value, void *Arg);

  /// Run a host call now (callback or memmove), recording its error.
  void runHostCall(HostCallbackTy Fn, void *Data, void *Dst, const void *Src,
                   size_t Size);
  /// Enqueue a host call after all earlier work.
  Error enqueueHostCall(HostCallbackTy Fn, void *Data, void *Dst,
                        const void *Src, size_t Size);

  /// The signals the next operation must wait for: the tail (unless it
  /// comes from our own queue and \p QueueOrdered) and pending event waits.
  void collectDeps(llvm::SmallVectorImpl<AMDGPUSignalRefTy> &Deps,
                   bool QueueOrdered) const;
  /// Turn pending event waits into a barrier packet that becomes the tail.
  Error flushWaits();
  /// Retire finished operations from the front, recording failures.
  void reap();
  /// The dead queue that keeps \p Op from ever completing: the queue that
  /// should complete it, or one that should complete a dependency of it.
  static const AMDGPUQueueTy *stuckOn(const OpTy &Op);
  /// Wait for everything enqueued; on a dead queue mark the stream broken.
  Error drain();
  /// Record the first failure of queued work.
  void recordError(ErrorCode Code, std::string Message);
  void recordError(Error Err);
  /// "kernel X", "host-to-device copy of N bytes from A to B", ...
  static std::string describe(const OpTy &Op);
  /// Record that \p Op failed with completion value \p Value.
  void recordFailure(const OpTy &Op, hsa_signal_value_t Value);
  /// Mark the stream broken because \p Op waits on \p Dead forever.
  Error breakOn(const OpTy &Op, const AMDGPUQueueTy &Dead);
  /// Return and clear the recorded failure.
  Error takeError();
  /// Error if the stream can no longer be used.
  Error checkUsable() const;

  AMDGPUContextTy &Ctx;
  const hsa_agent_t Agent;
  AMDGPUQueueTy &Queue;
  AMDGPUKernargPoolTy &Kernargs;
  const int32_t DeviceId;

  /// Guards everything below except the recorded error.
  std::mutex Lock;
  std::deque<OpTy> Ops;
  AMDGPUSignalRefTy Tail;
  /// Whether Tail is completed by a packet of Queue (so queue order
  /// already makes later packets wait for it).
  bool TailOnQueue = false;
  llvm::SmallVector<AMDGPUSignalRefTy, 4> PendingWaits;
  /// Set when the queue died with work in flight: that work's signals and
  /// buffers may still be touched by the device and are never recycled.
  bool Broken = false;

  /// First failure since the last synchronize (also written by handlers).
  std::mutex ErrorLock;
  std::optional<std::pair<ErrorCode, std::string>> Failure;
};

} // namespace amdgpu
} // namespace offloadio

#endif // OFFLOADIO_AMDGPU_AMDGPUSTREAM_H

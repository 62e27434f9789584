// SPDX-License-Identifier: Apache-2.0
//
// A user-mode AQL queue of one GPU: packet slots, header publication and the
// doorbell. Streams share a device's queues; every packet the backend
// writes has the barrier bit set, so a queue runs its packets in order.
#ifndef OFFLOADIO_AMDGPU_AMDGPUQUEUE_H
#define OFFLOADIO_AMDGPU_AMDGPUQUEUE_H

#include "HSAApi.h"

#include "llvm/ADT/ArrayRef.h"

#include <atomic>
#include <memory>
#include <mutex>

namespace offloadio {
namespace amdgpu {

/// One HSA queue.
class AMDGPUQueueTy {
public:
  /// Create a queue of \p Size packets (a power of two) on \p Agent.
  static Expected<std::unique_ptr<AMDGPUQueueTy>> create(const HSAApiTy &Api,
                                                         hsa_agent_t Agent,
                                                         uint32_t Size,
                                                         int32_t DeviceId);
  ~AMDGPUQueueTy();
  AMDGPUQueueTy(const AMDGPUQueueTy &) = delete;
  AMDGPUQueueTy &operator=(const AMDGPUQueueTy &) = delete;

  /// Enqueue barrier-AND packets (five dependencies each) so that later
  /// packets of this queue start only after every signal in \p Deps is
  /// done. The last packet decrements \p Completion (a zero handle: none).
  Error pushBarrier(llvm::ArrayRef<hsa_signal_t> Deps, hsa_signal_t Completion);

  /// Enqueue \p Packet as a kernel dispatch. Its header is ignored and
  /// replaced by the dispatch header (barrier bit, system-scope fences).
  Error pushDispatch(const hsa_kernel_dispatch_packet_t &Packet);

  /// Whether the runtime reported an error for this queue. Queue errors
  /// are permanent: the queue no longer processes packets.
  bool hasFailed() const {
    return AsyncStatus.load(std::memory_order_acquire) != HSA_STATUS_SUCCESS;
  }
  /// The error the runtime reported, as an Error naming the device.
  Error getFailure() const;

  /// The HSA queue (for the hidden queue-pointer kernel argument).
  hsa_queue_t *get() const { return Queue; }

private:
  AMDGPUQueueTy(const HSAApiTy &Api, int32_t DeviceId)
      : Api(Api), DeviceId(DeviceId) {}

  /// The runtime's error callback; records the first status.
  static void onError(hsa_status_t Status, hsa_queue_t *Source, void *Data);

  /// Reserve the next packet slot (waiting while the ring is full) and
  /// return its index. Called with Lock held.
  Expected<uint64_t> acquireSlot();
  /// Copy \p Packet (64 bytes) into slot \p Index, publish its first 32
  /// bits (\p HeaderAndSetup) atomically last, and ring the doorbell.
  void publish(uint64_t Index, const void *Packet, uint32_t HeaderAndSetup);

  const HSAApiTy &Api;
  const int32_t DeviceId;
  hsa_queue_t *Queue = nullptr;
  /// Serialises producers so that slots are published and the doorbell
  /// rung in index order.
  std::mutex Lock;
  std::atomic<hsa_status_t> AsyncStatus{HSA_STATUS_SUCCESS};
};

} // namespace amdgpu
} // namespace offloadio

#endif // OFFLOADIO_AMDGPU_AMDGPUQUEUE_H

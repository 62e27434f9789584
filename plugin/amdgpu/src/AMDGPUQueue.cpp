// SPDX-License-Identifier: Apache-2.0
#include "AMDGPUQueue.h"

#include <cstring>
#include <thread>

using namespace offloadio;
using namespace offloadio::amdgpu;

namespace {

/// Header bits shared by every packet the backend writes: in-order
/// execution and system-scope acquire/release fences, so host-visible
/// memory is coherent before and after each packet.
uint16_t packetHeader(hsa_packet_type_t Type) {
  return uint16_t(
      (Type << HSA_PACKET_HEADER_TYPE) | (1 << HSA_PACKET_HEADER_BARRIER) |
      (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE) |
      (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE));
}

} // namespace

Expected<std::unique_ptr<AMDGPUQueueTy>>
AMDGPUQueueTy::create(const HSAApiTy &Api, hsa_agent_t Agent, uint32_t Size,
                      int32_t DeviceId) {
  std::unique_ptr<AMDGPUQueueTy> Q(new AMDGPUQueueTy(Api, DeviceId));
  if (auto Err = checkHSA(
          Api,
          Api.hsa_queue_create(Agent, Size, HSA_QUEUE_TYPE_MULTI, &onError,
                               Q.get(), UINT32_MAX, UINT32_MAX, &Q->Queue),
          "hsa_queue_create", "queue of {0} packets on device {1}", Size,
          DeviceId))
    return std::move(Err);
  return std::move(Q);
}

AMDGPUQueueTy::~AMDGPUQueueTy() {
  if (Queue)
    Api.hsa_queue_destroy(Queue);
}

void AMDGPUQueueTy::onError(hsa_status_t Status, hsa_queue_t *Source,
                            void *Data) {
  // Runs on a runtime thread. Keep the first error; whoever waits on this
  // queue's signals reports it instead of waiting forever.
  auto *Q = static_cast<AMDGPUQueueTy *>(Data);
  hsa_status_t Expected = HSA_STATUS_SUCCESS;
  Q->AsyncStatus.compare_exchange_strong(Expected, Status,
                                         std::memory_order_acq_rel);
}

Error AMDGPUQueueTy::getFailure() const {
  hsa_status_t Status = AsyncStatus.load(std::memory_order_acquire);
  if (Status == HSA_STATUS_SUCCESS)
    return Error::success();
  return makeError(ErrorCode::BackendError,
                   "the HSA queue of device {0} reported an error: {1}",
                   DeviceId, Api.describe(Status));
}

Expected<uint64_t> AMDGPUQueueTy::acquireSlot() {
  uint64_t Index = Api.hsa_queue_add_write_index_relaxed(Queue, 1);
  // The slot is free once the packet processor has consumed the packet
  // that used it Size packets ago.
  while (Index - Api.hsa_queue_load_read_index_scacquire(Queue) >=
         Queue->size) {
    if (hasFailed())
      return getFailure();
    std::this_thread::yield();
  }
  return Index;
}

void AMDGPUQueueTy::publish(uint64_t Index, const void *Packet,
                            uint32_t HeaderAndSetup) {
  auto *Slot = static_cast<uint8_t *>(Queue->base_address) +
               (Index % Queue->size) * sizeof(hsa_kernel_dispatch_packet_t);
  // Everything but the first 32 bits first; the processor ignores the slot
  // while its header says INVALID.
  std::memcpy(Slot + 4, static_cast<const uint8_t *>(Packet) + 4,
              sizeof(hsa_kernel_dispatch_packet_t) - 4);
  // Release: the body is visible before the header that makes it valid.
  __atomic_store_n(reinterpret_cast<uint32_t *>(Slot), HeaderAndSetup,
                   __ATOMIC_RELEASE);
  Api.hsa_signal_store_screlease(Queue->doorbell_signal,
                                 hsa_signal_value_t(Index));
}

Error AMDGPUQueueTy::pushBarrier(llvm::ArrayRef<hsa_signal_t> Deps,
                                 hsa_signal_t Completion) {
  std::lock_guard<std::mutex> Guard(Lock);
  if (hasFailed())
    return getFailure();
  size_t Done = 0;
  do {
    size_t N = std::min<size_t>(Deps.size() - Done, 5);
    hsa_barrier_and_packet_t Packet;
    std::memset(&Packet, 0, sizeof(Packet));
    for (size_t I = 0; I < N; ++I)
      Packet.dep_signal[I] = Deps[Done + I];
    Done += N;
    if (Done == Deps.size())
      Packet.completion_signal = Completion;
    auto Index = acquireSlot();
    if (!Index)
      return Index.takeError();
    publish(*Index, &Packet, packetHeader(HSA_PACKET_TYPE_BARRIER_AND));
  } while (Done < Deps.size());
  return Error::success();
}

Error AMDGPUQueueTy::pushDispatch(const hsa_kernel_dispatch_packet_t &Packet) {
  std::lock_guard<std::mutex> Guard(Lock);
  if (hasFailed())
    return getFailure();
  auto Index = acquireSlot();
  if (!Index)
    return Index.takeError();
  uint32_t HeaderAndSetup =
      uint32_t(packetHeader(HSA_PACKET_TYPE_KERNEL_DISPATCH)) |
      (uint32_t(Packet.setup) << 16);
  publish(*Index, &Packet, HeaderAndSetup);
  return Error::success();
}

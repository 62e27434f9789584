// SPDX-License-Identifier: Apache-2.0
//
// hsa-emu: user-mode AQL queues with a packet processor thread each.
//
// The processor handles BARRIER_AND and BARRIER_OR packets for real. Kernel
// dispatch packets are validated (kernel object, geometry, kernarg memory)
// and then reported as unsupported: there is no GPU ISA interpreter. The
// error goes to the queue's callback (HSA_STATUS_ERROR_INVALID_PACKET_FORMAT)
// and the packet's completion signal is set to -1, so waiters wake up
// instead of hanging; from then on the queue is in an error state and every
// later packet completes with -1 unprocessed. With HSA_EMU_DISPATCH=noop,
// valid dispatches complete successfully without running anything.
#include "Emu.h"

#include <cinttypes>
#include <cstdlib>
#include <cstring>
#include <unordered_set>

using namespace hsaemu;

namespace {

/// How long the processor sleeps between checks when nothing rings.
constexpr uint64_t PollNs = 50 * 1000 * 1000;

struct QueueTy {
  /// What the API hands out. Its id field holds this object's address.
  hsa_queue_t Public;
  AgentTy *Agent = nullptr;
  std::atomic<uint64_t> ReadIndex{0};
  std::atomic<uint64_t> WriteIndex{0};
  SignalTy *Doorbell = nullptr;
  void (*Callback)(hsa_status_t, hsa_queue_t *, void *) = nullptr;
  void *CallbackData = nullptr;
  std::atomic<bool> Stop{false};
  std::atomic<bool> Inactive{false};
  /// Set after the first error; later packets complete with -1.
  bool Failed = false;
  std::thread Processor;

  uint8_t *packet(uint64_t Index) {
    return static_cast<uint8_t *>(Public.base_address) +
           (Index % Public.size) * 64;
  }
  void process();
  bool runPacket(uint8_t *Packet, uint8_t Type);
  bool waitBelowOne(SignalTy *S);
  void fail(hsa_status_t Status, const char *Why);
};

// Leaked: see Signals.cpp.
std::mutex &LiveLock = *new std::mutex();
std::unordered_set<QueueTy *> &LiveQueues =
    *new std::unordered_set<QueueTy *>();
std::atomic<uint64_t> NextQueueNumber{0};

inline QueueTy *fromPublic(const hsa_queue_t *Q) {
  return reinterpret_cast<QueueTy *>(Q->id);
}

uint16_t loadHeader(uint8_t *Packet) {
  return __atomic_load_n(reinterpret_cast<uint16_t *>(Packet),
                         __ATOMIC_ACQUIRE);
}

void storeHeader(uint8_t *Packet, uint16_t Header) {
  __atomic_store_n(reinterpret_cast<uint16_t *>(Packet), Header,
                   __ATOMIC_RELEASE);
}

uint64_t readArg(const uint8_t *Base, uint32_t Offset, uint32_t Size) {
  uint64_t V = 0;
  std::memcpy(&V, Base + Offset, std::min<uint32_t>(Size, 8));
  return V;
}

void traceDispatch(const QueueTy &Q, const hsa_kernel_dispatch_packet_t &D,
                   const KernelInfoTy *K) {
  unsigned Dims = (D.setup >> HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS) & 3;
  warn("dispatch %s on GPU %u: dims %u grid [%u,%u,%u] workgroup "
       "[%u,%u,%u] group_segment %u private_segment %u kernarg %u bytes",
       K ? K->Name.c_str() : "<unknown kernel object>", Q.Agent->GpuIndex, Dims,
       D.grid_size_x, D.grid_size_y, D.grid_size_z,
       unsigned(D.workgroup_size_x), unsigned(D.workgroup_size_y),
       unsigned(D.workgroup_size_z), D.group_segment_size,
       D.private_segment_size, K ? K->KernargSize : 0);
  if (!K || !D.kernarg_address)
    return;
  auto *Args = static_cast<const uint8_t *>(D.kernarg_address);
  for (size_t I = 0; I < K->Args.size(); ++I) {
    const KernelArgInfoTy &A = K->Args[I];
    if (A.Offset + A.Size > K->KernargSize)
      continue;
    uint64_t V = readArg(Args, A.Offset, A.Size);
    if (A.ValueKind.rfind("hidden_", 0) == 0)
      warn("  arg %zu %s offset %u size %u = %" PRIu64, I, A.ValueKind.c_str(),
           A.Offset, A.Size, V);
    else
      warn("  arg %zu %s offset %u size %u = 0x%" PRIx64, I,
           A.ValueKind.c_str(), A.Offset, A.Size, V);
  }
}

} // namespace

void QueueTy::fail(hsa_status_t Status, const char *Why) {
  warn("GPU %u queue %" PRIu64 ": %s", Agent->GpuIndex,
       uint64_t(Public.reserved1), Why);
  if (!Failed && Callback)
    Callback(Status, &Public, CallbackData);
  Failed = true;
}

bool QueueTy::waitBelowOne(SignalTy *S) {
  while (!Stop.load(std::memory_order_acquire)) {
    if (S->wait(HSA_SIGNAL_CONDITION_LT, 1, PollNs) < 1)
      return true;
  }
  return false;
}

/// Run one packet; returns false when it failed (completion becomes -1).
bool QueueTy::runPacket(uint8_t *Packet, uint8_t Type) {
  switch (Type) {
  case HSA_PACKET_TYPE_BARRIER_AND: {
    auto *B = reinterpret_cast<hsa_barrier_and_packet_t *>(Packet);
    // HSA completes a barrier-AND dependency at value 0; the emulation
    // accepts any value below 1, so a failed (negative) dependency does not
    // block forever.
    for (hsa_signal_t Dep : B->dep_signal)
      if (Dep.handle && !waitBelowOne(toSignal(Dep)))
        return false;
    return true;
  }
  case HSA_PACKET_TYPE_BARRIER_OR: {
    auto *B = reinterpret_cast<hsa_barrier_or_packet_t *>(Packet);
    bool Any = false;
    for (hsa_signal_t Dep : B->dep_signal)
      Any |= Dep.handle != 0;
    while (Any && !Stop.load(std::memory_order_acquire)) {
      for (hsa_signal_t Dep : B->dep_signal)
        if (Dep.handle &&
            toSignal(Dep)->wait(HSA_SIGNAL_CONDITION_LT, 1, 1000 * 1000) < 1)
          return true;
    }
    return !Any;
  }
  case HSA_PACKET_TYPE_KERNEL_DISPATCH: {
    auto *D = reinterpret_cast<hsa_kernel_dispatch_packet_t *>(Packet);
    const KernelInfoTy *K = lookupKernel(D->kernel_object);
    if (config().Trace)
      traceDispatch(*this, *D, K);
    char Why[512];
    unsigned Dims =
        (D->setup >> HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS) & 3;
    uint64_t GroupThreads = uint64_t(D->workgroup_size_x) *
                            D->workgroup_size_y * D->workgroup_size_z;
    if (!K) {
      std::snprintf(Why, sizeof(Why),
                    "dispatch packet names kernel object 0x%" PRIx64
                    ", which is not a loaded kernel descriptor",
                    D->kernel_object);
    } else if (Dims < 1 || GroupThreads == 0 || GroupThreads > 1024 ||
               !D->grid_size_x || !D->grid_size_y || !D->grid_size_z) {
      std::snprintf(Why, sizeof(Why),
                    "dispatch of %s has an invalid geometry: dims %u grid "
                    "[%u,%u,%u] workgroup [%u,%u,%u]",
                    K->Name.c_str(), Dims, D->grid_size_x, D->grid_size_y,
                    D->grid_size_z, unsigned(D->workgroup_size_x),
                    unsigned(D->workgroup_size_y),
                    unsigned(D->workgroup_size_z));
    } else if (K->KernargSize &&
               !isKernargMemory(D->kernarg_address, K->KernargSize, Agent)) {
      std::snprintf(Why, sizeof(Why),
                    "dispatch of %s: kernarg address %p (%u bytes) is not "
                    "in kernarg-capable memory this GPU may access",
                    K->Name.c_str(), D->kernarg_address, K->KernargSize);
    } else if (D->group_segment_size < K->GroupSize ||
               D->private_segment_size < K->PrivateSize) {
      std::snprintf(Why, sizeof(Why),
                    "dispatch of %s: segment sizes group %u private %u are "
                    "below the kernel's %u and %u",
                    K->Name.c_str(), D->group_segment_size,
                    D->private_segment_size, K->GroupSize, K->PrivateSize);
    } else if (config().DispatchNoop) {
      return true;
    } else {
      std::snprintf(Why, sizeof(Why),
                    "kernel dispatch of %s is not supported by the HSA "
                    "emulation (it cannot run GPU code); reporting "
                    "HSA_STATUS_ERROR_INVALID_PACKET_FORMAT",
                    K->Name.c_str());
    }
    fail(HSA_STATUS_ERROR_INVALID_PACKET_FORMAT, Why);
    return false;
  }
  default: {
    char Why[128];
    std::snprintf(Why, sizeof(Why), "unsupported AQL packet type %u",
                  unsigned(Type));
    fail(HSA_STATUS_ERROR_INVALID_PACKET_FORMAT, Why);
    return false;
  }
  }
}

void QueueTy::process() {
  uint64_t Index = ReadIndex.load(std::memory_order_acquire);
  while (!Stop.load(std::memory_order_acquire)) {
    uint8_t *Packet = packet(Index);
    uint16_t Header = loadHeader(Packet);
    uint8_t Type = uint8_t(Header >> HSA_PACKET_HEADER_TYPE);
    if (Type == HSA_PACKET_TYPE_INVALID || Inactive.load()) {
      // Producers ring the doorbell with the index of the packet written.
      Doorbell->wait(HSA_SIGNAL_CONDITION_GTE, hsa_signal_value_t(Index),
                     PollNs);
      continue;
    }
    // Packets run one at a time, so the barrier bit always holds.
    bool Ok = !Failed && runPacket(Packet, Type);
    if (Stop.load(std::memory_order_acquire))
      return;
    if (!Ok && config().StopFailedQueues) {
      // Like ROCr: a failed queue is dead; nothing completes any more.
      while (!Stop.load(std::memory_order_acquire))
        Doorbell->wait(HSA_SIGNAL_CONDITION_EQ, INT64_MAX, PollNs);
      return;
    }
    // Every packet type keeps its completion signal at byte 56.
    hsa_signal_t Completion;
    std::memcpy(&Completion, Packet + 56, sizeof(Completion));
    if (Completion.handle)
      toSignal(Completion)->update([Ok](hsa_signal_value_t Old) {
        return Ok ? Old - 1 : hsa_signal_value_t(-1);
      });
    storeHeader(Packet, HSA_PACKET_TYPE_INVALID << HSA_PACKET_HEADER_TYPE);
    ReadIndex.store(++Index, std::memory_order_release);
  }
}

extern "C" {

hsa_status_t hsa_queue_create(hsa_agent_t AgentHandle, uint32_t Size,
                              hsa_queue_type32_t Type,
                              void (*Callback)(hsa_status_t, hsa_queue_t *,
                                               void *),
                              void *Data, uint32_t PrivateSegmentSize,
                              uint32_t GroupSegmentSize, hsa_queue_t **Queue) {
  if (!isInitialized())
    return HSA_STATUS_ERROR_NOT_INITIALIZED;
  AgentTy *Agent = lookupAgent(AgentHandle);
  if (!Agent)
    return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!Agent->isGpu())
    return HSA_STATUS_ERROR_INVALID_QUEUE_CREATION;
  if (!Queue || Size < 64 || Size > 131072 || (Size & (Size - 1)) ||
      (Type != HSA_QUEUE_TYPE_MULTI && Type != HSA_QUEUE_TYPE_SINGLE))
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  auto *Q = new QueueTy();
  void *Ring = std::aligned_alloc(64, size_t(Size) * 64);
  if (!Ring) {
    delete Q;
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  }
  for (uint32_t I = 0; I < Size; ++I)
    storeHeader(static_cast<uint8_t *>(Ring) + size_t(I) * 64,
                HSA_PACKET_TYPE_INVALID << HSA_PACKET_HEADER_TYPE);
  Q->Agent = Agent;
  Q->Callback = Callback;
  Q->CallbackData = Data;
  // -1 so that the first packet (index 0) is announced by a change.
  Q->Doorbell = new SignalTy(-1);
  std::memset(&Q->Public, 0, sizeof(Q->Public));
  Q->Public.type = Type;
  Q->Public.features = HSA_QUEUE_FEATURE_KERNEL_DISPATCH;
  Q->Public.base_address = Ring;
  Q->Public.doorbell_signal = Q->Doorbell->handle();
  Q->Public.size = Size;
  Q->Public.reserved1 = uint32_t(NextQueueNumber.fetch_add(1));
  Q->Public.id = reinterpret_cast<uint64_t>(Q);
  {
    std::lock_guard<std::mutex> Guard(LiveLock);
    LiveQueues.insert(Q);
  }
  Q->Processor = std::thread([Q] { Q->process(); });
  *Queue = &Q->Public;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_queue_destroy(hsa_queue_t *Queue) {
  if (!isInitialized())
    return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!Queue)
    return HSA_STATUS_ERROR_INVALID_QUEUE;
  QueueTy *Q = fromPublic(Queue);
  {
    std::lock_guard<std::mutex> Guard(LiveLock);
    if (!LiveQueues.erase(Q))
      return HSA_STATUS_ERROR_INVALID_QUEUE;
  }
  Q->Stop.store(true, std::memory_order_release);
  Q->Doorbell->update([](hsa_signal_value_t) { return INT64_MAX; });
  Q->Processor.join();
  std::free(Q->Public.base_address);
  delete Q->Doorbell;
  delete Q;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_queue_inactivate(hsa_queue_t *Queue) {
  if (!isInitialized())
    return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!Queue)
    return HSA_STATUS_ERROR_INVALID_QUEUE;
  fromPublic(Queue)->Inactive.store(true);
  return HSA_STATUS_SUCCESS;
}

uint64_t hsa_queue_load_read_index_scacquire(const hsa_queue_t *Queue) {
  return fromPublic(Queue)->ReadIndex.load(std::memory_order_acquire);
}
uint64_t hsa_queue_load_read_index_relaxed(const hsa_queue_t *Queue) {
  return fromPublic(Queue)->ReadIndex.load(std::memory_order_relaxed);
}
uint64_t hsa_queue_load_write_index_scacquire(const hsa_queue_t *Queue) {
  return fromPublic(Queue)->WriteIndex.load(std::memory_order_acquire);
}
uint64_t hsa_queue_load_write_index_relaxed(const hsa_queue_t *Queue) {
  return fromPublic(Queue)->WriteIndex.load(std::memory_order_relaxed);
}
void hsa_queue_store_write_index_relaxed(const hsa_queue_t *Queue,
                                         uint64_t Value) {
  fromPublic(Queue)->WriteIndex.store(Value, std::memory_order_relaxed);
}
void hsa_queue_store_write_index_screlease(const hsa_queue_t *Queue,
                                           uint64_t Value) {
  fromPublic(Queue)->WriteIndex.store(Value, std::memory_order_release);
}
void hsa_queue_store_read_index_relaxed(const hsa_queue_t *Queue,
                                        uint64_t Value) {
  fromPublic(Queue)->ReadIndex.store(Value, std::memory_order_relaxed);
}
void hsa_queue_store_read_index_screlease(const hsa_queue_t *Queue,
                                          uint64_t Value) {
  fromPublic(Queue)->ReadIndex.store(Value, std::memory_order_release);
}

#define HSAEMU_QUEUE_INDEX_RMW(Order, MemOrder)                                \
  uint64_t hsa_queue_add_write_index_##Order(const hsa_queue_t *Queue,         \
                                             uint64_t Value) {                 \
    return fromPublic(Queue)->WriteIndex.fetch_add(Value, MemOrder);           \
  }                                                                            \
  uint64_t hsa_queue_cas_write_index_##Order(                                  \
      const hsa_queue_t *Queue, uint64_t Expected, uint64_t Value) {           \
    fromPublic(Queue)->WriteIndex.compare_exchange_strong(Expected, Value,     \
                                                          MemOrder);           \
    return Expected;                                                           \
  }

HSAEMU_QUEUE_INDEX_RMW(relaxed, std::memory_order_relaxed)
HSAEMU_QUEUE_INDEX_RMW(scacquire, std::memory_order_acquire)
HSAEMU_QUEUE_INDEX_RMW(screlease, std::memory_order_release)
HSAEMU_QUEUE_INDEX_RMW(scacq_screl, std::memory_order_acq_rel)
#undef HSAEMU_QUEUE_INDEX_RMW

} // extern "C"

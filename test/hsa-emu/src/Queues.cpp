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
//
// A destroyed queue is kept, never freed, with its ring unmapped in place
// (PROT_NONE): index calls and doorbell writes on it are reported as
// misuses, and a packet written into its ring faults at once.
#include "Emu.h"

#include <cinttypes>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
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
  /// Set by hsa_queue_destroy; the object lives on for the checks.
  std::atomic<bool> Destroyed{false};
  /// Set after the first error; later packets complete with -1.
  bool Failed = false;
  std::thread Processor;

  uint8_t *packet(uint64_t Index) {
    return static_cast<uint8_t *>(Public.base_address) +
           (Index % Public.size) * 64;
  }
  size_t ringBytes() const { return size_t(Public.size) * 64; }
  void process();
  bool runPacket(uint8_t *Packet, uint8_t Type, uint64_t Index);
  /// The signal a packet names in \p Field, or null after a misuse: the
  /// packet processor uses it as a device would, so it must be live.
  SignalTy *packetSignal(hsa_signal_t Signal, uint64_t Index, const char *Field,
                         std::string &Where);
  bool waitBelowOne(SignalTy *S, hsa_signal_t Handle, const std::string &Where);
  void fail(hsa_status_t Status, const char *Why);
};

// Leaked: see Signals.cpp. Every queue ever created, by its public address;
// destroyed ones stay (QueueTy::Destroyed).
std::shared_mutex &RegistryLock = *new std::shared_mutex();
std::unordered_set<const hsa_queue_t *> &KnownQueues =
    *new std::unordered_set<const hsa_queue_t *>();
std::atomic<uint64_t> NextQueueNumber{0};

inline QueueTy *fromPublic(const hsa_queue_t *Q) {
  return reinterpret_cast<QueueTy *>(Q->id);
}

/// The live queue behind a caller's \p Queue, or null after reporting a
/// misuse by \p Call: a null pointer, one that is no queue, or a destroyed
/// queue (ROCr reads freed memory there; calls with a status return
/// HSA_STATUS_ERROR_INVALID_QUEUE).
QueueTy *checkQueue(const hsa_queue_t *Queue, const char *Call) {
  if (!Queue) {
    misuse(Call, "the queue pointer is null");
    return nullptr;
  }
  bool Known;
  {
    std::shared_lock<std::shared_mutex> Guard(RegistryLock);
    Known = KnownQueues.count(Queue) != 0;
  }
  if (!Known) {
    misuse(Call, "%p is not a queue (none was created there)",
           static_cast<const void *>(Queue));
    return nullptr;
  }
  QueueTy *Q = fromPublic(Queue);
  if (Q->Destroyed.load(std::memory_order_acquire)) {
    misuse(Call, "queue %p (number %u) was destroyed by hsa_queue_destroy",
           static_cast<const void *>(Queue), unsigned(Queue->reserved1));
    return nullptr;
  }
  return Q;
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

/// Whether the hidden arguments of \p K that code object v5 kernels read
/// their geometry from (the block counts, group sizes, remainders and
/// dimensions) agree with dispatch \p D of \p Dims dimensions; if not,
/// the first mismatch is described in \p Why. Kernels without them (v4)
/// agree.
bool hiddenGeometryAgrees(const KernelInfoTy &K,
                          const hsa_kernel_dispatch_packet_t &D, unsigned Dims,
                          char *Why, size_t WhySize) {
  if (!D.kernarg_address)
    return true;
  const uint32_t Grid[3] = {D.grid_size_x, D.grid_size_y, D.grid_size_z};
  const uint32_t Group[3] = {D.workgroup_size_x, D.workgroup_size_y,
                             D.workgroup_size_z};
  auto *Args = static_cast<const uint8_t *>(D.kernarg_address);
  for (const KernelArgInfoTy &A : K.Args) {
    const std::string &Kind = A.ValueKind;
    uint64_t Expected;
    if (Kind == "hidden_grid_dims") {
      Expected = Dims;
    } else if (Kind.size() == 20 && Kind.rfind("hidden_block_count_", 0) == 0) {
      unsigned I = unsigned(Kind.back() - 'x');
      Expected = (uint64_t(Grid[I]) + Group[I] - 1) / Group[I];
    } else if (Kind.size() == 19 && Kind.rfind("hidden_group_size_", 0) == 0) {
      unsigned I = unsigned(Kind.back() - 'x');
      Expected = Group[I];
    } else if (Kind.size() == 18 && Kind.rfind("hidden_remainder_", 0) == 0) {
      unsigned I = unsigned(Kind.back() - 'x');
      Expected = Grid[I] % Group[I];
    } else {
      continue;
    }
    if (A.Offset + A.Size > K.KernargSize || A.Size > 8)
      continue;
    uint64_t Value = readArg(Args, A.Offset, A.Size);
    if (Value != Expected) {
      std::snprintf(Why, WhySize,
                    "dispatch of %s: kernel argument %s (offset %u) is %" PRIu64
                    ", but the packet's geometry (dims %u grid [%u,%u,%u] "
                    "workgroup [%u,%u,%u]) makes it %" PRIu64
                    "; code object v5 kernels read their geometry there",
                    K.Name.c_str(), Kind.c_str(), A.Offset, Value, Dims,
                    Grid[0], Grid[1], Grid[2], Group[0], Group[1], Group[2],
                    Expected);
      return false;
    }
  }
  return true;
}

} // namespace

void QueueTy::fail(hsa_status_t Status, const char *Why) {
  warn("GPU %u queue %" PRIu64 ": %s", Agent->GpuIndex,
       uint64_t(Public.reserved1), Why);
  if (!Failed && Callback)
    Callback(Status, &Public, CallbackData);
  Failed = true;
}

SignalTy *QueueTy::packetSignal(hsa_signal_t Signal, uint64_t Index,
                                const char *Field, std::string &Where) {
  char Buffer[160];
  std::snprintf(Buffer, sizeof(Buffer),
                "AQL packet %" PRIu64 " of queue %p (number %u), %s", Index,
                static_cast<void *>(&Public), unsigned(Public.reserved1),
                Field);
  Where = Buffer;
  return checkSignal(Signal, Buffer);
}

bool QueueTy::waitBelowOne(SignalTy *S, hsa_signal_t Handle,
                           const std::string &Where) {
  while (!Stop.load(std::memory_order_acquire)) {
    hsa_signal_value_t V = S->wait(HSA_SIGNAL_CONDITION_LT, 1, PollNs);
    if (V < 1)
      return true;
    if (S->isDestroyed()) {
      misuse(Where.c_str(),
             "signal 0x%" PRIx64 " was destroyed (%s) at value %" PRId64
             " while the packet waited on it",
             Handle.handle, S->destroyedBy(), int64_t(V));
      return false;
    }
  }
  return false;
}

/// Run packet \p Index; returns false when it failed (completion becomes
/// -1).
bool QueueTy::runPacket(uint8_t *Packet, uint8_t Type, uint64_t Index) {
  char Field[32];
  std::string Where;
  switch (Type) {
  case HSA_PACKET_TYPE_BARRIER_AND: {
    auto *B = reinterpret_cast<hsa_barrier_and_packet_t *>(Packet);
    // HSA completes a barrier-AND dependency at value 0; the emulation
    // accepts any value below 1, so a failed (negative) dependency does not
    // block forever.
    for (unsigned I = 0; I < 5; ++I) {
      hsa_signal_t Dep = B->dep_signal[I];
      if (!Dep.handle)
        continue;
      std::snprintf(Field, sizeof(Field), "barrier-AND dep_signal[%u]", I);
      SignalTy *S = packetSignal(Dep, Index, Field, Where);
      if (!S || !waitBelowOne(S, Dep, Where))
        return false;
    }
    return true;
  }
  case HSA_PACKET_TYPE_BARRIER_OR: {
    auto *B = reinterpret_cast<hsa_barrier_or_packet_t *>(Packet);
    SignalTy *Deps[5] = {};
    std::string Wheres[5];
    bool Any = false;
    for (unsigned I = 0; I < 5; ++I) {
      if (!B->dep_signal[I].handle)
        continue;
      std::snprintf(Field, sizeof(Field), "barrier-OR dep_signal[%u]", I);
      if (!(Deps[I] = packetSignal(B->dep_signal[I], Index, Field, Wheres[I])))
        return false;
      Any = true;
    }
    while (Any && !Stop.load(std::memory_order_acquire)) {
      for (unsigned I = 0; I < 5; ++I) {
        if (!Deps[I])
          continue;
        hsa_signal_value_t V =
            Deps[I]->wait(HSA_SIGNAL_CONDITION_LT, 1, 1000 * 1000);
        if (V < 1)
          return true;
        if (Deps[I]->isDestroyed()) {
          misuse(Wheres[I].c_str(),
                 "signal 0x%" PRIx64 " was destroyed (%s) at value %" PRId64
                 " while the packet waited on it",
                 B->dep_signal[I].handle, Deps[I]->destroyedBy(), int64_t(V));
          return false;
        }
      }
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
    } else if (!hiddenGeometryAgrees(*K, *D, Dims, Why, sizeof(Why))) {
      // Why says which argument.
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
    bool Ok = !Failed && runPacket(Packet, Type, Index);
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
    std::string Where;
    if (Completion.handle)
      if (SignalTy *S =
              packetSignal(Completion, Index, "completion_signal", Where))
        S->update([Ok](hsa_signal_value_t Old) {
          return Ok ? Old - 1 : hsa_signal_value_t(-1);
        });
    storeHeader(Packet, HSA_PACKET_TYPE_INVALID << HSA_PACKET_HEADER_TYPE);
    ReadIndex.store(++Index, std::memory_order_release);
  }
}

namespace {

// The index calls have no status: after a misuse in error mode loads and
// read-modify-writes return UINT64_MAX, an index no queue reaches, and
// stores change nothing. (ROCr reads and writes the freed queue.)
uint64_t loadIndex(const hsa_queue_t *Queue, const char *Call,
                   std::atomic<uint64_t> QueueTy::*Index,
                   std::memory_order Order) {
  QueueTy *Q = checkQueue(Queue, Call);
  return Q ? (Q->*Index).load(Order) : UINT64_MAX;
}

void storeIndex(const hsa_queue_t *Queue, const char *Call,
                std::atomic<uint64_t> QueueTy::*Index, uint64_t Value,
                std::memory_order Order) {
  if (QueueTy *Q = checkQueue(Queue, Call))
    (Q->*Index).store(Value, Order);
}

} // namespace

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
  // Its own mapping (Size * 64 is a multiple of the page size), so that
  // hsa_queue_destroy can unmap it in place.
  void *Ring = mmap(nullptr, size_t(Size) * 64, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (Ring == MAP_FAILED)
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  auto *Q = new QueueTy();
  for (uint32_t I = 0; I < Size; ++I)
    storeHeader(static_cast<uint8_t *>(Ring) + size_t(I) * 64,
                HSA_PACKET_TYPE_INVALID << HSA_PACKET_HEADER_TYPE);
  Q->Agent = Agent;
  Q->Callback = Callback;
  Q->CallbackData = Data;
  // -1 so that the first packet (index 0) is announced by a change.
  Q->Doorbell = new SignalTy(-1);
  registerSignal(Q->Doorbell);
  std::memset(&Q->Public, 0, sizeof(Q->Public));
  Q->Public.type = Type;
  Q->Public.features = HSA_QUEUE_FEATURE_KERNEL_DISPATCH;
  Q->Public.base_address = Ring;
  Q->Public.doorbell_signal = Q->Doorbell->handle();
  Q->Public.size = Size;
  Q->Public.reserved1 = uint32_t(NextQueueNumber.fetch_add(1));
  Q->Public.id = reinterpret_cast<uint64_t>(Q);
  {
    std::unique_lock<std::shared_mutex> Guard(RegistryLock);
    KnownQueues.insert(&Q->Public);
  }
  Q->Processor = std::thread([Q] { Q->process(); });
  *Queue = &Q->Public;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_queue_destroy(hsa_queue_t *Queue) {
  if (!isInitialized())
    return HSA_STATUS_ERROR_NOT_INITIALIZED;
  // Checked and marked under one lock, so that two racing destroys of the
  // same queue cannot both succeed.
  static std::mutex &DestroyLock = *new std::mutex();
  QueueTy *Q;
  {
    std::lock_guard<std::mutex> Guard(DestroyLock);
    if (!(Q = checkQueue(Queue, __func__)))
      return HSA_STATUS_ERROR_INVALID_QUEUE;
    Q->Destroyed.store(true, std::memory_order_release);
  }
  Q->Stop.store(true, std::memory_order_release);
  Q->Doorbell->update([](hsa_signal_value_t) { return INT64_MAX; });
  Q->Processor.join();
  retireSignal(Q->Doorbell, "with its queue, by hsa_queue_destroy");
  // Unmapped in place rather than freed: the address stays reserved, and a
  // packet written through a stale base_address faults.
  mmap(Q->Public.base_address, Q->ringBytes(), PROT_NONE,
       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_queue_inactivate(hsa_queue_t *Queue) {
  if (!isInitialized())
    return HSA_STATUS_ERROR_NOT_INITIALIZED;
  QueueTy *Q = checkQueue(Queue, __func__);
  if (!Q)
    return HSA_STATUS_ERROR_INVALID_QUEUE;
  Q->Inactive.store(true);
  return HSA_STATUS_SUCCESS;
}

uint64_t hsa_queue_load_read_index_scacquire(const hsa_queue_t *Queue) {
  return loadIndex(Queue, __func__, &QueueTy::ReadIndex,
                   std::memory_order_acquire);
}
uint64_t hsa_queue_load_read_index_relaxed(const hsa_queue_t *Queue) {
  return loadIndex(Queue, __func__, &QueueTy::ReadIndex,
                   std::memory_order_relaxed);
}
uint64_t hsa_queue_load_write_index_scacquire(const hsa_queue_t *Queue) {
  return loadIndex(Queue, __func__, &QueueTy::WriteIndex,
                   std::memory_order_acquire);
}
uint64_t hsa_queue_load_write_index_relaxed(const hsa_queue_t *Queue) {
  return loadIndex(Queue, __func__, &QueueTy::WriteIndex,
                   std::memory_order_relaxed);
}
void hsa_queue_store_write_index_relaxed(const hsa_queue_t *Queue,
                                         uint64_t Value) {
  storeIndex(Queue, __func__, &QueueTy::WriteIndex, Value,
             std::memory_order_relaxed);
}
void hsa_queue_store_write_index_screlease(const hsa_queue_t *Queue,
                                           uint64_t Value) {
  storeIndex(Queue, __func__, &QueueTy::WriteIndex, Value,
             std::memory_order_release);
}
void hsa_queue_store_read_index_relaxed(const hsa_queue_t *Queue,
                                        uint64_t Value) {
  storeIndex(Queue, __func__, &QueueTy::ReadIndex, Value,
             std::memory_order_relaxed);
}
void hsa_queue_store_read_index_screlease(const hsa_queue_t *Queue,
                                          uint64_t Value) {
  storeIndex(Queue, __func__, &QueueTy::ReadIndex, Value,
             std::memory_order_release);
}

#define HSAEMU_QUEUE_INDEX_RMW(Order, MemOrder)                                \
  uint64_t hsa_queue_add_write_index_##Order(const hsa_queue_t *Queue,         \
                                             uint64_t Value) {                 \
    QueueTy *Q = checkQueue(Queue, __func__);                                  \
    return Q ? Q->WriteIndex.fetch_add(Value, MemOrder) : UINT64_MAX;          \
  }                                                                            \
  uint64_t hsa_queue_cas_write_index_##Order(                                  \
      const hsa_queue_t *Queue, uint64_t Expected, uint64_t Value) {           \
    QueueTy *Q = checkQueue(Queue, __func__);                                  \
    if (!Q)                                                                    \
      return UINT64_MAX;                                                       \
    Q->WriteIndex.compare_exchange_strong(Expected, Value, MemOrder);          \
    return Expected;                                                           \
  }

HSAEMU_QUEUE_INDEX_RMW(relaxed, std::memory_order_relaxed)
HSAEMU_QUEUE_INDEX_RMW(scacquire, std::memory_order_acquire)
HSAEMU_QUEUE_INDEX_RMW(screlease, std::memory_order_release)
HSAEMU_QUEUE_INDEX_RMW(scacq_screl, std::memory_order_acq_rel)
#undef HSAEMU_QUEUE_INDEX_RMW

} // extern "C"

// SPDX-License-Identifier: Apache-2.0
//
// hsa-emu: pool allocations, access grants, host-memory locking with agent
// aliases, pointer info, and the asynchronous copy engine.
//
// Locking: ROCr maps locked host pages into the GPU's address space, usually
// at a different virtual address than the host's. Private malloc'd pages
// cannot be mapped a second time in the same process, so the emulation
// reserves an inaccessible (PROT_NONE) address range of the same page span
// and hands out the address at the same page offset inside it: the "agent
// alias". The CPU faults if it ever dereferences an alias, exactly the bug on
// a real GPU system; the copy engine and pointer info translate alias
// addresses back to the host pages.
//
// Checks on callers (misuse): freeing what is not a live allocation, and
// (HSA_EMU_STRICT, the default) copying memory the engine agent cannot
// access, or filling memory that is neither allocated nor locked.
#include "Emu.h"

#include <cinttypes>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sys/mman.h>
#include <unistd.h>

using namespace hsaemu;

namespace {

constexpr uintptr_t PageSize = 4096;

uintptr_t alignDown(uintptr_t P) { return P & ~(PageSize - 1); }
uintptr_t alignUp(uintptr_t P) { return (P + PageSize - 1) & ~(PageSize - 1); }

/// One pool allocation (or a loader segment).
struct AllocationTy {
  size_t Size = 0;
  PoolTy *Pool = nullptr;
  /// Agents granted access with hsa_amd_agents_allow_access.
  std::vector<AgentTy *> Allowed;
  /// Made by the loader; not freeable with hsa_amd_memory_pool_free.
  bool Internal = false;
};

/// One locked host range and its agent alias.
struct LockTy {
  uintptr_t HostBase = 0;
  size_t Size = 0;
  uintptr_t AliasBase = 0;
  /// The PROT_NONE reservation that holds the alias.
  void *Mapping = nullptr;
  size_t MappingSize = 0;
  /// Agents given access; empty means every agent.
  std::vector<AgentTy *> Agents;
  /// The CPU pool whose properties the lock took (null: hsa_amd_memory_lock).
  PoolTy *Pool = nullptr;
  uint32_t Refs = 1;
};

// Global state is leaked on purpose: copy workers and late callers (the
// plugin at libomptarget's exit) may use it after static destructors ran.
std::shared_mutex &RegistryLock = *new std::shared_mutex();
std::map<uintptr_t, AllocationTy> &Allocations =
    *new std::map<uintptr_t, AllocationTy>();
/// Locks by alias start; alias ranges never overlap (fresh reservations).
std::map<uintptr_t, std::unique_ptr<LockTy>> &Locks =
    *new std::map<uintptr_t, std::unique_ptr<LockTy>>();
/// Start addresses of freed allocations not handed out again, so that a
/// second free can say so.
std::set<uintptr_t> &FreedBases = *new std::set<uintptr_t>();

bool contains(uintptr_t Base, size_t Size, uintptr_t P, size_t N) {
  return P >= Base && P - Base <= Size && N <= Size - (P - Base);
}

/// The allocation containing address \p P (its first byte at least).
std::map<uintptr_t, AllocationTy>::iterator findAllocation(uintptr_t P) {
  auto It = Allocations.upper_bound(P);
  if (It == Allocations.begin())
    return Allocations.end();
  --It;
  if (P - It->first < std::max<size_t>(It->second.Size, 1))
    return It;
  return Allocations.end();
}

/// The lock whose alias contains \p P.
LockTy *findAlias(uintptr_t P) {
  auto It = Locks.upper_bound(P);
  if (It == Locks.begin())
    return nullptr;
  --It;
  LockTy *L = It->second.get();
  return P - L->AliasBase < L->Size ? L : nullptr;
}

/// The most recent lock whose host range contains \p P. Host ranges may
/// overlap (ROCr allows overlapping locks), so this is a linear scan.
LockTy *findLockedHost(uintptr_t P) {
  LockTy *Found = nullptr;
  for (auto &[Alias, L] : Locks)
    if (P - L->HostBase < L->Size)
      Found = L.get();
  return Found;
}

bool agentListed(const std::vector<AgentTy *> &List, AgentTy *A) {
  return std::find(List.begin(), List.end(), A) != List.end();
}

bool allocationAccessible(const AllocationTy &Alloc, AgentTy *A) {
  if (!A || !A->isGpu())
    return Alloc.Pool->Owner->Type == HSA_DEVICE_TYPE_CPU ||
           agentListed(Alloc.Allowed, A);
  return Alloc.Pool->Owner == A || agentListed(Alloc.Allowed, A);
}

/// Copy jobs waiting for their dependencies, then run by worker threads.
struct JobTy {
  std::vector<SignalTy *> Deps;
  SignalTy *Completion = nullptr;
  std::function<bool()> Fn;
  /// The call that made the job and what it does, for misuse reports.
  const char *Call = "";
  std::string What;
};

/// Signal \p Job's completion: decremented, or -1 when it failed. A
/// completion signal destroyed before then is a misuse: ROCr's engine would
/// write into a freed (or reused) signal.
void finish(JobTy &Job, bool Ok) {
  if (Job.Completion->isDestroyed()) {
    misuse(Job.Call,
           "completion signal 0x%" PRIx64 " was destroyed (%s) before the %s "
           "completed",
           Job.Completion->handle().handle, Job.Completion->destroyedBy(),
           Job.What.c_str());
    return;
  }
  // ROCr decrements the completion signal when the copy is done and makes
  // it negative on failure.
  Job.Completion->update([Ok](hsa_signal_value_t Old) {
    return Ok ? Old - 1 : hsa_signal_value_t(-1);
  });
}

/// Report a dependency of \p Job destroyed before the job started (ROCr's
/// engine would wait on freed memory), and fail the job.
void depDestroyed(JobTy &Job, SignalTy *Dep, hsa_signal_value_t Value) {
  misuse(Job.Call,
         "dependency signal 0x%" PRIx64 " was destroyed (%s) at value %" PRId64
         " before the %s started",
         Dep->handle().handle, Dep->destroyedBy(), int64_t(Value),
         Job.What.c_str());
  finish(Job, false);
}

class CopyEngineTy {
public:
  CopyEngineTy() {
    for (unsigned I = 0; I < std::max(1u, config().CopyWorkers); ++I)
      std::thread([this] { work(); }).detach();
  }

  void submit(std::shared_ptr<JobTy> Job) {
    for (SignalTy *Dep : Job->Deps) {
      if (Dep->isDestroyed())
        return depDestroyed(*Job, Dep, Dep->load());
      if (Dep->load() >= 1) {
        // Re-examine all dependencies when this one is satisfied.
        DepWatcher.watch(
            Dep, HSA_SIGNAL_CONDITION_LT, 1,
            [this, Job](hsa_signal_value_t) {
              submit(Job);
              return false;
            },
            [Job, Dep](hsa_signal_value_t V) { depDestroyed(*Job, Dep, V); });
        return;
      }
    }
    {
      std::lock_guard<std::mutex> Guard(Lock);
      Ready.push_back(std::move(Job));
    }
    ReadyCV.notify_one();
  }

private:
  void work() {
    while (true) {
      std::shared_ptr<JobTy> Job;
      {
        std::unique_lock<std::mutex> Guard(Lock);
        ReadyCV.wait(Guard, [&] { return !Ready.empty(); });
        Job = std::move(Ready.front());
        Ready.pop_front();
      }
      finish(*Job, Job->Fn());
    }
  }

  WatcherTy DepWatcher;
  std::mutex Lock;
  std::condition_variable ReadyCV;
  std::deque<std::shared_ptr<JobTy>> Ready;
};

CopyEngineTy &copyEngine() {
  // Leaked on purpose: workers may be blocked when the process exits.
  static CopyEngineTy *Engine = new CopyEngineTy();
  return *Engine;
}

/// Why hsa_amd_memory_pool_free may not free \p P (the registry locked).
std::string whyNotFreeable(uintptr_t P) {
  char Buffer[256];
  auto *Ptr = reinterpret_cast<void *>(P);
  auto It = findAllocation(P);
  if (It != Allocations.end() && It->second.Internal)
    std::snprintf(Buffer, sizeof(Buffer),
                  "%p holds a loaded code object; hsa_executable_destroy "
                  "frees it",
                  Ptr);
  else if (It != Allocations.end())
    std::snprintf(Buffer, sizeof(Buffer),
                  "%p is inside the %zu-byte allocation at %p, not its start",
                  Ptr, It->second.Size, reinterpret_cast<void *>(It->first));
  else if (FreedBases.count(P))
    std::snprintf(Buffer, sizeof(Buffer), "%p was already freed", Ptr);
  else if (findAlias(P) || findLockedHost(P))
    std::snprintf(Buffer, sizeof(Buffer),
                  "%p is locked host memory, not an allocation; "
                  "hsa_amd_memory_unlock unlocks it",
                  Ptr);
  else
    std::snprintf(Buffer, sizeof(Buffer),
                  "%p was never allocated by hsa_amd_memory_pool_allocate",
                  Ptr);
  return Buffer;
}

std::string describeAgent(AgentTy *A) {
  if (!A)
    return "the CPU";
  if (A->isGpu())
    return "GPU agent " + std::to_string(A->GpuIndex) + " (" + A->Name + ")";
  return "the CPU agent";
}

/// Whether a copy engine may touch \p R: a GPU engine (DMA) only memory
/// its agent may access; host-to-host copies (\p Engine null, the CPU) any
/// host memory but device memory the CPU was not granted. Without
/// HSA_EMU_STRICT, anything the CPU can touch.
bool engineReaches(const ResolvedRangeTy &R, AgentTy *Engine) {
  if (!R.Usable)
    return false;
  if (!config().Strict || R.Accessible)
    return true;
  return !Engine && !R.Known;
}

} // namespace

ResolvedRangeTy hsaemu::resolveRange(const void *Ptr, size_t Size,
                                     AgentTy *Agent) {
  ResolvedRangeTy R;
  auto P = reinterpret_cast<uintptr_t>(Ptr);
  R.HostPtr = const_cast<char *>(static_cast<const char *>(Ptr));
  std::shared_lock<std::shared_mutex> Guard(RegistryLock);
  char Buffer[256];
  if (LockTy *L = findAlias(P)) {
    R.HostPtr = reinterpret_cast<char *>(L->HostBase + (P - L->AliasBase));
    R.Known = true;
    if (!contains(L->AliasBase, L->Size, P, Size)) {
      std::snprintf(Buffer, sizeof(Buffer),
                    "%zu bytes at agent address %p run past the end of the "
                    "%zu-byte locked region aliased at %p",
                    Size, Ptr, L->Size, reinterpret_cast<void *>(L->AliasBase));
      R.Usable = false;
      R.Why = Buffer;
      R.FaultAddress = L->AliasBase + L->Size;
      return R;
    }
    R.Accessible = L->Agents.empty() || agentListed(L->Agents, Agent) ||
                   !Agent || !Agent->isGpu();
    if (!R.Accessible)
      R.Why = "the locked region was not locked for " + describeAgent(Agent);
    return R;
  }
  auto It = findAllocation(P);
  if (It != Allocations.end()) {
    R.Known = true;
    if (!contains(It->first, It->second.Size, P, Size)) {
      std::snprintf(Buffer, sizeof(Buffer),
                    "%zu bytes at %p run past the end of the %zu-byte "
                    "allocation at %p",
                    Size, Ptr, It->second.Size,
                    reinterpret_cast<void *>(It->first));
      R.Usable = false;
      R.Why = Buffer;
      R.FaultAddress = It->first + It->second.Size;
      return R;
    }
    R.Pool = It->second.Pool;
    R.Accessible = allocationAccessible(It->second, Agent);
    if (!R.Accessible)
      R.Why = describeAgent(Agent) +
              " was not granted access (hsa_amd_agents_allow_access)";
    return R;
  }
  if (LockTy *L = findLockedHost(P)) {
    R.LockedHost = contains(L->HostBase, L->Size, P, Size);
    std::snprintf(Buffer, sizeof(Buffer),
                  "%p is the host address of memory locked at agent "
                  "address %p; agents must use the agent address",
                  Ptr,
                  reinterpret_cast<void *>(L->AliasBase + (P - L->HostBase)));
    R.Why = Buffer;
    return R;
  }
  R.Why = "neither a pool allocation nor locked memory";
  return R;
}

void hsaemu::registerInternalAllocation(void *Ptr, size_t Size, PoolTy *Pool) {
  std::unique_lock<std::shared_mutex> Guard(RegistryLock);
  FreedBases.erase(reinterpret_cast<uintptr_t>(Ptr));
  AllocationTy &A = Allocations[reinterpret_cast<uintptr_t>(Ptr)];
  A.Size = Size;
  A.Pool = Pool;
  A.Internal = true;
}

void hsaemu::unregisterInternalAllocation(void *Ptr) {
  std::unique_lock<std::shared_mutex> Guard(RegistryLock);
  Allocations.erase(reinterpret_cast<uintptr_t>(Ptr));
}

bool hsaemu::isKernargMemory(const void *Ptr, size_t Size, AgentTy *Agent) {
  auto P = reinterpret_cast<uintptr_t>(Ptr);
  std::shared_lock<std::shared_mutex> Guard(RegistryLock);
  auto It = findAllocation(P);
  if (It == Allocations.end() || !contains(It->first, It->second.Size, P, Size))
    return false;
  return (It->second.Pool->GlobalFlags &
          HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT) &&
         allocationAccessible(It->second, Agent);
}

void hsaemu::submitAsync(std::vector<SignalTy *> Deps, SignalTy *Completion,
                         std::function<bool()> Fn, const char *Call,
                         std::string What) {
  auto Job = std::make_shared<JobTy>();
  Job->Deps = std::move(Deps);
  Job->Completion = Completion;
  Job->Fn = std::move(Fn);
  Job->Call = Call;
  Job->What = std::move(What);
  copyEngine().submit(std::move(Job));
}

#define CHECK_INIT()                                                           \
  do {                                                                         \
    if (!isInitialized())                                                      \
      return HSA_STATUS_ERROR_NOT_INITIALIZED;                                 \
  } while (0)

extern "C" {

hsa_status_t hsa_amd_memory_pool_allocate(hsa_amd_memory_pool_t PoolHandle,
                                          size_t Size, uint32_t Flags,
                                          void **Ptr) {
  CHECK_INIT();
  PoolTy *Pool = lookupPool(PoolHandle);
  if (!Pool)
    return hsa_status_t(HSA_STATUS_ERROR_INVALID_MEMORY_POOL);
  if (!Ptr)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (Size == 0 || !Pool->AllocAllowed)
    return HSA_STATUS_ERROR_INVALID_ALLOCATION;
  size_t Rounded = alignUp(Size);
  if (Rounded < Size)
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  uint64_t Before = Pool->Used.fetch_add(Rounded);
  if (Before + Rounded > Pool->Size || Before + Rounded < Before) {
    Pool->Used.fetch_sub(Rounded);
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  }
  void *Mem = std::aligned_alloc(PageSize, Rounded);
  if (!Mem) {
    Pool->Used.fetch_sub(Rounded);
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  }
  {
    std::unique_lock<std::shared_mutex> Guard(RegistryLock);
    FreedBases.erase(reinterpret_cast<uintptr_t>(Mem));
    AllocationTy &A = Allocations[reinterpret_cast<uintptr_t>(Mem)];
    A = AllocationTy();
    A.Size = Size;
    A.Pool = Pool;
  }
  *Ptr = Mem;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_memory_pool_free(void *Ptr) {
  CHECK_INIT();
  // As in ROCr (hsa_memory_free).
  if (!Ptr)
    return HSA_STATUS_SUCCESS;
  PoolTy *Pool;
  size_t Size;
  {
    std::unique_lock<std::shared_mutex> Guard(RegistryLock);
    auto P = reinterpret_cast<uintptr_t>(Ptr);
    auto It = Allocations.find(P);
    if (It == Allocations.end() || It->second.Internal) {
      std::string Why = whyNotFreeable(P);
      Guard.unlock();
      misuse(__func__, "%s", Why.c_str());
      return HSA_STATUS_ERROR_INVALID_ALLOCATION;
    }
    Pool = It->second.Pool;
    Size = It->second.Size;
    Allocations.erase(It);
    FreedBases.insert(P);
  }
  Pool->Used.fetch_sub(alignUp(Size));
  std::free(Ptr);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_agents_allow_access(uint32_t NumAgents,
                                         const hsa_agent_t *Agents,
                                         const uint32_t *Flags,
                                         const void *Ptr) {
  CHECK_INIT();
  if (!NumAgents || !Agents || !Ptr)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  std::vector<AgentTy *> List;
  for (uint32_t I = 0; I < NumAgents; ++I) {
    AgentTy *A = lookupAgent(Agents[I]);
    if (!A)
      return HSA_STATUS_ERROR_INVALID_AGENT;
    List.push_back(A);
  }
  std::unique_lock<std::shared_mutex> Guard(RegistryLock);
  auto It = findAllocation(reinterpret_cast<uintptr_t>(Ptr));
  if (It == Allocations.end())
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  for (AgentTy *A : List)
    if (!agentListed(It->second.Allowed, A))
      It->second.Allowed.push_back(A);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_memory_lock_to_pool(void *HostPtr, size_t Size,
                                         hsa_agent_t *Agents, int NumAgents,
                                         hsa_amd_memory_pool_t PoolHandle,
                                         uint32_t Flags, void **AgentPtr) {
  CHECK_INIT();
  if (!HostPtr || !Size || !AgentPtr || NumAgents < 0 ||
      (NumAgents > 0 && !Agents) || Flags != 0)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  PoolTy *Pool = nullptr;
  if (PoolHandle.handle) {
    Pool = lookupPool(PoolHandle);
    if (!Pool)
      return hsa_status_t(HSA_STATUS_ERROR_INVALID_MEMORY_POOL);
    // Locking takes the access properties of a system (CPU) pool.
    if (Pool->Owner->isGpu() || Pool->Segment != HSA_AMD_SEGMENT_GLOBAL)
      return hsa_status_t(HSA_STATUS_ERROR_INVALID_MEMORY_POOL);
  }
  std::vector<AgentTy *> List;
  for (int I = 0; I < NumAgents; ++I) {
    AgentTy *A = lookupAgent(Agents[I]);
    if (!A)
      return HSA_STATUS_ERROR_INVALID_AGENT;
    List.push_back(A);
  }
  auto Host = reinterpret_cast<uintptr_t>(HostPtr);
  if (Host + Size < Host)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  uintptr_t SpanStart = alignDown(Host);
  size_t SpanSize = alignUp(Host + Size) - SpanStart;

  // The pages must exist: mincore fails with ENOMEM on unmapped ranges.
  std::vector<unsigned char> Residency(SpanSize / PageSize);
  if (mincore(reinterpret_cast<void *>(SpanStart), SpanSize,
              Residency.data()) != 0)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;

  std::unique_lock<std::shared_mutex> Guard(RegistryLock);
  // Runtime allocations are already accessible; ROCr refuses to lock them
  // (newer ROCr versions explicitly), and aliases are not host memory.
  for (uintptr_t P : {Host, Host + Size - 1}) {
    if (findAllocation(P) != Allocations.end() || findAlias(P))
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  // Identical ranges share one registration, as the kernel driver does.
  for (auto &[Alias, L] : Locks) {
    if (L->HostBase == Host && L->Size == Size && L->Pool == Pool &&
        L->Agents == List) {
      ++L->Refs;
      *AgentPtr = reinterpret_cast<void *>(L->AliasBase);
      return HSA_STATUS_SUCCESS;
    }
  }
  void *Mapping = mmap(nullptr, SpanSize, PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (Mapping == MAP_FAILED)
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  auto L = std::make_unique<LockTy>();
  L->HostBase = Host;
  L->Size = Size;
  L->Mapping = Mapping;
  L->MappingSize = SpanSize;
  L->AliasBase = reinterpret_cast<uintptr_t>(Mapping) + (Host - SpanStart);
  L->Agents = std::move(List);
  L->Pool = Pool;
  *AgentPtr = reinterpret_cast<void *>(L->AliasBase);
  Locks[L->AliasBase] = std::move(L);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_memory_lock(void *HostPtr, size_t Size,
                                 hsa_agent_t *Agents, int NumAgents,
                                 void **AgentPtr) {
  return hsa_amd_memory_lock_to_pool(HostPtr, Size, Agents, NumAgents,
                                     hsa_amd_memory_pool_t{0}, 0, AgentPtr);
}

hsa_status_t hsa_amd_memory_unlock(void *HostPtr) {
  CHECK_INIT();
  auto Host = reinterpret_cast<uintptr_t>(HostPtr);
  std::unique_lock<std::shared_mutex> Guard(RegistryLock);
  // ROCr leaves unlocking anything but a locked start address undefined;
  // the emulation reports it.
  LockTy *Found = nullptr;
  for (auto &[Alias, L] : Locks)
    if (L->HostBase == Host)
      Found = L.get();
  if (!Found) {
    warn("hsa_amd_memory_unlock(%p): no lock starts at this address", HostPtr);
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  if (--Found->Refs == 0) {
    munmap(Found->Mapping, Found->MappingSize);
    Locks.erase(Found->AliasBase);
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_pointer_info(const void *Ptr, hsa_amd_pointer_info_t *Info,
                                  void *(*Alloc)(size_t),
                                  uint32_t *NumAgentsAccessible,
                                  hsa_agent_t **Accessible) {
  CHECK_INIT();
  if (!Ptr || !Info ||
      Info->size < offsetof(hsa_amd_pointer_info_t, type) + sizeof(Info->type))
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  hsa_amd_pointer_info_t Out;
  std::memset(&Out, 0, sizeof(Out));
  Out.size = uint32_t(std::min<size_t>(Info->size, sizeof(Out)));
  Out.type = HSA_EXT_POINTER_TYPE_UNKNOWN;
  std::vector<AgentTy *> Agents;
  auto P = reinterpret_cast<uintptr_t>(Ptr);
  {
    std::shared_lock<std::shared_mutex> Guard(RegistryLock);
    auto It = findAllocation(P);
    LockTy *L = findAlias(P);
    if (!L)
      L = findLockedHost(P);
    if (It != Allocations.end()) {
      const AllocationTy &A = It->second;
      Out.type = HSA_EXT_POINTER_TYPE_HSA;
      Out.agentBaseAddress = reinterpret_cast<void *>(It->first);
      Out.hostBaseAddress = reinterpret_cast<void *>(It->first);
      Out.sizeInBytes = A.Size;
      Out.agentOwner = A.Pool->Owner->handle();
      Out.global_flags = A.Pool->GlobalFlags;
      Agents.push_back(A.Pool->Owner);
      if (A.Pool->Owner != topology().Cpu &&
          A.Pool->Segment == HSA_AMD_SEGMENT_GLOBAL &&
          agentListed(A.Allowed, topology().Cpu))
        Agents.push_back(topology().Cpu);
      for (AgentTy *G : A.Allowed)
        if (!agentListed(Agents, G))
          Agents.push_back(G);
    } else if (L) {
      Out.type = HSA_EXT_POINTER_TYPE_LOCKED;
      Out.agentBaseAddress = reinterpret_cast<void *>(L->AliasBase);
      Out.hostBaseAddress = reinterpret_cast<void *>(L->HostBase);
      Out.sizeInBytes = L->Size;
      Out.agentOwner = topology().Cpu->handle();
      Out.global_flags =
          L->Pool ? L->Pool->GlobalFlags
                  : uint32_t(HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED);
      Agents.push_back(topology().Cpu);
      if (L->Agents.empty()) {
        for (auto &A : topology().Agents)
          if (A->isGpu())
            Agents.push_back(A.get());
      } else {
        for (AgentTy *G : L->Agents)
          if (!agentListed(Agents, G))
            Agents.push_back(G);
      }
    }
  }
  std::memcpy(Info, &Out, Out.size);
  if (Alloc && NumAgentsAccessible && Accessible) {
    if (Out.type == HSA_EXT_POINTER_TYPE_UNKNOWN)
      Agents.clear();
    *NumAgentsAccessible = uint32_t(Agents.size());
    *Accessible = static_cast<hsa_agent_t *>(
        Alloc(std::max<size_t>(1, Agents.size()) * sizeof(hsa_agent_t)));
    if (!*Accessible)
      return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
    for (size_t I = 0; I < Agents.size(); ++I)
      (*Accessible)[I] = Agents[I]->handle();
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_memory_async_copy(void *Dst, hsa_agent_t DstAgent,
                                       const void *Src, hsa_agent_t SrcAgent,
                                       size_t Size, uint32_t NumDeps,
                                       const hsa_signal_t *Deps,
                                       hsa_signal_t Completion) {
  CHECK_INIT();
  AgentTy *DA = lookupAgent(DstAgent);
  AgentTy *SA = lookupAgent(SrcAgent);
  if (!DA || !SA)
    return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!Dst || !Src || (NumDeps && !Deps))
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  // ROCr checks the dependencies, then the completion signal: the null
  // handle is an invalid argument there, another bad one an invalid signal.
  std::vector<SignalTy *> DepList;
  for (uint32_t I = 0; I < NumDeps; ++I) {
    SignalTy *Dep = checkSignal(Deps[I], __func__);
    if (!Dep)
      return Deps[I].handle ? HSA_STATUS_ERROR_INVALID_SIGNAL
                            : HSA_STATUS_ERROR_INVALID_ARGUMENT;
    DepList.push_back(Dep);
  }
  SignalTy *Done = checkSignal(Completion, __func__);
  if (!Done)
    return Completion.handle ? HSA_STATUS_ERROR_INVALID_SIGNAL
                             : HSA_STATUS_ERROR_INVALID_ARGUMENT;
  // The engine is the source GPU's, else the destination GPU's (host to
  // host copies have none). It must reach both buffers.
  AgentTy *Engine = SA->isGpu() ? SA : (DA->isGpu() ? DA : nullptr);
  char What[128];
  std::snprintf(What, sizeof(What), "copy of %zu bytes from %p to %p", Size,
                Src, Dst);
  // Checked when the copy runs, as ROCr's engine faults only then.
  auto Copy = [=]() -> bool {
    ResolvedRangeTy D = resolveRange(Dst, Size, Engine);
    ResolvedRangeTy S = resolveRange(Src, Size, Engine);
    for (auto *R : {&D, &S}) {
      if (engineReaches(*R, Engine))
        continue;
      // A copy engine that runs off the end of a mapping page-faults on a
      // GPU, and ROCr hands the fault to the system event handlers (LLVM's
      // own plugin aborts in its handler); unhandled, it is a misuse.
      if (!R->Usable && Engine &&
          raiseMemoryFault(Engine, R->FaultAddress,
                           std::string("hsa_amd_memory_async_copy: ") + What +
                               " by " + describeAgent(Engine) + ": " +
                               (R == &D ? "destination " : "source ") +
                               R->Why))
        return false;
      misuse("hsa_amd_memory_async_copy", "%s by %s: %s %s", What,
             describeAgent(Engine).c_str(), R == &D ? "destination" : "source",
             R->Why.c_str());
      return false;
    }
    if (Size)
      std::memmove(D.HostPtr, S.HostPtr, Size);
    return true;
  };
  submitAsync(std::move(DepList), Done, Copy, "hsa_amd_memory_async_copy",
              What);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_memory_fill(void *Ptr, uint32_t Value, size_t Count) {
  CHECK_INIT();
  if (!Ptr || reinterpret_cast<uintptr_t>(Ptr) % 4)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (Count > SIZE_MAX / 4)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  // ROCr fills an allocation or a locked range (agent or host address) and
  // returns INVALID_ALLOCATION for anything else, a range that runs past
  // the end of one included.
  ResolvedRangeTy R = resolveRange(Ptr, Count * 4, nullptr);
  bool Fillable = R.Known || R.LockedHost;
  if (!R.Usable || (config().Strict && !Fillable)) {
    misuse(__func__, "%zu words at %p: %s", Count, Ptr, R.Why.c_str());
    return HSA_STATUS_ERROR_INVALID_ALLOCATION;
  }
  auto *Words = reinterpret_cast<uint32_t *>(R.HostPtr);
  for (size_t I = 0; I < Count; ++I)
    Words[I] = Value;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_memory_copy(void *Dst, const void *Src, size_t Size) {
  CHECK_INIT();
  if (!Dst || !Src)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  // A synchronous copy by the runtime on behalf of the host, which ROCr
  // makes with whatever engine reaches both sides (locking plain host
  // memory for it): agent aliases of locked memory are translated, and only
  // a range that runs past the end of an allocation or alias is a misuse.
  ResolvedRangeTy D = resolveRange(Dst, Size, nullptr);
  ResolvedRangeTy S = resolveRange(Src, Size, nullptr);
  for (auto *R : {&D, &S}) {
    if (!R->Usable) {
      misuse("hsa_memory_copy", "copy of %zu bytes from %p to %p: %s %s", Size,
             Src, Dst, R == &D ? "destination" : "source", R->Why.c_str());
      return HSA_STATUS_ERROR_INVALID_ALLOCATION;
    }
  }
  if (Size)
    std::memmove(D.HostPtr, S.HostPtr, Size);
  return HSA_STATUS_SUCCESS;
}

} // extern "C"

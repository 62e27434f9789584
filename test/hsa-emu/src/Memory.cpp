// SPDX-License-Identifier: Apache-2.0
//
// hsa-emu: the registry of pool allocations and locked ranges
// (MemoryRegistry.h), pool allocations and access grants, and the checks
// the other memory calls resolve their pointers with (resolveRange).
//
// Checks on callers (misuse): freeing what is not a live allocation; the
// copies (Copies.cpp) check what they touch through resolveRange.
#include "MemoryRegistry.h"

#include <cstdio>
#include <cstdlib>
#include <set>

using namespace hsaemu;

// Global state is leaked on purpose: copy workers and late callers (the
// plugin at libomptarget's exit) may use it after static destructors ran.
std::shared_mutex &hsaemu::RegistryLock = *new std::shared_mutex();
std::map<uintptr_t, AllocationTy> &hsaemu::Allocations =
    *new std::map<uintptr_t, AllocationTy>();
std::map<uintptr_t, std::unique_ptr<LockTy>> &hsaemu::Locks =
    *new std::map<uintptr_t, std::unique_ptr<LockTy>>();

namespace {

/// Start addresses of freed allocations not handed out again, so that a
/// second free can say so.
std::set<uintptr_t> &FreedBases = *new std::set<uintptr_t>();

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

} // namespace

std::map<uintptr_t, AllocationTy>::iterator
hsaemu::findAllocation(uintptr_t P) {
  auto It = Allocations.upper_bound(P);
  if (It == Allocations.begin())
    return Allocations.end();
  --It;
  if (P - It->first < std::max<size_t>(It->second.Size, 1))
    return It;
  return Allocations.end();
}

LockTy *hsaemu::findAlias(uintptr_t P) {
  auto It = Locks.upper_bound(P);
  if (It == Locks.begin())
    return nullptr;
  --It;
  LockTy *L = It->second.get();
  return P - L->AliasBase < L->Size ? L : nullptr;
}

LockTy *hsaemu::findLockedHost(uintptr_t P) {
  LockTy *Found = nullptr;
  for (auto &[Alias, L] : Locks)
    if (P - L->HostBase < L->Size)
      Found = L.get();
  return Found;
}

bool hsaemu::allocationAccessible(const AllocationTy &Alloc, AgentTy *A) {
  if (!A || !A->isGpu())
    return Alloc.Pool->Owner->Type == HSA_DEVICE_TYPE_CPU ||
           agentListed(Alloc.Allowed, A);
  return Alloc.Pool->Owner == A || agentListed(Alloc.Allowed, A);
}

std::string hsaemu::describeAgent(AgentTy *A) {
  if (!A)
    return "the CPU";
  if (A->isGpu())
    return "GPU agent " + std::to_string(A->GpuIndex) + " (" + A->Name + ")";
  return "the CPU agent";
}

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

} // extern "C"

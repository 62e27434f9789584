// SPDX-License-Identifier: Apache-2.0
//
// hsa-emu: host-memory locking with agent aliases.
//
// Locking: ROCr maps locked host pages into the GPU's address space, usually
// at a different virtual address than the host's. Private malloc'd pages
// cannot be mapped a second time in the same process, so the emulation
// reserves an inaccessible (PROT_NONE) address range of the same page span
// and hands out the address at the same page offset inside it: the "agent
// alias". The CPU faults if it ever dereferences an alias, exactly the bug on
// a real GPU system; the copy engine and pointer info translate alias
// addresses back to the host pages.
#include "MemoryRegistry.h"

#include <sys/mman.h>

using namespace hsaemu;

extern "C" {

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

} // extern "C"

// SPDX-License-Identifier: Apache-2.0
//
// hsa-emu: hsa_amd_pointer_info, answered from the registry of allocations
// and locks (MemoryRegistry.h).
#include "MemoryRegistry.h"

#include <cstddef>
#include <cstring>

using namespace hsaemu;

extern "C" {

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

} // extern "C"

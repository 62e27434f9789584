// SPDX-License-Identifier: Apache-2.0
//
// hsa-emu: the registry of pool allocations and locked host ranges (with
// their agent aliases) that the memory calls share: allocation and access
// grants (Memory.cpp), locking (Locking.cpp), pointer info (PointerInfo.cpp)
// and, through resolveRange, the copies (Copies.cpp).
#ifndef HSAEMU_MEMORYREGISTRY_H
#define HSAEMU_MEMORYREGISTRY_H

#include "Emu.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

namespace hsaemu {

constexpr uintptr_t PageSize = 4096;

inline uintptr_t alignDown(uintptr_t P) { return P & ~(PageSize - 1); }
inline uintptr_t alignUp(uintptr_t P) {
  return (P + PageSize - 1) & ~(PageSize - 1);
}

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

/// Guards Allocations and Locks.
extern std::shared_mutex &RegistryLock;
/// Pool allocations (and loader segments) by start address.
extern std::map<uintptr_t, AllocationTy> &Allocations;
/// Locks by alias start; alias ranges never overlap (fresh reservations).
extern std::map<uintptr_t, std::unique_ptr<LockTy>> &Locks;

/// Whether [P, P+N) lies inside [Base, Base+Size).
inline bool contains(uintptr_t Base, size_t Size, uintptr_t P, size_t N) {
  return P >= Base && P - Base <= Size && N <= Size - (P - Base);
}

/// The allocation containing address \p P (its first byte at least), or
/// Allocations.end().
std::map<uintptr_t, AllocationTy>::iterator findAllocation(uintptr_t P);

/// The lock whose alias contains \p P.
LockTy *findAlias(uintptr_t P);

/// The most recent lock whose host range contains \p P. Host ranges may
/// overlap (ROCr allows overlapping locks), so this is a linear scan.
LockTy *findLockedHost(uintptr_t P);

/// Whether \p A is in \p List.
inline bool agentListed(const std::vector<AgentTy *> &List, AgentTy *A) {
  return std::find(List.begin(), List.end(), A) != List.end();
}

/// Whether agent \p A (null: the CPU) may access \p Alloc.
bool allocationAccessible(const AllocationTy &Alloc, AgentTy *A);

/// "the CPU", "the CPU agent" or "GPU agent N (name)", for messages.
std::string describeAgent(AgentTy *A);

} // namespace hsaemu

#endif // HSAEMU_MEMORYREGISTRY_H

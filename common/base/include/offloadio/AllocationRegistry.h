// SPDX-License-Identifier: Apache-2.0
//
// The live allocations of one device, by address: answers "is this pointer,
// perhaps an interior one, memory of this device, and of which kind" for
// frees, for the file engine's buffer checks and for device info.
#ifndef OFFLOADIO_ALLOCATIONREGISTRY_H
#define OFFLOADIO_ALLOCATIONREGISTRY_H

#include "offloadio/ABI.h"

#include <cstdint>
#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <vector>

namespace offloadio {

/// One live allocation.
struct AllocationInfoTy {
  void *Ptr = nullptr;                   ///< Start.
  size_t Size = 0;                       ///< Bytes requested.
  AllocKindTy Kind = AllocKindTy::Device; ///< Kind it was allocated as.
};

/// Thread-safe map of live allocations, ordered by start address.
class AllocationRegistryTy {
public:
  /// Record a new allocation.
  void add(void *Ptr, size_t Size, AllocKindTy Kind) {
    std::unique_lock<std::shared_mutex> Guard(Lock);
    Allocations[reinterpret_cast<uintptr_t>(Ptr)] = {Ptr, Size, Kind};
  }

  /// Forget the allocation that starts exactly at \p Ptr; returns it, or
  /// nothing if no allocation starts there.
  std::optional<AllocationInfoTy> remove(void *Ptr) {
    std::unique_lock<std::shared_mutex> Guard(Lock);
    auto It = Allocations.find(reinterpret_cast<uintptr_t>(Ptr));
    if (It == Allocations.end())
      return std::nullopt;
    AllocationInfoTy Info = It->second;
    Allocations.erase(It);
    return Info;
  }

  /// The allocation containing \p Ptr (which may point inside it).
  std::optional<AllocationInfoTy> find(const void *Ptr) const {
    auto Addr = reinterpret_cast<uintptr_t>(Ptr);
    std::shared_lock<std::shared_mutex> Guard(Lock);
    auto It = Allocations.upper_bound(Addr);
    if (It == Allocations.begin())
      return std::nullopt;
    --It;
    // A zero-byte allocation still owns its first byte.
    if (Addr >= It->first + std::max<size_t>(It->second.Size, 1))
      return std::nullopt;
    return It->second;
  }

  /// Number of live allocations and their total size.
  std::pair<size_t, size_t> usage() const {
    std::shared_lock<std::shared_mutex> Guard(Lock);
    size_t Bytes = 0;
    for (auto &Entry : Allocations)
      Bytes += Entry.second.Size;
    return {Allocations.size(), Bytes};
  }

  /// Remove and return every allocation (device teardown).
  std::vector<AllocationInfoTy> takeAll() {
    std::unique_lock<std::shared_mutex> Guard(Lock);
    std::vector<AllocationInfoTy> All;
    for (auto &Entry : Allocations)
      All.push_back(Entry.second);
    Allocations.clear();
    return All;
  }

private:
  mutable std::shared_mutex Lock;
  std::map<uintptr_t, AllocationInfoTy> Allocations;
};

} // namespace offloadio

#endif // OFFLOADIO_ALLOCATIONREGISTRY_H

// SPDX-License-Identifier: Apache-2.0
#include "AMDGPUKernargPool.h"

#include <algorithm>
#include <cstring>
#include <string>

using namespace offloadio;
using namespace offloadio::amdgpu;

/// One arena and what its slots are doing.
struct offloadio::amdgpu::AMDGPUKernargArenaTy {
  PinnedLeaseTy Lease;
  /// Slots of this arena given out and not released.
  size_t SlotsOut = 0;
  /// Slots carved from this arena, per class.
  std::array<size_t, AMDGPUKernargPoolTy::NumClasses> Carved = {};

  bool contains(const void *Ptr) const {
    auto *Begin = static_cast<const char *>(Lease.get());
    auto *P = static_cast<const char *>(Ptr);
    return P >= Begin && P < Begin + Lease.size();
  }
};

AMDGPUKernargPoolTy::AMDGPUKernargPoolTy(const HSAApiTy &Api,
                                         hsa_amd_memory_pool_t Pool,
                                         hsa_agent_t Agent, int32_t DeviceId,
                                         PinnedBudgetTy &Budget)
    : Api(Api), Pool(Pool), Agent(Agent), DeviceId(DeviceId),
      Pinned(Budget, *this) {
  Budget.addReclaimable(*this);
}

AMDGPUKernargPoolTy::~AMDGPUKernargPoolTy() {
  // No reclaim runs from here on; the arenas are freed here, while the
  // allocator is whole.
  Pinned.getBudget().removeReclaimable(*this);
  Arenas.clear();
}

Expected<void *> AMDGPUKernargPoolTy::allocatePinned(size_t Size) {
  void *Arena = nullptr;
  if (auto Err = checkHSA(
          Api, Api.hsa_amd_memory_pool_allocate(Pool, Size, 0, &Arena),
          "hsa_amd_memory_pool_allocate",
          "{0}-byte kernel argument arena for device {1}", Size, DeviceId))
    return std::move(Err);
  // The kernarg pool is system memory: the GPU needs access granted.
  if (auto Err = checkHSA(
          Api, Api.hsa_amd_agents_allow_access(1, &Agent, nullptr, Arena),
          "hsa_amd_agents_allow_access",
          "kernel argument arena {0} ({1} bytes) for device {2}", Arena, Size,
          DeviceId)) {
    Api.hsa_amd_memory_pool_free(Arena);
    return std::move(Err);
  }
  return Arena;
}

Error AMDGPUKernargPoolTy::freePinned(void *Ptr, size_t Size) {
  return checkHSA(Api, Api.hsa_amd_memory_pool_free(Ptr),
                  "hsa_amd_memory_pool_free",
                  "kernel argument arena {0} ({1} bytes) of device {2}", Ptr,
                  Size, DeviceId);
}

size_t AMDGPUKernargPoolTy::reclaimIdle() {
  std::vector<std::unique_ptr<AMDGPUKernargArenaTy>> Idle;
  {
    std::lock_guard<std::mutex> Guard(Lock);
    for (size_t I = Arenas.size(); I-- > 1;) {
      if (Arenas[I]->SlotsOut)
        continue;
      AMDGPUKernargArenaTy *Arena = Arenas[I].get();
      for (unsigned Class = 0; Class < NumClasses; ++Class) {
        auto &Free = FreeSlots[Class];
        Free.erase(std::remove_if(Free.begin(), Free.end(),
                                  [&](const AMDGPUKernargSlotTy &Slot) {
                                    return Slot.Arena == Arena;
                                  }),
                   Free.end());
        Carved[Class] -= Arena->Carved[Class];
      }
      if (Bump && Arena->contains(Bump)) {
        Bump = nullptr;
        BumpLeft = 0;
      }
      Idle.push_back(std::move(Arenas[I]));
      Arenas.erase(Arenas.begin() + I);
    }
  }
  size_t Bytes = 0;
  for (auto &Arena : Idle) {
    Bytes += Arena->Lease.size();
    // The arena leaves the pool whether or not the free succeeds: nothing
    // could use it again, and nothing would retry the free.
    llvm::consumeError(Arena->Lease.release());
  }
  return Bytes;
}

Expected<PinnedLeaseTy> AMDGPUKernargPoolTy::leaseArena(size_t Bytes,
                                                        size_t Least) {
  auto WholePages = [](size_t Size) {
    return (Size + PinnedPoolTy::ShrinkGranule - 1) /
           PinnedPoolTy::ShrinkGranule * PinnedPoolTy::ShrinkGranule;
  };
  std::string Purpose =
      "a kernel argument arena of device " + std::to_string(DeviceId);
  PinnedRequestTy Request;
  Request.MinBytes = WholePages(Least);
  Request.Bytes = std::max(WholePages(Bytes), Request.MinBytes);
  // ShrinkThenWait: a launch needs only its own slot, so a smaller arena
  // serves it; busy file rings give memory back once idle. Kernels in
  // flight are not waited for: their slots come back only when their
  // stream's owner reaps them, which may be this caller's own job. With
  // nothing to be had, the launch fails with the budget's refusal.
  Request.OnRefusal = OnRefusalTy::ShrinkThenWait;
  Request.Purpose = Purpose;
  // Not Self: a refusal may take this pool's own idle arenas too, whose
  // free slots are of other sizes than the one asked for.
  Request.Self = nullptr;
  return Pinned.acquire(Request);
}

size_t AMDGPUKernargPoolTy::nextArenaSizeLocked() const {
  if (Arenas.empty())
    return FirstArenaSize;
  size_t Cap =
      std::min(MaxArenaSize, Pinned.getBudget().fitBuffer(MaxArenaSize));
  return std::max(FirstArenaSize,
                  std::min(Arenas.back()->Lease.size() * 2, Cap));
}

size_t AMDGPUKernargPoolTy::nextArenaSize() const {
  std::lock_guard<std::mutex> Guard(Lock);
  return nextArenaSizeLocked();
}

void AMDGPUKernargPoolTy::adopt(PinnedLeaseTy Lease) {
  // A too-small remainder of the previous arena is left unused.
  auto Arena = std::make_unique<AMDGPUKernargArenaTy>();
  Arena->Lease = std::move(Lease);
  Bump = static_cast<char *>(Arena->Lease.get());
  BumpLeft = Arena->Lease.size();
  Arenas.push_back(std::move(Arena));
}

size_t AMDGPUKernargPoolTy::arenas() const {
  std::lock_guard<std::mutex> Guard(Lock);
  return Arenas.size();
}

size_t AMDGPUKernargPoolTy::arenaBytes() const {
  std::lock_guard<std::mutex> Guard(Lock);
  size_t Bytes = 0;
  for (const auto &Arena : Arenas)
    Bytes += Arena->Lease.size();
  return Bytes;
}

Error AMDGPUKernargPoolTy::init() {
  std::lock_guard<std::mutex> Growing(GrowLock);
  auto Arena = leaseArena(FirstArenaSize, MinSlotSize);
  if (!Arena)
    return Arena.takeError();
  std::lock_guard<std::mutex> Guard(Lock);
  adopt(std::move(*Arena));
  return Error::success();
}

AMDGPUKernargSlotTy AMDGPUKernargPoolTy::takeSlot(unsigned Class) {
  const size_t SlotSize = MinSlotSize << Class;
  AMDGPUKernargSlotTy Slot;
  if (!FreeSlots[Class].empty()) {
    Slot = FreeSlots[Class].back();
    FreeSlots[Class].pop_back();
    ++Slot.Arena->SlotsOut;
    return Slot;
  }
  // Carve a new slot from the newest arena. Released slots go to their
  // class's free list.
  if (BumpLeft < SlotSize)
    return Slot;
  Slot.Ptr = Bump;
  Slot.Class = uint8_t(Class);
  Slot.Arena = Arenas.back().get();
  Bump += SlotSize;
  BumpLeft -= SlotSize;
  ++Slot.Arena->Carved[Class];
  ++Slot.Arena->SlotsOut;
  // Keep release() allocation-free: room for every slot of the class.
  FreeSlots[Class].reserve(++Carved[Class]);
  return Slot;
}

Expected<AMDGPUKernargSlotTy> AMDGPUKernargPoolTy::acquire(size_t Size) {
  unsigned Class = 0;
  while ((MinSlotSize << Class) < Size)
    if (++Class == NumClasses)
      return makeError(ErrorCode::OutOfResources,
                       "a {0}-byte kernel argument segment exceeds the "
                       "{1}-byte limit on device {2}",
                       Size, MinSlotSize << (NumClasses - 1), DeviceId);
  const size_t SlotSize = MinSlotSize << Class;
  AMDGPUKernargSlotTy Slot;
  {
    std::lock_guard<std::mutex> Guard(Lock);
    Slot = takeSlot(Class);
  }
  if (!Slot.Ptr) {
    std::lock_guard<std::mutex> Growing(GrowLock);
    // Another launch may have grown the pool, or given a slot back, while
    // this one waited to grow it.
    size_t Bytes;
    {
      std::lock_guard<std::mutex> Guard(Lock);
      Slot = takeSlot(Class);
      Bytes = nextArenaSizeLocked();
    }
    if (!Slot.Ptr) {
      auto Arena = leaseArena(Bytes, SlotSize);
      if (!Arena)
        return Arena.takeError();
      std::lock_guard<std::mutex> Guard(Lock);
      adopt(std::move(*Arena));
      Slot = takeSlot(Class);
    }
  }
  std::memset(Slot.Ptr, 0, SlotSize);
  return Slot;
}

void AMDGPUKernargPoolTy::release(AMDGPUKernargSlotTy Slot) {
  if (!Slot.Ptr)
    return;
  std::lock_guard<std::mutex> Guard(Lock);
  --Slot.Arena->SlotsOut;
  FreeSlots[Slot.Class].push_back(Slot);
}

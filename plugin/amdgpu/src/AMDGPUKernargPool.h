// SPDX-License-Identifier: Apache-2.0
//
// The memory kernel arguments ("kernargs") of one GPU live in: memory of a
// pool with the KERNARG_INIT flag that the GPU may read, taken in arenas
// and recycled as fixed-size slots, so that a launch never allocates from
// HSA.
//
// Arenas are leases of a pinned pool (PinnedPoolTy) on the plugin's pinned
// budget, which every device's arenas share with the staging buffers and
// file rings. So that arenas alone never exhaust a small budget with many
// GPUs:
//   * the first arena, taken at device initialisation, is one page (what
//     one launch of an ordinary kernel needs) and is kept until the pool
//     goes;
//   * each later arena is twice the newest arena held, up to
//     MaxArenaSize or the budget's share for one buffer (fitBuffer()), and
//     never less than the slot that asked for it;
//   * arenas beyond the first whose slots are all back are given back to
//     the budget when a reservation is refused (the pool is one of the
//     budget's reclaimable holders), not as soon as they are idle: pinning
//     is slow, and a program that launched that many kernels at once is
//     likely to do it again, so the memory stays until someone else needs
//     it, as the staging pools' and file rings' does.
#ifndef OFFLOADIO_AMDGPU_AMDGPUKERNARGPOOL_H
#define OFFLOADIO_AMDGPU_AMDGPUKERNARGPOOL_H

#include "HSAApi.h"

#include "offloadio/PinnedPool.h"

#include <array>
#include <memory>
#include <mutex>
#include <vector>

namespace offloadio {
namespace amdgpu {

struct AMDGPUKernargArenaTy;

/// One kernarg buffer from the pool.
struct AMDGPUKernargSlotTy {
  void *Ptr = nullptr;
  /// Size class (slot size = MinSlotSize << Class).
  uint8_t Class = 0;
  /// The arena the slot was carved from.
  AMDGPUKernargArenaTy *Arena = nullptr;
};

/// Recycling allocator of kernarg buffers for one GPU.
class AMDGPUKernargPoolTy final : private PinnedAllocatorTy,
                                  private PinnedReclaimableTy {
public:
  static constexpr size_t MinSlotSize = 256;
  static constexpr unsigned NumClasses = 9; // 256 B .. 64 KiB
  /// The first arena: one page.
  static constexpr size_t FirstArenaSize = PinnedPoolTy::ShrinkGranule;
  /// The largest arena that growth asks for (unless a slot needs more).
  static constexpr size_t MaxArenaSize = 1 << 20;

  /// Arenas come from \p Pool, reserved in \p Budget (which must outlive
  /// the pool).
  AMDGPUKernargPoolTy(const HSAApiTy &Api, hsa_amd_memory_pool_t Pool,
                      hsa_agent_t Agent, int32_t DeviceId,
                      PinnedBudgetTy &Budget);
  ~AMDGPUKernargPoolTy() override;
  AMDGPUKernargPoolTy(const AMDGPUKernargPoolTy &) = delete;
  AMDGPUKernargPoolTy &operator=(const AMDGPUKernargPoolTy &) = delete;

  /// Take the first arena (device initialisation).
  Error init();
  /// A zeroed buffer of at least \p Size bytes.
  Expected<AMDGPUKernargSlotTy> acquire(size_t Size);
  /// Give back a buffer from acquire(); null slots are ignored.
  void release(AMDGPUKernargSlotTy Slot);

  /// Number of arenas held now.
  size_t arenas() const;
  /// Bytes of the arenas held now.
  size_t arenaBytes() const;
  /// The size of the next arena that growth asks for.
  size_t nextArenaSize() const;

private:
  // PinnedAllocatorTy: kernarg memory that the GPU may read.
  Expected<void *> allocatePinned(size_t Size) override;
  Error freePinned(void *Ptr, size_t Size) override;
  // PinnedReclaimableTy: frees the arenas beyond the first that have no
  // slot out.
  size_t reclaimIdle() override;

  /// Lease an arena of \p Bytes, or less down to \p Least where the budget
  /// refuses. Called without Lock: a wait for the budget must not keep
  /// launches that complete from giving their slots back.
  Expected<PinnedLeaseTy> leaseArena(size_t Bytes, size_t Least);
  /// nextArenaSize(). Called with Lock held.
  size_t nextArenaSizeLocked() const;
  /// Make \p Arena the newest arena. Called with Lock held.
  void adopt(PinnedLeaseTy Arena);
  /// A slot of \p Class from the free list or the newest arena; an empty
  /// slot if neither has one. Called with Lock held.
  AMDGPUKernargSlotTy takeSlot(unsigned Class);

  const HSAApiTy &Api;
  hsa_amd_memory_pool_t Pool;
  hsa_agent_t Agent;
  int32_t DeviceId;
  /// Where arenas come from.
  PinnedPoolTy Pinned;
  /// One grower at a time; never held by release() or reclaimIdle().
  std::mutex GrowLock;
  /// Guards everything below; never held across a call to the budget.
  mutable std::mutex Lock;
  /// The first arena first; the newest, which slots are carved from, last.
  std::vector<std::unique_ptr<AMDGPUKernargArenaTy>> Arenas;
  /// Unused bytes at the end of the newest arena.
  char *Bump = nullptr;
  size_t BumpLeft = 0;
  std::array<std::vector<AMDGPUKernargSlotTy>, NumClasses> FreeSlots;
  /// Slots carved from the arenas held, per class: the room each free list
  /// keeps, so that release() never allocates.
  std::array<size_t, NumClasses> Carved = {};
};

} // namespace amdgpu
} // namespace offloadio

#endif // OFFLOADIO_AMDGPU_AMDGPUKERNARGPOOL_H

// SPDX-License-Identifier: Apache-2.0
//
// Kernels of a loaded image and the memory their arguments live in.
//
// Kernel arguments ("kernargs") must be in memory of a pool with the
// KERNARG_INIT flag that the GPU may read. The pool below takes that memory
// in large arenas (one at device initialisation, more only if ever more
// launches are in flight at once) and recycles fixed-size slots, so a
// launch never allocates from HSA. Arenas are leases of a pinned pool
// (PinnedPoolTy) on the plugin's pinned budget: no larger than the
// budget's fitBuffer() share, smaller where the budget refuses, down to
// what the launch needs (OnRefusalTy::ShrinkThenWait).
//
// Kernarg layout written by a launch, from the code object's metadata:
//   * explicit arguments, in order, at their metadata offsets: the value of
//     each OpenMP argument (a pointer or a by-value scalar in a pointer slot),
//     truncated to the metadata size;
//   * hidden arguments by .value_kind: hidden_block_count_{x,y,z} = teams,1,1
//     (u32); hidden_group_size_{x,y,z} = threads,1,1 (u16);
//     hidden_remainder_* = 0 (the grid is a whole number of groups);
//     hidden_grid_dims = 1; hidden_global_offset_* = 0;
//     hidden_dynamic_lds_size = the launch's dynamic group memory;
//     hidden_queue_ptr = the hsa_queue_t*; every other hidden kind
//     (hostcall/printf buffer, default queue, completion action, multigrid
//     sync, heap, private/shared base, none) = 0.
// clang-16 OpenMP images are code object v4, whose hidden block is six
// 8-byte slots after the explicit arguments (global offsets x/y/z, hostcall
// buffer, default queue, unused, multigrid sync); v5 images use the
// block-count layout. Without metadata the explicit arguments are packed as
// 8-byte values from offset 0 and the rest of the segment is zero.
#ifndef OFFLOADIO_AMDGPU_AMDGPUKERNEL_H
#define OFFLOADIO_AMDGPU_AMDGPUKERNEL_H

#include "HSAApi.h"

#include "offloadio/Kernel.h"
#include "offloadio/PinnedPool.h"

#include <array>
#include <mutex>
#include <vector>

namespace offloadio {
namespace amdgpu {

struct AMDGPUKernelMetadataTy;

/// One kernarg buffer from the pool.
struct AMDGPUKernargSlotTy {
  void *Ptr = nullptr;
  /// Size class (slot size = MinSlotSize << Class).
  uint8_t Class = 0;
};

/// Recycling allocator of kernarg buffers for one GPU.
class AMDGPUKernargPoolTy final : private PinnedAllocatorTy {
public:
  static constexpr size_t MinSlotSize = 256;
  static constexpr unsigned NumClasses = 9; // 256 B .. 64 KiB
  /// The arena size asked for, where the budget's share allows.
  static constexpr size_t ArenaSize = 1 << 20;

  /// Arenas come from \p Pool, reserved in \p Budget (which must outlive
  /// the pool).
  AMDGPUKernargPoolTy(const HSAApiTy &Api, hsa_amd_memory_pool_t Pool,
                      hsa_agent_t Agent, int32_t DeviceId,
                      PinnedBudgetTy &Budget)
      : Api(Api), Pool(Pool), Agent(Agent), DeviceId(DeviceId),
        Pinned(Budget, *this) {}
  ~AMDGPUKernargPoolTy() override;
  AMDGPUKernargPoolTy(const AMDGPUKernargPoolTy &) = delete;
  AMDGPUKernargPoolTy &operator=(const AMDGPUKernargPoolTy &) = delete;

  /// Take the first arena (device initialisation).
  Error init();
  /// A zeroed buffer of at least \p Size bytes.
  Expected<AMDGPUKernargSlotTy> acquire(size_t Size);
  /// Give back a buffer from acquire(); null slots are ignored.
  void release(AMDGPUKernargSlotTy Slot);

  /// Number of arenas taken so far.
  size_t arenas() const {
    std::lock_guard<std::mutex> Guard(Lock);
    return Arenas.size();
  }
  /// Bytes of all arenas taken so far.
  size_t arenaBytes() const;

private:
  // PinnedAllocatorTy: kernarg memory that the GPU may read.
  Expected<void *> allocatePinned(size_t Size) override;
  Error freePinned(void *Ptr, size_t Size) override;

  /// Lease an arena that holds at least \p Least bytes. Called without
  /// Lock: a wait for the budget must not keep launches that complete from
  /// giving their slots back.
  Expected<PinnedLeaseTy> leaseArena(size_t Least);
  /// Make \p Arena the newest arena. Called with Lock held.
  void adopt(PinnedLeaseTy Arena);
  /// A slot of \p Class from the free list or the newest arena; null if
  /// neither has one. Called with Lock held.
  void *takeSlot(unsigned Class);

  const HSAApiTy &Api;
  hsa_amd_memory_pool_t Pool;
  hsa_agent_t Agent;
  int32_t DeviceId;
  /// Where arenas come from.
  PinnedPoolTy Pinned;
  /// One grower at a time; never held by release().
  std::mutex GrowLock;
  mutable std::mutex Lock;
  std::vector<PinnedLeaseTy> Arenas;
  /// Unused bytes at the end of the newest arena.
  char *Bump = nullptr;
  size_t BumpLeft = 0;
  std::array<std::vector<void *>, NumClasses> FreeSlots;
  /// Slots carved so far, per class.
  std::array<size_t, NumClasses> Carved = {};
};

/// A kernel of an AMDGPU image.
class AMDGPUKernelTy final : public GenericKernelTy {
public:
  AMDGPUKernelTy(DeviceImageTy &Image, std::string Name, ExecModeTy ExecMode,
                 uint64_t KernelObject, uint32_t KernargSize,
                 uint32_t GroupSize, uint32_t PrivateSize, bool DynamicStack,
                 const AMDGPUKernelMetadataTy *Metadata)
      : GenericKernelTy(Image, std::move(Name), ExecMode),
        KernelObject(KernelObject),
        KernargSize(KernargSize), GroupSize(GroupSize),
        PrivateSize(PrivateSize), DynamicStack(DynamicStack),
        Metadata(Metadata) {}

protected:
  Error launchImpl(GenericDeviceTy &Device, void **Args, uint32_t NumArgs,
                   const LaunchDimsTy &Dims, const KernelArgsTy &KernelArgs,
                   StreamTy &Stream) override;
  uint32_t getMaxThreads(const GenericDeviceTy &Device) const override;

private:
  /// Write the explicit and hidden arguments into \p Buffer.
  Error fillKernargs(char *Buffer, void **Args, uint32_t NumArgs,
                     const LaunchDimsTy &Dims, uint32_t DynamicGroupSize,
                     hsa_queue_t *Queue, int32_t DeviceId) const;

  uint64_t KernelObject;
  uint32_t KernargSize;
  uint32_t GroupSize;
  uint32_t PrivateSize;
  bool DynamicStack;
  /// Owned by the image; null when the image has no metadata.
  const AMDGPUKernelMetadataTy *Metadata;
};

} // namespace amdgpu
} // namespace offloadio

#endif // OFFLOADIO_AMDGPU_AMDGPUKERNEL_H

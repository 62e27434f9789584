// SPDX-License-Identifier: Apache-2.0
#include "AMDGPUKernel.h"
#include "AMDGPUDevice.h"
#include "AMDGPUImage.h"
#include "AMDGPUStream.h"

#include <algorithm>
#include <cstring>
#include <string>

using namespace offloadio;
using namespace offloadio::amdgpu;

//===----------------------------------------------------------------------===//
// Kernarg pool
//===----------------------------------------------------------------------===//

AMDGPUKernargPoolTy::~AMDGPUKernargPoolTy() {
  // Freed here, while the allocator is whole.
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

Expected<PinnedLeaseTy> AMDGPUKernargPoolTy::leaseArena(size_t Least) {
  PinnedBudgetTy &Budget = Pinned.getBudget();
  // Whole pages, at most the budget's share for one buffer unless a slot
  // needs more.
  Least = (Least + PinnedPoolTy::ShrinkGranule - 1) /
          PinnedPoolTy::ShrinkGranule * PinnedPoolTy::ShrinkGranule;
  std::string Purpose =
      "a kernel argument arena of device " + std::to_string(DeviceId);
  PinnedRequestTy Request;
  Request.Bytes = std::max(Budget.fitBuffer(ArenaSize), Least);
  // ShrinkThenWait: a launch needs only its own slot, so a smaller arena
  // serves it; busy file rings give memory back once idle. Kernels in
  // flight are not waited for: their slots come back only when their
  // stream's owner reaps them, which may be this caller's own job. With
  // nothing to be had, the launch fails with the budget's refusal.
  Request.OnRefusal = OnRefusalTy::ShrinkThenWait;
  Request.Purpose = Purpose;
  Request.MinBytes = Least;
  return Pinned.acquire(Request);
}

void AMDGPUKernargPoolTy::adopt(PinnedLeaseTy Arena) {
  // A too-small remainder of the previous arena is left unused.
  Bump = static_cast<char *>(Arena.get());
  BumpLeft = Arena.size();
  Arenas.push_back(std::move(Arena));
}

size_t AMDGPUKernargPoolTy::arenaBytes() const {
  std::lock_guard<std::mutex> Guard(Lock);
  size_t Bytes = 0;
  for (const PinnedLeaseTy &Arena : Arenas)
    Bytes += Arena.size();
  return Bytes;
}

Error AMDGPUKernargPoolTy::init() {
  std::lock_guard<std::mutex> Growing(GrowLock);
  auto Arena = leaseArena(MinSlotSize);
  if (!Arena)
    return Arena.takeError();
  std::lock_guard<std::mutex> Guard(Lock);
  adopt(std::move(*Arena));
  return Error::success();
}

void *AMDGPUKernargPoolTy::takeSlot(unsigned Class) {
  const size_t SlotSize = MinSlotSize << Class;
  if (!FreeSlots[Class].empty()) {
    void *Ptr = FreeSlots[Class].back();
    FreeSlots[Class].pop_back();
    return Ptr;
  }
  // Carve a new slot from the newest arena. Released slots go to their
  // class's free list.
  if (BumpLeft < SlotSize)
    return nullptr;
  void *Ptr = Bump;
  Bump += SlotSize;
  BumpLeft -= SlotSize;
  // Keep release() allocation-free: room for every slot of the class.
  FreeSlots[Class].reserve(++Carved[Class]);
  return Ptr;
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
  Slot.Class = uint8_t(Class);
  {
    std::lock_guard<std::mutex> Guard(Lock);
    Slot.Ptr = takeSlot(Class);
  }
  if (!Slot.Ptr) {
    std::lock_guard<std::mutex> Growing(GrowLock);
    // Another launch may have grown the pool, or given a slot back, while
    // this one waited to grow it.
    {
      std::lock_guard<std::mutex> Guard(Lock);
      Slot.Ptr = takeSlot(Class);
    }
    if (!Slot.Ptr) {
      auto Arena = leaseArena(SlotSize);
      if (!Arena)
        return Arena.takeError();
      std::lock_guard<std::mutex> Guard(Lock);
      adopt(std::move(*Arena));
      Slot.Ptr = takeSlot(Class);
    }
  }
  std::memset(Slot.Ptr, 0, SlotSize);
  return Slot;
}

void AMDGPUKernargPoolTy::release(AMDGPUKernargSlotTy Slot) {
  if (!Slot.Ptr)
    return;
  std::lock_guard<std::mutex> Guard(Lock);
  FreeSlots[Slot.Class].push_back(Slot.Ptr);
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

namespace {

/// Store the low \p Size bytes of \p Value at \p Dst (little endian).
void storeValue(char *Dst, uint32_t Size, uint64_t Value) {
  std::memcpy(Dst, &Value, std::min<uint32_t>(Size, sizeof(Value)));
}

} // namespace

uint32_t AMDGPUKernelTy::getMaxThreads(const GenericDeviceTy &Device) const {
  if (Metadata && Metadata->MaxFlatWorkgroupSize)
    return Metadata->MaxFlatWorkgroupSize;
  return GenericKernelTy::getMaxThreads(Device);
}

Error AMDGPUKernelTy::fillKernargs(char *Buffer, void **Args, uint32_t NumArgs,
                                   const LaunchDimsTy &Dims,
                                   uint32_t DynamicGroupSize,
                                   hsa_queue_t *Queue, int32_t DeviceId) const {
  if (!Metadata) {
    if (uint64_t(NumArgs) * sizeof(void *) > KernargSize)
      return makeError(ErrorCode::InvalidArgument,
                       "kernel {0} on device {1}: {2} arguments do not fit "
                       "its {3}-byte kernarg segment",
                       getName(), DeviceId, NumArgs, KernargSize);
    std::memcpy(Buffer, Args, NumArgs * sizeof(void *));
    return Error::success();
  }
  if (NumArgs != Metadata->NumExplicitArgs)
    return makeError(ErrorCode::InvalidArgument,
                     "kernel {0} on device {1} takes {2} arguments, launched "
                     "with {3}",
                     getName(), DeviceId, Metadata->NumExplicitArgs, NumArgs);
  uint32_t Explicit = 0;
  for (const AMDGPUKernelArgTy &Arg : Metadata->Args) {
    if (Arg.Offset + uint64_t(Arg.Size) > KernargSize)
      return makeError(ErrorCode::InvalidImage,
                       "kernel {0} on device {1}: argument at offset {2} "
                       "exceeds the {3}-byte kernarg segment",
                       getName(), DeviceId, Arg.Offset, KernargSize);
    char *Dst = Buffer + Arg.Offset;
    switch (Arg.Kind) {
    case AMDGPUArgKindTy::Explicit:
      storeValue(Dst, Arg.Size, reinterpret_cast<uintptr_t>(Args[Explicit++]));
      break;
    case AMDGPUArgKindTy::HiddenBlockCountX:
      storeValue(Dst, Arg.Size, Dims.NumTeams);
      break;
    case AMDGPUArgKindTy::HiddenBlockCountY:
    case AMDGPUArgKindTy::HiddenBlockCountZ:
      storeValue(Dst, Arg.Size, 1);
      break;
    case AMDGPUArgKindTy::HiddenGroupSizeX:
      storeValue(Dst, Arg.Size, Dims.NumThreads);
      break;
    case AMDGPUArgKindTy::HiddenGroupSizeY:
    case AMDGPUArgKindTy::HiddenGroupSizeZ:
      storeValue(Dst, Arg.Size, 1);
      break;
    case AMDGPUArgKindTy::HiddenGridDims:
      storeValue(Dst, Arg.Size, 1);
      break;
    case AMDGPUArgKindTy::HiddenDynamicLdsSize:
      storeValue(Dst, Arg.Size, DynamicGroupSize);
      break;
    case AMDGPUArgKindTy::HiddenQueuePtr:
      storeValue(Dst, Arg.Size, reinterpret_cast<uintptr_t>(Queue));
      break;
    case AMDGPUArgKindTy::HiddenGlobalOffsetX:
    case AMDGPUArgKindTy::HiddenGlobalOffsetY:
    case AMDGPUArgKindTy::HiddenGlobalOffsetZ:
    case AMDGPUArgKindTy::HiddenRemainderX:
    case AMDGPUArgKindTy::HiddenRemainderY:
    case AMDGPUArgKindTy::HiddenRemainderZ:
    case AMDGPUArgKindTy::HiddenOther:
      // The slot is already zero.
      break;
    }
  }
  return Error::success();
}

Error AMDGPUKernelTy::launchImpl(GenericDeviceTy &GenericDevice, void **Args,
                                 uint32_t NumArgs, const LaunchDimsTy &Dims,
                                 const KernelArgsTy &KernelArgs,
                                 StreamTy &GenericStream) {
  auto &Device = static_cast<AMDGPUDeviceTy &>(GenericDevice);
  auto &Stream = static_cast<AMDGPUStreamTy &>(GenericStream);
  const int32_t DeviceId = Device.getDeviceId();

  uint64_t GridSize = uint64_t(Dims.NumTeams) * Dims.NumThreads;
  if (GridSize > UINT32_MAX)
    return makeError(ErrorCode::InvalidArgument,
                     "kernel {0} on device {1}: {2} teams of {3} threads "
                     "exceed the 2^32-1 work-item grid",
                     getName(), DeviceId, Dims.NumTeams, Dims.NumThreads);
  if (Dims.NumThreads > UINT16_MAX)
    return makeError(ErrorCode::InvalidArgument,
                     "kernel {0} on device {1}: {2} threads per team exceed "
                     "the work-group limit",
                     getName(), DeviceId, Dims.NumThreads);
  uint64_t Group = uint64_t(GroupSize) + KernelArgs.DynCGroupMem;
  if (Group > Device.getMaxGroupSegmentSize())
    return makeError(ErrorCode::InvalidArgument,
                     "kernel {0} on device {1} needs {2} bytes of group "
                     "memory ({3} static + {4} dynamic); the device has {5}",
                     getName(), DeviceId, Group, GroupSize,
                     KernelArgs.DynCGroupMem, Device.getMaxGroupSegmentSize());

  auto Slot =
      Device.getKernargPool().acquire(std::max<uint32_t>(KernargSize, 1));
  if (!Slot)
    return Slot.takeError();
  if (auto Err = fillKernargs(static_cast<char *>(Slot->Ptr), Args, NumArgs,
                              Dims, KernelArgs.DynCGroupMem,
                              Stream.getQueue().get(), DeviceId)) {
    Device.getKernargPool().release(*Slot);
    return Err;
  }

  hsa_kernel_dispatch_packet_t Packet;
  std::memset(&Packet, 0, sizeof(Packet));
  Packet.setup = 1 << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS;
  Packet.workgroup_size_x = uint16_t(Dims.NumThreads);
  Packet.workgroup_size_y = 1;
  Packet.workgroup_size_z = 1;
  Packet.grid_size_x = uint32_t(GridSize);
  Packet.grid_size_y = 1;
  Packet.grid_size_z = 1;
  Packet.private_segment_size =
      PrivateSize + (DynamicStack ? Device.getDynamicStackSize() : 0);
  Packet.group_segment_size = uint32_t(Group);
  Packet.kernel_object = KernelObject;
  Packet.kernarg_address = Slot->Ptr;
  return Stream.launch(Packet, *Slot, getName());
}

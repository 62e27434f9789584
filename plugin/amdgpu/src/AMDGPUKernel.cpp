// SPDX-License-Identifier: Apache-2.0
#include "AMDGPUKernel.h"
#include "AMDGPUDevice.h"
#include "AMDGPUImage.h"
#include "AMDGPUKernargPool.h"
#include "AMDGPUStream.h"

#include <algorithm>
#include <cstring>
#include <string>

using namespace offloadio;
using namespace offloadio::amdgpu;

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
  uint64_t Private = Device.getServices().RuntimeABI.privateSegmentSize(
      PrivateSize, DynamicStack, Device.getStackSizeSetting());
  if (Private > UINT32_MAX)
    return makeError(ErrorCode::InvalidArgument,
                     "kernel {0} on device {1}: {2} private bytes per "
                     "work-item exceed the dispatch packet's field",
                     getName(), DeviceId, Private);
  Packet.private_segment_size = uint32_t(Private);
  Packet.group_segment_size = uint32_t(Group);
  Packet.kernel_object = KernelObject;
  Packet.kernarg_address = Slot->Ptr;
  return Stream.launch(Packet, *Slot, getName());
}

// SPDX-License-Identifier: Apache-2.0
//
// Kernels of a loaded image. Their arguments ("kernargs") live in slots of
// the device's AMDGPUKernargPoolTy (AMDGPUKernargPool.h).
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

namespace offloadio {
namespace amdgpu {

struct AMDGPUKernelMetadataTy;

/// A kernel of an AMDGPU image.
class AMDGPUKernelTy final : public GenericKernelTy {
public:
  AMDGPUKernelTy(DeviceImageTy &Image, std::string Name,
                 const KernelConfigTy &Config,
                 uint64_t KernelObject, uint32_t KernargSize,
                 uint32_t GroupSize, uint32_t PrivateSize, bool DynamicStack,
                 const AMDGPUKernelMetadataTy *Metadata)
      : GenericKernelTy(Image, std::move(Name), Config),
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

// SPDX-License-Identifier: Apache-2.0
//
// Kernels: the generic part computes the launch geometry and the argument
// pointers; the backend enqueues the launch on a stream.
#ifndef OFFLOADIO_KERNEL_H
#define OFFLOADIO_KERNEL_H

#include "offloadio/ABI.h"
#include "offloadio/Error.h"

#include <cstdint>
#include <string>

namespace offloadio {

class GenericDeviceTy;
class StreamTy;
class DeviceImageTy;

/// Grid of one launch.
struct LaunchDimsTy {
  uint32_t NumTeams = 1;   ///< Blocks / work-groups.
  uint32_t NumThreads = 1; ///< Threads per team.
};

/// A kernel of a loaded image. Its address is the handle libomptarget
/// passes back to launch_kernel.
class GenericKernelTy {
public:
  GenericKernelTy(DeviceImageTy &Image, std::string Name)
      : Image(Image), Name(std::move(Name)) {}
  virtual ~GenericKernelTy();

  /// The symbol name.
  const std::string &getName() const { return Name; }
  /// The image that holds the kernel.
  DeviceImageTy &getImage() const { return Image; }

  /// Compute the pointers, pick the geometry and enqueue the launch.
  Error launch(GenericDeviceTy &Device, void **TgtArgs, ptrdiff_t *TgtOffsets,
               const KernelArgsTy &KernelArgs, StreamTy &Stream);

  /// Pick teams and threads from the clauses, the env and the device limits.
  LaunchDimsTy computeLaunchDims(const GenericDeviceTy &Device,
                                 const KernelArgsTy &KernelArgs) const;

protected:
  /// Enqueue the launch. \p Args holds \p NumArgs argument values (already
  /// offset); the backend copies them before returning.
  virtual Error launchImpl(GenericDeviceTy &Device, void **Args,
                           uint32_t NumArgs, const LaunchDimsTy &Dims,
                           const KernelArgsTy &KernelArgs,
                           StreamTy &Stream) = 0;

  /// Largest number of threads per team this kernel supports.
  virtual uint32_t getMaxThreads(const GenericDeviceTy &Device) const;

private:
  DeviceImageTy &Image;
  std::string Name;
};

} // namespace offloadio

#endif // OFFLOADIO_KERNEL_H

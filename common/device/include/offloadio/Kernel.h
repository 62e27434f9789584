// SPDX-License-Identifier: Apache-2.0
//
// Kernels: the generic part computes the argument pointers and has the
// launch geometry computed (LaunchGeometry.h); the backend enqueues the
// launch on a stream.
#ifndef OFFLOADIO_KERNEL_H
#define OFFLOADIO_KERNEL_H

#include "offloadio/ABI.h"
#include "offloadio/Error.h"
#include "offloadio/DeviceRuntimeABI.h"
#include "offloadio/LaunchGeometry.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace offloadio {

class GenericDeviceTy;
class StreamTy;
class DeviceImageTy;
/// Name of \p Mode as the stock plugins print it: "Generic", "SPMD",
/// "Generic-SPMD".
const char *execModeName(ExecModeTy Mode);

/// A kernel of a loaded image. Its address is the handle libomptarget
/// passes back to launch_kernel.
class GenericKernelTy {
public:
  /// A kernel configured as \p Config says (its image's record, read by
  /// DeviceRuntimeABITy::readKernelConfig); \p WritesDeviceOutput when it
  /// may call the device printf, whose output the backend flushes once the
  /// launch is complete.
  GenericKernelTy(DeviceImageTy &Image, std::string Name,
                  KernelConfigTy Config = {}, bool WritesDeviceOutput = false)
      : Image(Image), Name(std::move(Name)), Config(Config),
        WritesDeviceOutput(WritesDeviceOutput),
        IsGlobalCtorDtor(isGlobalCtorDtorKernel(this->Name)) {}
  virtual ~GenericKernelTy();

  /// The symbol name.
  const std::string &getName() const { return Name; }
  /// The image that holds the kernel.
  DeviceImageTy &getImage() const { return Image; }
  /// The execution mode.
  ExecModeTy getExecMode() const { return Config.ExecMode; }
  /// What the image records about the kernel's launches.
  const KernelConfigTy &getConfig() const { return Config; }
  /// Whether the kernel may write device printf output.
  bool writesDeviceOutput() const { return WritesDeviceOutput; }

  /// Compute the pointers, pick the geometry and enqueue the launch.
  Error launch(GenericDeviceTy &Device, void **TgtArgs, ptrdiff_t *TgtOffsets,
               const KernelArgsTy &KernelArgs, StreamTy &Stream);

  /// Enqueue the kernel on one thread of one team, without arguments or a
  /// launch environment: the kernels that run an image's global
  /// constructors and destructors.
  Error launchAlone(GenericDeviceTy &Device, StreamTy &Stream);

  /// Pick teams and threads from the clauses, the trip count, the execution
  /// mode, and the kernel's and the device's limits (computeLaunchDims).
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
  KernelConfigTy Config;
  bool WritesDeviceOutput;
  /// A global constructor or destructor kernel (no launch environment),
  /// decided once from the name rather than at every launch.
  bool IsGlobalCtorDtor;
};

} // namespace offloadio

#endif // OFFLOADIO_KERNEL_H

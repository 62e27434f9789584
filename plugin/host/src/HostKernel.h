// SPDX-License-Identifier: Apache-2.0
//
// Host kernels: the outlined target region is an ordinary function of the
// image, called through libffi with one pointer-sized argument per value.
#ifndef OFFLOADIO_HOST_HOSTKERNEL_H
#define OFFLOADIO_HOST_HOSTKERNEL_H

#include "HostStream.h"

#include "offloadio/Kernel.h"

#include <ffi.h>
#include <mutex>
#include <vector>

namespace offloadio {
namespace host {

/// A kernel of a host image.
class HostKernelTy final : public GenericKernelTy, public HostLaunchTy {
public:
  HostKernelTy(DeviceImageTy &Image, std::string Name, void *Fn,
               const KernelConfigTy &Config)
      : GenericKernelTy(Image, std::move(Name), Config), Fn(Fn) {}

  /// Worker-side call of the function.
  Error run(void *const *Args, uint32_t NumArgs) const override;

protected:
  Error launchImpl(GenericDeviceTy &Device, void **Args, uint32_t NumArgs,
                   const LaunchDimsTy &Dims, const KernelArgsTy &KernelArgs,
                   StreamTy &Stream) override;

private:
  /// Prepare the call interface for \p NumArgs arguments (once per kernel).
  Error prepare(uint32_t NumArgs);

  void *Fn;
  std::mutex PrepareLock;
  bool Prepared = false;
  uint32_t PreparedArgs = 0;
  std::vector<ffi_type *> ArgTypes;
  ffi_cif Cif;
};

} // namespace host
} // namespace offloadio

#endif // OFFLOADIO_HOST_HOSTKERNEL_H

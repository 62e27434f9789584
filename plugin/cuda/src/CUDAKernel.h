// SPDX-License-Identifier: Apache-2.0
//
// Kernels of a CUDA image: a CUfunction, the execution mode the compiler
// recorded for it, and its launch through cuLaunchKernel.
#ifndef OFFLOADIO_CUDA_CUDAKERNEL_H
#define OFFLOADIO_CUDA_CUDAKERNEL_H

#include "CUDAApi.h"

#include "offloadio/Kernel.h"

namespace offloadio {
namespace cuda {

class CUDADeviceTy;
class CUDAImageTy;

/// One kernel of a loaded module.
class CUDAKernelTy final : public GenericKernelTy {
public:
  /// Look up kernel \p Name, configured as \p Config says, in \p Image
  /// and read its thread limit. Kernels of images that call the printf
  /// runtime write device output.
  static Expected<std::unique_ptr<CUDAKernelTy>>
  create(const CUDAApiTy &Api, CUDAImageTy &Image, llvm::StringRef Name,
         const KernelConfigTy &Config, int32_t DeviceId);

protected:
  Error launchImpl(GenericDeviceTy &Device, void **Args, uint32_t NumArgs,
                   const LaunchDimsTy &Dims, const KernelArgsTy &KernelArgs,
                   StreamTy &Stream) override;
  uint32_t getMaxThreads(const GenericDeviceTy &Device) const override;

private:
  CUDAKernelTy(CUDAImageTy &Image, std::string Name, CUfunction Function,
               const KernelConfigTy &Config, uint32_t MaxThreads);

  CUfunction Function;
  /// Largest block the compiled code allows (registers per thread).
  uint32_t MaxThreads;
};

} // namespace cuda
} // namespace offloadio

#endif // OFFLOADIO_CUDA_CUDAKERNEL_H

// SPDX-License-Identifier: Apache-2.0
//
// The CUDA device as the JIT's target: bitcode images are compiled to PTX,
// which the driver's own PTX compiler (cuLink*) turns into a cubin for the
// device. The cubin is an ELF like a program's, so that its kernels'
// environments, globals and constructors are read as every image's; and
// no CUDA toolkit (ptxas) is needed where the program runs.
#ifndef OFFLOADIO_CUDA_CUDAJIT_H
#define OFFLOADIO_CUDA_CUDAJIT_H

#include "CUDAApi.h"

#include "offloadio/JITTarget.h"

namespace offloadio {
namespace cuda {

class CUDADeviceTy;

/// Assemble the NUL-terminated PTX \p PTX for the device of the current
/// context with the driver (cuLinkCreate, cuLinkAddData, cuLinkComplete);
/// the cubin, copied. \p DeviceId and \p Arch name the device in errors.
Expected<std::unique_ptr<llvm::MemoryBuffer>> assemblePTX(const CUDAApiTy &Api,
                                                          llvm::StringRef PTX,
                                                          int32_t DeviceId,
                                                          llvm::StringRef Arch);

/// One CUDA device as the JIT compiles for it.
class CUDAJITTargetTy final : public JITTargetTy {
public:
  CUDAJITTargetTy(const CUDAApiTy &Api, const CUDADeviceTy &Device)
      : Api(Api), Device(Device) {}

  /// "sm_<major><minor>" of the device.
  std::string getCPU() const override;
  JITOutputKindTy getOutputKind() const override {
    return JITOutputKindTy::Assembly;
  }
  /// The driver assembles the PTX in the device's context.
  Expected<std::unique_ptr<llvm::MemoryBuffer>>
  finishImage(std::unique_ptr<llvm::MemoryBuffer> Output) override;

private:
  const CUDAApiTy &Api;
  const CUDADeviceTy &Device;
};

} // namespace cuda
} // namespace offloadio

#endif // OFFLOADIO_CUDA_CUDAJIT_H

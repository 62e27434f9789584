// SPDX-License-Identifier: Apache-2.0
//
// The AMD GPU as the JIT's target: bitcode images are compiled to an amdgcn
// object for the GPU's processor and linked into a code object with lld,
// as the stock plugin does (HSA loads only linked code objects).
#ifndef OFFLOADIO_AMDGPU_AMDGPUJIT_H
#define OFFLOADIO_AMDGPU_AMDGPUJIT_H

#include "offloadio/Info.h"
#include "offloadio/JITTarget.h"

#include <string>

namespace offloadio {
namespace amdgpu {

/// One GPU as the JIT compiles for it.
class AMDGPUJITTargetTy final : public JITTargetTy {
public:
  /// The GPU \p DeviceId whose processor is \p Processor ("gfx90a");
  /// \p Info prints the linker used.
  AMDGPUJITTargetTy(std::string Processor, InfoTy &Info, int32_t DeviceId)
      : Processor(std::move(Processor)), Info(Info), DeviceId(DeviceId) {}

  std::string getCPU() const override { return Processor; }
  JITOutputKindTy getOutputKind() const override {
    return JITOutputKindTy::Object;
  }
  /// Link the object into a shared code object with lld (PATH, then the
  /// bin directory of the LLVM built with).
  Expected<std::unique_ptr<llvm::MemoryBuffer>>
  finishImage(std::unique_ptr<llvm::MemoryBuffer> Output) override;

private:
  std::string Processor;
  InfoTy &Info;
  int32_t DeviceId;
};

} // namespace amdgpu
} // namespace offloadio

#endif // OFFLOADIO_AMDGPU_AMDGPUJIT_H

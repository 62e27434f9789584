// SPDX-License-Identifier: Apache-2.0
//
// JITTargetTy: what a backend tells the JIT about one device and does with
// the output of code generation (the backend hook of JITCompilerTy).
#ifndef OFFLOADIO_JITTARGET_H
#define OFFLOADIO_JITTARGET_H

#include "offloadio/Error.h"

#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <string>

namespace offloadio {

/// What code generation emits for a target.
enum class JITOutputKindTy {
  Assembly, ///< Text (PTX for NVPTX).
  Object,   ///< A relocatable ELF object (amdgcn).
};

/// One device's target, as the JIT compiles for it.
class JITTargetTy {
public:
  virtual ~JITTargetTy() = default;

  /// The processor compiled for ("sm_90", "gfx90a"); compiled images are
  /// cached per processor.
  virtual std::string getCPU() const = 0;
  /// What code generation emits.
  virtual JITOutputKindTy getOutputKind() const = 0;
  /// Turn code generation's output \p Output into an image the device
  /// loads (PTX assembled, an object linked).
  virtual Expected<std::unique_ptr<llvm::MemoryBuffer>>
  finishImage(std::unique_ptr<llvm::MemoryBuffer> Output) = 0;
};

} // namespace offloadio

#endif // OFFLOADIO_JITTARGET_H

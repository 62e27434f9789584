// SPDX-License-Identifier: Apache-2.0
//
// JITCompilerTy: compiles bitcode images (-fopenmp-target-jit) for a
// device at load, as the stock plugins of LLVM 16, 17 and 18 do: parse the
// module (or the replacement module), print it before and after
// optimisation when asked, optimise it with the new pass manager's default
// pipeline at LIBOMPTARGET_JIT_OPT_LEVEL, generate code for the device's
// processor, and let the backend finish the image (JITTargetTy). Compiled
// images are cached by content and processor (JITImageCacheTy).
#ifndef OFFLOADIO_JITCOMPILER_H
#define OFFLOADIO_JITCOMPILER_H

#include "offloadio/Error.h"
#include "offloadio/JITImageCache.h"
#include "offloadio/JITTarget.h"
#include "offloadio/Settings.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <mutex>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace offloadio {

/// The plugin's JIT of bitcode images.
class JITCompilerTy {
public:
  explicit JITCompilerTy(JITSettingsTy Settings)
      : Settings(std::move(Settings)) {}

  /// The loadable image of the bitcode image \p Bitcode for \p Target:
  /// compiled on first use for its processor, then from the cache. The
  /// bytes live as long as the compiler.
  Expected<llvm::StringRef> getImage(llvm::StringRef Bitcode,
                                     JITTargetTy &Target);

  /// Compile \p Bitcode for \p Target, bypassing the cache.
  Expected<std::unique_ptr<llvm::MemoryBuffer>> compile(llvm::StringRef Bitcode,
                                                        JITTargetTy &Target);

  /// Number of images compiled and cached.
  size_t numCompiledImages() const { return Cache.size(); }
  /// The settings in force.
  const JITSettingsTy &getSettings() const { return Settings; }

private:
  /// The output of code generation for \p Bitcode (or the replacement
  /// object), before the backend finishes it.
  Expected<std::unique_ptr<llvm::MemoryBuffer>>
  generateCode(llvm::StringRef Bitcode, JITTargetTy &Target);
  /// Optimise \p M at the level of the settings.
  void optimize(llvm::Module &M, llvm::TargetMachine &TM);
  /// Print \p M to \p Path, the file that setting \p Name names.
  Error printModule(llvm::Module &M, const std::string &Path, const char *Name);

  JITSettingsTy Settings;
  /// Registers LLVM's targets once per plugin.
  std::once_flag TargetsRegistered;
  JITImageCacheTy Cache;
};

} // namespace offloadio

#endif // OFFLOADIO_JITCOMPILER_H

// SPDX-License-Identifier: Apache-2.0
//
// Device images that carry LLVM bitcode instead of native code (programs
// built with -fopenmp-target-jit): how to tell them, and the target their
// module was made for, read without materialising any function.
#ifndef OFFLOADIO_BITCODEIMAGE_H
#define OFFLOADIO_BITCODEIMAGE_H

#include "offloadio/Error.h"

#include "llvm/ADT/StringRef.h"

#include <string>

namespace offloadio {

/// The target a bitcode module was made for.
struct BitcodeTargetTy {
  /// The module's triple ("nvptx64-nvidia-cuda", "amdgcn-amd-amdhsa").
  std::string Triple;
  /// The "target-cpu" of its first function that has one ("sm_90",
  /// "gfx90a"); empty when none has.
  std::string CPU;
};

/// Whether \p Bytes start as LLVM bitcode (raw or in its wrapper).
bool isBitcodeImage(llvm::StringRef Bytes);

/// The triple and target CPU of the bitcode module \p Bytes; an error when
/// the bitcode does not parse.
Expected<BitcodeTargetTy> readBitcodeTarget(llvm::StringRef Bytes);

/// Whether \p ModuleTriple names the same architecture as \p PluginTriple
/// (vendor, OS and environment may differ, as in the stock plugins' check).
bool isSameArchitecture(llvm::StringRef ModuleTriple,
                        llvm::StringRef PluginTriple);

} // namespace offloadio

#endif // OFFLOADIO_BITCODEIMAGE_H

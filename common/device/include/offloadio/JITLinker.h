// SPDX-License-Identifier: Apache-2.0
//
// Linking the object the JIT generated into a loadable shared object with
// LLVM's linker, lld, run as a program as the stock AMDGPU plugin does
// (Debian ships no linker library to call in process).
#ifndef OFFLOADIO_JITLINKER_H
#define OFFLOADIO_JITLINKER_H

#include "offloadio/Error.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <string>
#include <vector>

namespace offloadio {

/// An lld found, and how to call it.
struct LLDProgramTy {
  std::string Path; ///< The program.
  /// Whether it must be told "-flavor gnu" (called as "lld", not "ld.lld").
  bool NeedsFlavor = false;
};

/// The directories searched for lld after PATH: the bin directory of the
/// LLVM the plugins were built with.
std::vector<std::string> defaultLLDDirectories();

/// Find lld: "lld" then "ld.lld" on PATH (the stock plugin's "lld" first),
/// then "ld.lld" and "lld" in \p Directories; an error naming all that was
/// tried otherwise.
Expected<LLDProgramTy> findLLD(llvm::ArrayRef<std::string> Directories);

/// Link the ELF object \p Object for processor \p CPU into a shared object
/// with \p LLD (--no-undefined -shared, as the stock plugin), through
/// temporary files that are removed afterwards.
Expected<std::unique_ptr<llvm::MemoryBuffer>>
linkSharedObject(const LLDProgramTy &LLD, llvm::StringRef Object,
                 llvm::StringRef CPU);

} // namespace offloadio

#endif // OFFLOADIO_JITLINKER_H

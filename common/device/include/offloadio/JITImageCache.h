// SPDX-License-Identifier: Apache-2.0
//
// JITImageCacheTy: the images the JIT compiled, by the bitcode's content and
// the processor compiled for, so that an image loaded on several devices of
// one kind (or registered twice) is compiled once.
#ifndef OFFLOADIO_JITIMAGECACHE_H
#define OFFLOADIO_JITIMAGECACHE_H

#include "offloadio/Error.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace offloadio {

/// Compiled images, kept for the cache's lifetime.
class JITImageCacheTy {
public:
  /// Makes the image of a bitcode for one processor.
  using CompileFnTy =
      llvm::function_ref<Expected<std::unique_ptr<llvm::MemoryBuffer>>()>;

  /// The image compiled from \p Bitcode for \p CPU: the cached one, or the
  /// one \p Compile makes now (then cached; a failure is not). Callers for
  /// the same key wait for one compilation. The bytes live as long as the
  /// cache.
  Expected<llvm::StringRef> getOrCompile(llvm::StringRef Bitcode,
                                         llvm::StringRef CPU,
                                         CompileFnTy Compile);

  /// Number of compilations that succeeded.
  size_t size() const;

private:
  /// The processor, the bitcode's size and its SHA-1.
  using KeyTy = std::string;
  static KeyTy makeKey(llvm::StringRef Bitcode, llvm::StringRef CPU);

  mutable std::mutex Lock;
  std::map<KeyTy, std::unique_ptr<llvm::MemoryBuffer>> Images;
};

} // namespace offloadio

#endif // OFFLOADIO_JITIMAGECACHE_H

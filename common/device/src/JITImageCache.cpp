// SPDX-License-Identifier: Apache-2.0
#include "offloadio/JITImageCache.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA1.h"

using namespace offloadio;

JITImageCacheTy::KeyTy JITImageCacheTy::makeKey(llvm::StringRef Bitcode,
                                                llvm::StringRef CPU) {
  auto Digest = llvm::SHA1::hash(llvm::ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t *>(Bitcode.data()), Bitcode.size()));
  return CPU.str() + "/" + std::to_string(Bitcode.size()) + "/" +
         llvm::toHex(llvm::ArrayRef<uint8_t>(Digest.data(), Digest.size()),
                     /*LowerCase=*/true);
}

Expected<llvm::StringRef> JITImageCacheTy::getOrCompile(llvm::StringRef Bitcode,
                                                        llvm::StringRef CPU,
                                                        CompileFnTy Compile) {
  KeyTy Key = makeKey(Bitcode, CPU);
  // Held while compiling: devices loading the same image wait for the one
  // compilation rather than repeating it, as the stock plugins' JIT does.
  std::lock_guard<std::mutex> Guard(Lock);
  auto It = Images.find(Key);
  if (It != Images.end())
    return It->second->getBuffer();
  auto Image = Compile();
  if (!Image)
    return Image.takeError();
  llvm::StringRef Bytes = (*Image)->getBuffer();
  Images.emplace(std::move(Key), std::move(*Image));
  return Bytes;
}

size_t JITImageCacheTy::size() const {
  std::lock_guard<std::mutex> Guard(Lock);
  return Images.size();
}

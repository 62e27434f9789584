// SPDX-License-Identifier: Apache-2.0
#include "offloadio/BitcodeImage.h"

#include "llvm/BinaryFormat/Magic.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBufferRef.h"
#include "llvm/TargetParser/Triple.h"

using namespace offloadio;

bool offloadio::isBitcodeImage(llvm::StringRef Bytes) {
  return llvm::identify_magic(Bytes) == llvm::file_magic::bitcode;
}

Expected<BitcodeTargetTy> offloadio::readBitcodeTarget(llvm::StringRef Bytes) {
  // Lazily: the triple and the functions' attributes are in the module's
  // records, the bodies are not needed to tell the target.
  llvm::LLVMContext Context;
  auto Module = llvm::getLazyBitcodeModule(
      llvm::MemoryBufferRef(Bytes, "bitcode image"), Context,
      /*ShouldLazyLoadMetadata=*/true);
  if (!Module)
    return makeError(ErrorCode::InvalidImage,
                     "bitcode image of {0} bytes does not parse: {1}",
                     Bytes.size(), llvm::toString(Module.takeError()));
  BitcodeTargetTy Target;
  Target.Triple = (*Module)->getTargetTriple();
  for (const llvm::Function &F : **Module) {
    llvm::Attribute CPU = F.getFnAttribute("target-cpu");
    if (CPU.isValid() && !CPU.getValueAsString().empty()) {
      Target.CPU = CPU.getValueAsString().str();
      break;
    }
  }
  return Target;
}

bool offloadio::isSameArchitecture(llvm::StringRef ModuleTriple,
                                   llvm::StringRef PluginTriple) {
  llvm::Triple Module(ModuleTriple), Plugin(PluginTriple);
  return Module.getArch() != llvm::Triple::UnknownArch &&
         Module.getArch() == Plugin.getArch();
}

// SPDX-License-Identifier: Apache-2.0
#include "AMDGPUJIT.h"

#include "offloadio/JITLinker.h"

using namespace offloadio;
using namespace offloadio::amdgpu;

Expected<std::unique_ptr<llvm::MemoryBuffer>>
AMDGPUJITTargetTy::finishImage(std::unique_ptr<llvm::MemoryBuffer> Output) {
  auto LLD = findLLD(defaultLLDDirectories());
  if (!LLD)
    return LLD.takeError();
  // The stock plugin's line, typo included.
  Info.printStock(InfoPluginKernel, DeviceId,
                  "Using `{0}` to link JITed amdgcn ouput.", LLD->Path);
  return linkSharedObject(*LLD, Output->getBuffer(), Processor);
}

// SPDX-License-Identifier: Apache-2.0
#include "offloadio/AsyncInfoWrapper.h"
#include "offloadio/Device.h"

using namespace offloadio;

Expected<StreamTy &> AsyncInfoWrapperTy::getStream() {
  if (!AsyncInfo->Queue) {
    auto Stream = Device.acquireStream();
    if (!Stream)
      return Stream.takeError();
    AsyncInfo->Queue = *Stream;
  }
  return *static_cast<StreamTy *>(AsyncInfo->Queue);
}

Error AsyncInfoWrapperTy::finalize(Error Err) {
  if (!Owned)
    return Err;
  // A synchronous entry point: wait even after an error so that no queued
  // work outlives the caller's buffers.
  Error SyncErr = Device.synchronize(*AsyncInfo);
  return llvm::joinErrors(std::move(Err), std::move(SyncErr));
}

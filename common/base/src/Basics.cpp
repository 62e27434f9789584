// SPDX-License-Identifier: Apache-2.0
// Out-of-line anchors and names of the small framework types.
#include "offloadio/ABI.h"
#include "offloadio/Stream.h"

#include <memory>

using namespace offloadio;

EventTy::~EventTy() = default;
StreamTy::~StreamTy() = default;

Error StreamTy::runDeferred() { return takeDeferred(true); }

Error StreamTy::cancelDeferred() { return takeDeferred(false); }

Error StreamTy::enqueueDeferred() {
  if (Deferred.empty())
    return Error::success();
  auto Batch = std::make_unique<DeferredListTy>();
  Batch->swap(Deferred);
  if (auto Err = hostCallback(runDeferredBatch, Batch.get())) {
    Deferred.swap(*Batch); // Still deferred: the owner's synchronize runs them.
    return Err;
  }
  Batch.release();
  return Error::success();
}

Error StreamTy::runDeferredBatch(void *Data) {
  std::unique_ptr<DeferredListTy> Batch(static_cast<DeferredListTy *>(Data));
  return runEach(*Batch, true);
}

Error StreamTy::takeDeferred(bool Run) {
  // Swap first: a deferred function may defer more work on this stream.
  DeferredListTy Now;
  Now.swap(Deferred);
  Error Err = runEach(Now, Run);
  // Releases last: the deferred copy-outs may read what they free.
  llvm::SmallVector<DeferredTy, 2> Freed;
  Freed.swap(Releases);
  Error FreedErr = runEach(Freed, true);
  if (Err) {
    llvm::consumeError(std::move(FreedErr));
    return Err;
  }
  return FreedErr;
}

Error StreamTy::runEach(llvm::MutableArrayRef<DeferredTy> Entries, bool Run) {
  Error Err = Error::success();
  for (DeferredTy &D : Entries) {
    Error FnErr = (Run ? D.Fn : D.Cancel)(D.Data);
    if (!Err)
      Err = std::move(FnErr);
    else
      llvm::consumeError(std::move(FnErr));
  }
  return Err;
}

const char *offloadio::allocKindName(AllocKindTy Kind) {
  switch (Kind) {
  case AllocKindTy::Device:
    return "device";
  case AllocKindTy::Host:
    return "host";
  case AllocKindTy::Shared:
    return "shared";
  case AllocKindTy::Default:
    return "default";
  }
  return "unknown";
}

const char *offloadio::copyKindName(CopyKindTy Kind) {
  switch (Kind) {
  case CopyKindTy::HostToDevice:
    return "host-to-device";
  case CopyKindTy::DeviceToHost:
    return "device-to-host";
  case CopyKindTy::DeviceToDevice:
    return "device-to-device";
  case CopyKindTy::HostToHost:
    return "host-to-host";
  }
  return "unknown";
}

// SPDX-License-Identifier: Apache-2.0
// Out-of-line anchors and names of the small framework types.
#include "offloadio/ABI.h"
#include "offloadio/DeviceImage.h"
#include "offloadio/Stream.h"

#include <memory>
#include <tuple>

using namespace offloadio;

EventTy::~EventTy() = default;
StreamTy::~StreamTy() = default;

Error StreamTy::runDeferred() { return takeDeferred(true); }

Error StreamTy::cancelDeferred() { return takeDeferred(false); }

namespace {
/// Deferred functions moved onto the stream by enqueueDeferred().
struct DeferredBatchTy {
  llvm::SmallVector<std::tuple<HostCallbackTy, void *>, 4> Fns;
};
} // namespace

Error StreamTy::enqueueDeferred() {
  if (Deferred.empty())
    return Error::success();
  auto Batch = std::make_unique<DeferredBatchTy>();
  for (const DeferredTy &D : Deferred)
    Batch->Fns.emplace_back(D.Fn, D.Data);
  if (auto Err = hostCallback(runDeferredBatch, Batch.get()))
    return Err; // Still deferred: the owner's synchronize runs them.
  Batch.release();
  Deferred.clear();
  return Error::success();
}

Error StreamTy::runDeferredBatch(void *Data) {
  std::unique_ptr<DeferredBatchTy> Batch(static_cast<DeferredBatchTy *>(Data));
  Error Err = Error::success();
  for (auto [Fn, FnData] : Batch->Fns) {
    Error FnErr = Fn(FnData);
    if (!Err)
      Err = std::move(FnErr);
    else
      llvm::consumeError(std::move(FnErr));
  }
  return Err;
}

Error StreamTy::takeDeferred(bool Run) {
  Error Err = Error::success();
  // Swap first: a deferred function may defer more work on this stream.
  llvm::SmallVector<DeferredTy, 4> Now;
  Now.swap(Deferred);
  for (DeferredTy &D : Now) {
    Error FnErr = (Run ? D.Fn : D.Cancel)(D.Data);
    if (!Err)
      Err = std::move(FnErr);
    else
      llvm::consumeError(std::move(FnErr));
  }
  return Err;
}
DeviceImageTy::~DeviceImageTy() = default;

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

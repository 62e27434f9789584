// SPDX-License-Identifier: Apache-2.0
// Out-of-line anchors and names of the small framework types.
#include "offloadio/ABI.h"
#include "offloadio/DeviceImage.h"
#include "offloadio/Stream.h"

using namespace offloadio;

EventTy::~EventTy() = default;
StreamTy::~StreamTy() = default;

Error StreamTy::runDeferred() { return takeDeferred(true); }

Error StreamTy::cancelDeferred() { return takeDeferred(false); }

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

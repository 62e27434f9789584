// SPDX-License-Identifier: Apache-2.0
//
// Bridges libomptarget's __tgt_async_info to our streams. Synchronous entry
// points pass no async info; the wrapper then uses a private one and waits
// for it before returning.
#ifndef OFFLOADIO_ASYNCINFOWRAPPER_H
#define OFFLOADIO_ASYNCINFOWRAPPER_H

#include "offloadio/ABI.h"
#include "offloadio/Error.h"

namespace offloadio {

class GenericDeviceTy;
class StreamTy;

/// RAII view of a caller's async info for one entry point call.
class AsyncInfoWrapperTy {
public:
  /// \p AsyncInfo may be null for synchronous operations.
  AsyncInfoWrapperTy(GenericDeviceTy &Device, __tgt_async_info *AsyncInfo)
      : Device(Device), AsyncInfo(AsyncInfo ? AsyncInfo : &LocalAsyncInfo),
        Owned(AsyncInfo == nullptr) {}
  AsyncInfoWrapperTy(const AsyncInfoWrapperTy &) = delete;
  AsyncInfoWrapperTy &operator=(const AsyncInfoWrapperTy &) = delete;

  /// The stream of the async info, taking one from the device's pool the
  /// first time (the caller then sees Queue != NULL: work is pending).
  Expected<StreamTy &> getStream();

  /// Whether the wrapper synchronises at the end (synchronous entry point).
  bool isSynchronous() const { return Owned; }

  /// End of the entry point: for a private async info, wait for the work and
  /// release the stream. \p Err is the entry point's own result so far.
  Error finalize(Error Err);

private:
  GenericDeviceTy &Device;
  __tgt_async_info LocalAsyncInfo = {nullptr};
  __tgt_async_info *AsyncInfo;
  bool Owned;
};

} // namespace offloadio

#endif // OFFLOADIO_ASYNCINFOWRAPPER_H

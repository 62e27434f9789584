// SPDX-License-Identifier: Apache-2.0
//
// The entry points by which libomptarget 17 and 18 tell the plugin that a
// host buffer was mapped or unmapped: where the plugin locks mapped buffers
// (LIBOMPTARGET_LOCK_MAPPED_HOST_BUFFERS), as 16's data_alloc did.
#include "offloadio/CApiSupport.h"

using namespace offloadio;

OFFLOADIO_API int32_t __tgt_rtl_data_notify_mapped(int32_t DeviceId,
                                                   void *HstPtr, int64_t Size) {
  return onDevice(DeviceId, "data_notify_mapped",
                  [&](GenericDeviceTy &D) -> Error {
                    if (!HstPtr || Size <= 0)
                      return makeError(ErrorCode::InvalidArgument,
                                       "mapped buffer {0} of {1} bytes",
                                       HstPtr, Size);
                    return D.notifyDataMapped(HstPtr, size_t(Size));
                  });
}

OFFLOADIO_API int32_t __tgt_rtl_data_notify_unmapped(int32_t DeviceId,
                                                     void *HstPtr) {
  return onDevice(DeviceId, "data_notify_unmapped",
                  [&](GenericDeviceTy &D) { return D.notifyDataUnmapped(HstPtr); });
}

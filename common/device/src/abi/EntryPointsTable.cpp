// SPDX-License-Identifier: Apache-2.0
//
// The entry points of libomptarget 16 and 17 that 18 changed or dropped:
// load_binary returns the table of the image's entries, the image's
// architecture comes with is_valid_binary_info, init_requires answers the
// flags, and libomptarget calls deinit_plugin after each library it
// unregisters.
#include "offloadio/ABI.h"
#include "offloadio/CApiSupport.h"

using namespace offloadio;

void offloadio::arrangeExitFlush() {
  // libomptarget 16 and 17 call deinit_plugin.
}

OFFLOADIO_API int32_t __tgt_rtl_deinit_plugin() {
  // Called once per unregistered library, and the plugin is used again
  // afterwards: only wait for outstanding work.
  return flushPlugin("deinit_plugin");
}

OFFLOADIO_API int32_t __tgt_rtl_is_valid_binary_info(__tgt_device_image *Image,
                                                     __tgt_image_info *Info) {
  return Image &&
         thePlugin().isValidBinary(*Image, Info ? Info->Arch : nullptr);
}

OFFLOADIO_API int64_t __tgt_rtl_init_requires(int64_t RequiresFlags) {
  thePlugin().setRequiresFlags(RequiresFlags);
  return RequiresFlags;
}

OFFLOADIO_API int32_t __tgt_rtl_deinit_device(int32_t DeviceId) {
  // Never called by libomptarget 16 or 17; devices live as long as the
  // plugin.
  return onDevice(DeviceId, "deinit_device",
                  [](GenericDeviceTy &D) { return D.drain(); });
}

OFFLOADIO_API __tgt_target_table *
__tgt_rtl_load_binary(int32_t DeviceId, __tgt_device_image *Image) {
  __tgt_target_table *Table = nullptr;
  onDevice(DeviceId, "load_binary", [&](GenericDeviceTy &D) -> Error {
    if (!Image)
      return makeError(ErrorCode::InvalidArgument, "null device image");
    auto Loaded = D.loadBinary(*Image);
    if (!Loaded)
      return Loaded.takeError();
    Table = &(*Loaded)->Table;
    return Error::success();
  });
  return Table;
}

// SPDX-License-Identifier: Apache-2.0
//
// What the files of the plugin's C entry points (common/device/src/CApi*.cpp)
// share: the plugin instance (CApi.cpp), the errno report of the extensions
// and their last-error store (CApiExtensions.cpp). Only those files include
// this.
#ifndef OFFLOADIO_CAPISUPPORT_H
#define OFFLOADIO_CAPISUPPORT_H

#include "offloadio/Error.h"
#include "offloadio/ExtensionABI.h"
#include "offloadio/LastErrorStore.h"

#include <cstdint>

/// Defines one of libomptarget's __tgt_rtl_* entry points: exported.
#define OFFLOADIO_API extern "C" __attribute__((visibility("default")))
/// Defines one of the extension calls: reached only through the table that
/// __tgt_rtl_ompx_extensions answers, so not exported (ExtensionABI.h).
#define OFFLOADIO_EXTENSION_DEFINITION extern "C" OFFLOADIO_EXTENSION_CALL

namespace offloadio {

class GenericPluginTy;

/// The owner of the plugin's extension failure messages.
struct ExtensionErrorOwnerTag;

/// The message of each thread's last failed extension call, until
/// libompx_io takes it (__tgt_rtl_ompx_take_last_error). Per thread because
/// the calls of different threads fail independently and each thread's
/// ompx_io_last_error is its own; the plugin instance has no per-thread
/// state to hold it.
using ExtensionErrorsTy = LastErrorStoreTy<ExtensionErrorOwnerTag>;

/// The plugin instance of the C entry points, created by the first of them.
GenericPluginTy &extensionPlugin();

/// Turn \p Err of an extension call on local device \p DeviceId (-1: none)
/// into an errno value and keep its message for
/// __tgt_rtl_ompx_take_last_error, as every extension does.
int32_t extensionErrno(Error Err, int32_t DeviceId);

} // namespace offloadio

#endif // OFFLOADIO_CAPISUPPORT_H

// SPDX-License-Identifier: Apache-2.0
//
// What CApi.cpp shares with the other files of the plugin's C entry points
// (CApiBatch.cpp): the plugin instance and the errno report of the
// extensions. Only those files include this.
#ifndef OFFLOADIO_CAPISUPPORT_H
#define OFFLOADIO_CAPISUPPORT_H

#include "offloadio/Error.h"

#include <cstdint>

namespace offloadio {

class GenericPluginTy;

/// The plugin instance of the C entry points.
GenericPluginTy &extensionPlugin();

/// Turn \p Err of an extension call on local device \p DeviceId (-1: none)
/// into an errno value and keep its message for
/// __tgt_rtl_ompx_take_last_error, as every extension does.
int32_t extensionErrno(Error Err, int32_t DeviceId);

} // namespace offloadio

#endif // OFFLOADIO_CAPISUPPORT_H

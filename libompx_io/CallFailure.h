// SPDX-License-Identifier: Apache-2.0
//
// How a call of the API fails: errno and a last error that names the call,
// the device where there is one, and what went wrong (its arguments, no
// plugin to serve it, a plugin too old for it, or the plugin's own message).
// Each returns -1 after fail() (Diagnostics.h), except the message builders.
#ifndef OMPX_IO_CALLFAILURE_H
#define OMPX_IO_CALLFAILURE_H

#include "PluginDirectory.h"

#include <optional>
#include <string>

namespace ompxio {

/// Fail \p Call with EINVAL: \p What is wrong with its arguments.
int invalidArgument(const char *Call, const char *What);

/// Fail \p Call with ENODEV: no offload-io plugin serves \p Device (none:
/// no offload-io plugin is loaded at all).
int notServed(const char *Call, std::optional<int> Device);

/// "<Call>" or "<Call> on device <Device>": the head of a failure message.
std::string callHead(const char *Call, std::optional<int> Device);

/// The message of \p Call on \p Device failing with \p Errno, which
/// \p Plugin returned: the plugin's, or errno's text without one.
std::string pluginMessage(const PluginTy &Plugin, int Errno, const char *Call,
                          std::optional<int> Device);

/// Fail \p Call on \p Device with \p Errno, which \p Plugin returned; the
/// message is pluginMessage's.
int pluginFailure(const PluginTy &Plugin, int Errno, const char *Call,
                  std::optional<int> Device);

/// Fail \p Call on \p Device with ENOSYS: the table of \p Plugin lacks the
/// extension \p Name (an ExtensionNames entry), which the call needs.
int lackingExtension(const PluginTy &Plugin, const char *Name,
                     const char *Call, std::optional<int> Device);

} // namespace ompxio

#endif // OMPX_IO_CALLFAILURE_H

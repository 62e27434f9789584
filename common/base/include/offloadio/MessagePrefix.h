// SPDX-License-Identifier: Apache-2.0
//
// Who speaks in offload-io's messages: the one place that writes their
// prefixes, one form per component. The plugins (the framework, its file
// engine and every backend) speak as "offload-io(<plugin>)", libompx_io as
// "ompx-io"; a line printed adds the process tag ("[<pid>]", with the rank
// in a launcher's job), a message kept for the program to fetch does not.
// Lines that repeat what LLVM's stock plugins print carry the stock prefix
// (stockInfoLinePrefix), so that a program or test reading them sees the
// stock plugin's text. Header-only and free of LLVM:
// libompx_io and the settings readers (Envar.h) use it without the
// framework.
#ifndef OFFLOADIO_MESSAGEPREFIX_H
#define OFFLOADIO_MESSAGEPREFIX_H

#include "offloadio/LaunchRank.h"

#include <cstdint>
#include <string>
#include <unistd.h>

namespace offloadio {

/// The plugins' name in their messages.
inline constexpr const char *PluginsMessageName = "offload-io";
/// libompx_io's name in its messages.
inline constexpr const char *LibraryMessageName = "ompx-io";

namespace detail {
/// " device <N>", or "" for \p DeviceId -1 (a plugin-wide message).
inline std::string deviceSuffix(int32_t DeviceId) {
  return DeviceId >= 0 ? " device " + std::to_string(DeviceId) : "";
}
/// "offload-io(<plugin>)", or "offload-io" for \p PluginName "".
inline std::string pluginSource(const std::string &PluginName) {
  std::string Source = PluginsMessageName;
  if (!PluginName.empty())
    Source += "(" + PluginName + ")";
  return Source;
}
} // namespace detail

/// The source a plugin's kept message names (last errors a program
/// fetches): "offload-io(<plugin>)", then " device <N>" unless
/// \p DeviceId is -1.
inline std::string pluginMessageSource(const std::string &PluginName,
                                       int32_t DeviceId = -1) {
  return detail::pluginSource(PluginName) + detail::deviceSuffix(DeviceId);
}

/// The prefix of every line the plugins print:
/// "offload-io(<plugin>)[<pid>]", or "offload-io[<pid>]" for \p PluginName
/// "" (lines of no one plugin, such as setting warnings), then
/// " device <N>" unless \p DeviceId is -1. The pid tells apart the lines
/// of the processes of one job that share a terminal or a log (forked
/// children, MPI ranks); it is read at each line, so that a forked child's
/// lines carry its own.
inline std::string linePrefix(const std::string &PluginName,
                              int32_t DeviceId = -1) {
  return detail::pluginSource(PluginName) + processTag(::getpid()) +
         detail::deviceSuffix(DeviceId);
}

/// The prefix of the info lines that mirror the stock plugins' (their
/// common code's INFO under LIBOMPTARGET_INFO): "\"PluginInterface\" device
/// <N> info: ", quotes included, \p DeviceId being the plugin's own number
/// of the device, as in LLVM 16, 17 and 18.
inline std::string stockInfoLinePrefix(int32_t DeviceId) {
  return "\"PluginInterface\" device " + std::to_string(DeviceId) + " info: ";
}

/// The prefix of every line libompx_io prints: "ompx-io[<pid>]".
inline std::string libraryLinePrefix() {
  return LibraryMessageName + processTag(::getpid());
}

} // namespace offloadio

#endif // OFFLOADIO_MESSAGEPREFIX_H

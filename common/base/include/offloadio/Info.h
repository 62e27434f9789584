// SPDX-License-Identifier: Apache-2.0
//
// LIBOMPTARGET_INFO handling. Debian's libomptarget is a release build whose
// debug output is compiled out, so the plugin reads the variable itself and
// prints its own lines, prefixed "offload-io(<plugin>)[<pid>]" (linePrefix).
#ifndef OFFLOADIO_INFO_H
#define OFFLOADIO_INFO_H

#include "offloadio/MessagePrefix.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <cstdint>
#include <string>

namespace offloadio {

/// The LIBOMPTARGET_INFO bits, as libomptarget defines them.
enum InfoKindTy : uint32_t {
  InfoKernelArgs = 0x1,
  InfoMappingExists = 0x2,
  InfoDumpTable = 0x4,
  InfoMappingChanged = 0x8,
  InfoPluginKernel = 0x10,
  InfoDataTransfer = 0x20,
};

/// Where and when the plugin prints informational and error lines.
class InfoTy {
public:
  /// \p PluginName goes into every line's prefix; \p Flags is the
  /// LIBOMPTARGET_INFO mask (PluginSettingsTy).
  InfoTy(std::string PluginName, uint32_t Flags);

  /// Whether any of \p Kinds is enabled.
  bool enabled(uint32_t Kinds) const {
    return Flags.load(std::memory_order_relaxed) & Kinds;
  }
  /// Whether LIBOMPTARGET_INFO is nonzero at all.
  bool any() const { return Flags.load(std::memory_order_relaxed) != 0; }
  /// Replace the flags (set_info_flag entry point).
  void setFlags(uint32_t NewFlags) {
    Flags.store(NewFlags, std::memory_order_relaxed);
  }
  /// The plugin's name, e.g. "x86_64".
  const std::string &getPluginName() const { return PluginName; }

  /// Print one line for device \p DeviceId (-1: plugin-wide) when one of
  /// \p Kinds is enabled.
  template <typename... ArgsTy>
  void print(uint32_t Kinds, int32_t DeviceId, const char *Fmt,
             ArgsTy &&...Args) const {
    if (!enabled(Kinds))
      return;
    emit(DeviceId, llvm::formatv(Fmt, std::forward<ArgsTy>(Args)...).str(),
         false);
  }

  /// Print an error line unconditionally (the C boundary's REPORT).
  void error(int32_t DeviceId, const std::string &Msg) const {
    emit(DeviceId, Msg, true);
  }

private:
  void emit(int32_t DeviceId, const std::string &Msg, bool IsError) const;

  std::string PluginName;
  std::atomic<uint32_t> Flags;
};

} // namespace offloadio

#endif // OFFLOADIO_INFO_H

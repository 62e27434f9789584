// SPDX-License-Identifier: Apache-2.0
//
// Info lines. Two kinds, each under its own setting, with the same bits:
// - lines that mirror what LLVM's stock plugins print (the kernel launch
//   line), under LIBOMPTARGET_INFO, with the stock text and prefix;
// - offload-io's own lines (transfers, locks, images, kernels, devices,
//   refusals...), under OFFLOADIO_INFO, prefixed "offload-io(<plugin>)[<pid>]"
//   (linePrefix).
// The own lines stay out of LIBOMPTARGET_INFO so that output checked
// against the stock plugin's (LLVM's libomptarget tests, whose CHECK-NEXT
// chains run through libomptarget's own lines) is the stock output. Debian's
// libomptarget is a release build whose debug output is compiled out, so
// the plugin reads both variables itself.
#ifndef OFFLOADIO_INFO_H
#define OFFLOADIO_INFO_H

#include "offloadio/MessagePrefix.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <atomic>
#include <cstdint>
#include <string>

namespace offloadio {

/// The LIBOMPTARGET_INFO bits, as libomptarget defines them; OFFLOADIO_INFO
/// gives them the same meanings for offload-io's own lines.
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
  /// \p PluginName goes into every own line's prefix; \p StockFlags is the
  /// LIBOMPTARGET_INFO mask, \p OwnFlags the OFFLOADIO_INFO one
  /// (PluginSettingsTy).
  InfoTy(std::string PluginName, uint32_t StockFlags, uint32_t OwnFlags);

  /// Whether any of \p Kinds is enabled for own lines (OFFLOADIO_INFO).
  bool enabled(uint32_t Kinds) const { return OwnFlags & Kinds; }
  /// Whether OFFLOADIO_INFO is nonzero at all.
  bool any() const { return OwnFlags != 0; }
  /// Whether any of \p Kinds is enabled for the stock plugins' lines
  /// (LIBOMPTARGET_INFO, or what set_info_flag set since).
  bool stockEnabled(uint32_t Kinds) const {
    return StockFlags.load(std::memory_order_relaxed) & Kinds;
  }
  /// Replace the LIBOMPTARGET_INFO mask (the set_info_flag entry point,
  /// which libomptarget's __tgt_set_info_flag calls); OFFLOADIO_INFO stays.
  void setStockFlags(uint32_t NewFlags) {
    StockFlags.store(NewFlags, std::memory_order_relaxed);
  }
  /// The plugin's name, e.g. "x86_64".
  const std::string &getPluginName() const { return PluginName; }

  /// Print one own line for device \p DeviceId (-1: plugin-wide) when one
  /// of \p Kinds is enabled in OFFLOADIO_INFO.
  template <typename... ArgsTy>
  void print(uint32_t Kinds, int32_t DeviceId, const char *Fmt,
             ArgsTy &&...Args) const {
    if (!enabled(Kinds))
      return;
    emit(DeviceId, llvm::formatv(Fmt, std::forward<ArgsTy>(Args)...).str(),
         false);
  }

  /// Print a line that a stock plugin prints, with the stock prefix
  /// (stockInfoLinePrefix), for device \p DeviceId when one of \p Kinds is
  /// enabled in LIBOMPTARGET_INFO. \p Fmt gives the stock text.
  template <typename... ArgsTy>
  void printStock(uint32_t Kinds, int32_t DeviceId, const char *Fmt,
                  ArgsTy &&...Args) const {
    if (!stockEnabled(Kinds))
      return;
    emitStock(DeviceId,
              llvm::formatv(Fmt, std::forward<ArgsTy>(Args)...).str());
  }

  /// Print an error line unconditionally (the C boundary's REPORT).
  void error(int32_t DeviceId, const std::string &Msg) const {
    emit(DeviceId, Msg, true);
  }

private:
  void emit(int32_t DeviceId, const std::string &Msg, bool IsError) const;
  void emitStock(int32_t DeviceId, const std::string &Msg) const;
  /// Write \p Line and a newline to stderr in one call.
  static void writeLine(std::string Line);

  std::string PluginName;
  std::atomic<uint32_t> StockFlags;
  const uint32_t OwnFlags;
};

} // namespace offloadio

#endif // OFFLOADIO_INFO_H

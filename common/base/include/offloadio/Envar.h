// SPDX-License-Identifier: Apache-2.0
//
// Typed environment variables. A value that does not parse is reported on
// stderr and replaced by the default: users must never wonder whether a
// setting took effect. The settings of Settings.def are read with
// read*Setting, which take name, default and bounds from the table. Free of
// LLVM, so that libompx_io parses its settings with the same rules.
#ifndef OFFLOADIO_ENVAR_H
#define OFFLOADIO_ENVAR_H

#include "offloadio/SettingTable.h"

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace offloadio {

/// Parse a boolean the way libomptarget does: true/yes/on/1 and
/// false/no/off/0, case-insensitively.
std::optional<bool> parseBool(std::string_view Value);

/// Parse a size: decimal digits without a leading zero (0 itself is
/// allowed), then an optional K/M/G suffix of either case (binary
/// multiples), surrounding whitespace allowed. Anything else (0x, octal,
/// KiB, fractions, signs) or a value past UINT64_MAX is nullopt.
std::optional<uint64_t> parseSize(std::string_view Value);

/// Parse a signed integer in decimal, hexadecimal (0x), octal (0 or 0o) or
/// binary (0b), an optional '-' first, surrounding whitespace allowed: the
/// rules of llvm::StringRef::getAsInteger with radix 0.
std::optional<int64_t> parseInt(std::string_view Value);

/// The raw value of \p Name, or std::nullopt when unset.
std::optional<std::string> getEnv(const char *Name);

/// Read a boolean variable; invalid values are reported and give \p Default.
bool readBoolEnv(const char *Name, bool Default);

/// Read an unsigned size in [\p Min, \p Max]; invalid or out-of-range values
/// are reported and give \p Default.
uint64_t readSizeEnv(const char *Name, uint64_t Default, uint64_t Min,
                     uint64_t Max);

/// Read an integer variable in [\p Min, \p Max] (hex allowed).
int64_t readIntEnv(const char *Name, int64_t Default, int64_t Min, int64_t Max);

/// The choices of a readChoiceEnv call: an array, a braced list, or a
/// contiguous container of names (std::vector, llvm::ArrayRef), borrowed
/// for the call.
class ChoiceListTy {
public:
  template <typename T, size_t N>
  ChoiceListTy(T (&Names)[N]) : Names(Names), Size(N) {}
  ChoiceListTy(std::initializer_list<const char *> Names)
      : Names(Names.begin()), Size(Names.size()) {}
  template <typename ContainerTy,
            typename = decltype(std::declval<const ContainerTy &>().data())>
  ChoiceListTy(const ContainerTy &Names)
      : Names(Names.data()), Size(Names.size()) {}
  /// Number of choices.
  size_t size() const { return Size; }
  /// Choice \p I.
  const char *operator[](size_t I) const { return Names[I]; }

private:
  const char *const *Names;
  size_t Size;
};

/// Read one of \p Choices (case-insensitive); returns its index, or
/// \p Default when unset or invalid (reported).
unsigned readChoiceEnv(const char *Name, ChoiceListTy Choices,
                       unsigned Default);

/// A default or bound of a setting known only at run time (a number of
/// CPUs, a device's limit), replacing the table's.
struct SettingBoundsTy {
  std::optional<uint64_t> Default; ///< Replaces the table's default.
  std::optional<uint64_t> Min;     ///< Replaces the table's minimum.
  std::optional<uint64_t> Max;     ///< Replaces the table's maximum.
};

/// Read setting \p D of kind Bool, with the rules of readBoolEnv.
bool readBoolSetting(const SettingDeclTy &D);
/// Read setting \p D of kind Int, with the rules of readIntEnv.
int64_t readIntSetting(const SettingDeclTy &D,
                       const SettingBoundsTy &Bounds = {});
/// Read setting \p D of kind Size, with the rules of readSizeEnv.
uint64_t readSizeSetting(const SettingDeclTy &D,
                         const SettingBoundsTy &Bounds = {});
/// Read setting \p D of kind Choice: the index of its choice.
unsigned readChoiceSetting(const SettingDeclTy &D);
/// Read setting \p D of kind InfoMask: any integer parseInt accepts,
/// taken modulo 2^32; otherwise reported, and the default.
uint32_t readInfoMaskSetting(const SettingDeclTy &D);

/// Read setting \p D of kind Path: its value, or nullopt when unset or
/// empty.
std::optional<std::string> readPathSetting(const SettingDeclTy &D);

/// The readers of setting \p Id, its kind checked at compile time.
template <SettingId Id> bool readBoolSetting() {
  static_assert(settingDecl(Id).Kind == SettingKindTy::Bool, "not a Bool");
  return readBoolSetting(settingDecl(Id));
}
template <SettingId Id>
int64_t readIntSetting(const SettingBoundsTy &Bounds = {}) {
  static_assert(settingDecl(Id).Kind == SettingKindTy::Int, "not an Int");
  return readIntSetting(settingDecl(Id), Bounds);
}
template <SettingId Id>
uint64_t readSizeSetting(const SettingBoundsTy &Bounds = {}) {
  static_assert(settingDecl(Id).Kind == SettingKindTy::Size, "not a Size");
  return readSizeSetting(settingDecl(Id), Bounds);
}
template <SettingId Id> unsigned readChoiceSetting() {
  static_assert(settingDecl(Id).Kind == SettingKindTy::Choice, "not a Choice");
  return readChoiceSetting(settingDecl(Id));
}
template <SettingId Id> uint32_t readInfoMaskSetting() {
  static_assert(settingDecl(Id).Kind == SettingKindTy::InfoMask,
                "not an InfoMask");
  return readInfoMaskSetting(settingDecl(Id));
}

template <SettingId Id> std::optional<std::string> readPathSetting() {
  static_assert(settingDecl(Id).Kind == SettingKindTy::Path, "not a Path");
  return readPathSetting(settingDecl(Id));
}

/// Read setting \p D with the reader of its kind, the table's defaults
/// and bounds, and return the value in force as text (as the readers'
/// log records it): for tools and tests that read every setting.
std::string readSettingText(const SettingDeclTy &D);
/// The choices of \p Decl (of kind Choice), split at the commas.
std::vector<std::string> settingChoices(const SettingDeclTy &Decl);

/// Report an invalid setting on stderr, once per process for each value:
/// the first report sets the marker variable reportedMarkerName(Name) to
/// "<pid>:<value>", and a report that finds that marker prints nothing. The
/// marker is how the plugins loaded in one process, which share no symbols,
/// agree that the value was already reported.
void reportInvalidEnv(const char *Name, std::string_view Value,
                      std::string_view Expected, std::string_view Used);

/// Report on stderr, once per process, that \p Name is deprecated in favour
/// of \p Replacement; the same marker scheme as reportInvalidEnv, with the
/// stamp "<pid>:deprecated".
void reportDeprecatedEnv(const char *Name, const char *Replacement);

/// The marker variable of reportInvalidEnv for \p Name:
/// "OFFLOADIO_REPORTED_<Name>".
std::string reportedMarkerName(const char *Name);

/// What one read*Env call found, as text.
struct EnvReadTy {
  std::string Name;               ///< The variable.
  std::optional<std::string> Raw; ///< Its value in the environment, if set.
  std::string Used;               ///< The value in force.
  std::string Default;            ///< The default.
  std::string Expected;           ///< The valid values.
  bool Invalid = false;           ///< Set, but refused: Used is the default.
};

/// Records every read*Env call of the calling thread while it lives, so that
/// a caller can report the settings a reader such as IOConfigTy::fromEnv
/// found without repeating that reader's table of names and defaults. Logs
/// nest: the innermost one records.
class EnvReadLogTy {
public:
  /// Start recording this thread's reads.
  EnvReadLogTy();
  /// Stop recording; an enclosing log records again.
  ~EnvReadLogTy();
  EnvReadLogTy(const EnvReadLogTy &) = delete;
  EnvReadLogTy &operator=(const EnvReadLogTy &) = delete;

  /// The reads so far, in the order they happened.
  const std::vector<EnvReadTy> &reads() const { return Reads; }

  /// Whether a log of this thread is recording.
  static bool recording();
  /// Record \p Read in this thread's innermost log; only while recording().
  static void note(EnvReadTy Read);

private:
  EnvReadLogTy *Enclosing;
  std::vector<EnvReadTy> Reads;
};

/// \p N as the shortest exact K/M/G size ("8M", "65K", "100").
std::string formatSizeSetting(uint64_t N);

} // namespace offloadio

#endif // OFFLOADIO_ENVAR_H

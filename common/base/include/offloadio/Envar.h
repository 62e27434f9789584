// SPDX-License-Identifier: Apache-2.0
//
// Typed environment variables. A value that does not parse is reported on
// stderr and replaced by the default: users must never wonder whether a
// setting took effect.
#ifndef OFFLOADIO_ENVAR_H
#define OFFLOADIO_ENVAR_H

#include "offloadio/Error.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace offloadio {

/// Parse a boolean the way libomptarget does: true/yes/on/1 and
/// false/no/off/0, case-insensitively.
std::optional<bool> parseBool(llvm::StringRef Value);

/// Parse a size: decimal digits without a leading zero (0 itself is
/// allowed), then an optional K/M/G suffix of either case (binary
/// multiples), surrounding whitespace allowed. Anything else (0x, octal,
/// KiB, fractions, signs) or a value past UINT64_MAX is nullopt.
std::optional<uint64_t> parseSize(llvm::StringRef Value);

/// Parse a signed integer in decimal, hexadecimal (0x) or octal (0).
std::optional<int64_t> parseInt(llvm::StringRef Value);

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

/// Read one of \p Choices (case-insensitive); returns its index, or
/// \p Default when unset or invalid (reported).
unsigned readChoiceEnv(const char *Name, llvm::ArrayRef<const char *> Choices,
                       unsigned Default);

/// Report an invalid setting on stderr, once per process for each value:
/// the first report sets the marker variable reportedMarkerName(Name) to
/// "<pid>:<value>", and a report that finds that marker prints nothing. The
/// marker is how the plugins loaded in one process, which share no symbols,
/// agree that the value was already reported.
void reportInvalidEnv(const char *Name, llvm::StringRef Value,
                      llvm::StringRef Expected, llvm::StringRef Used);

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

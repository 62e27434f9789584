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

namespace offloadio {

/// Parse a boolean the way libomptarget does: true/yes/on/1 and
/// false/no/off/0, case-insensitively.
std::optional<bool> parseBool(llvm::StringRef Value);

/// Parse an unsigned integer with an optional K/M/G (binary) suffix.
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

} // namespace offloadio

#endif // OFFLOADIO_ENVAR_H

// SPDX-License-Identifier: Apache-2.0
#include "offloadio/Envar.h"
#include "offloadio/StaticTLS.h"
#include "offloadio/Info.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

using namespace offloadio;
using llvm::StringRef;

std::optional<bool> offloadio::parseBool(StringRef Value) {
  std::string Lower = Value.trim().lower();
  if (Lower == "true" || Lower == "yes" || Lower == "on" || Lower == "1")
    return true;
  if (Lower == "false" || Lower == "no" || Lower == "off" || Lower == "0")
    return false;
  return std::nullopt;
}

std::optional<uint64_t> offloadio::parseSize(StringRef Value) {
  StringRef S = Value.trim();
  uint64_t Scale = 1;
  if (!S.empty()) {
    switch (llvm::toLower(S.back())) {
    case 'k':
      Scale = 1ULL << 10;
      break;
    case 'm':
      Scale = 1ULL << 20;
      break;
    case 'g':
      Scale = 1ULL << 30;
      break;
    default:
      break;
    }
    if (Scale != 1)
      S = S.drop_back();
  }
  // Decimal digits only, and no leading zero: "010M" would be 8 MiB to a
  // reader that senses the radix as parseInt does, and 10 MiB to one that
  // does not; neither reading is what every user expects, so it is refused.
  if (S.empty() || !llvm::all_of(S, llvm::isDigit) ||
      (S.size() > 1 && S.front() == '0'))
    return std::nullopt;
  uint64_t N;
  if (S.getAsInteger(10, N) || N > UINT64_MAX / Scale)
    return std::nullopt;
  return N * Scale;
}

std::optional<int64_t> offloadio::parseInt(StringRef Value) {
  int64_t N;
  StringRef S = Value.trim();
  if (S.empty() || S.getAsInteger(0, N))
    return std::nullopt;
  return N;
}

std::optional<std::string> offloadio::getEnv(const char *Name) {
  if (const char *V = std::getenv(Name))
    return std::string(V);
  return std::nullopt;
}

std::string offloadio::reportedMarkerName(const char *Name) {
  return std::string("OFFLOADIO_REPORTED_") + Name;
}

/// Whether the report \p Stamp was printed in this process already, as
/// the variable \p Marker says; if not, marks it printed. The marker is how
/// the plugins loaded in one process, which share no symbols, agree on that.
static bool reportedBefore(const std::string &Marker,
                           const std::string &Stamp) {
  if (auto Seen = getEnv(Marker.c_str()); Seen && *Seen == Stamp)
    return true;
  // The variables are read while libomptarget loads the plugins and
  // initialises devices; a marker that cannot be set (no memory) only
  // costs a repeated warning.
  if (setenv(Marker.c_str(), Stamp.c_str(), 1) != 0)
    llvm::errs() << linePrefix("") << ": warning: setenv(" << Marker
                 << ") failed: " << std::strerror(errno)
                 << "; the warning below may be repeated\n";
  return false;
}

void offloadio::reportInvalidEnv(const char *Name, StringRef Value,
                                 StringRef Expected, StringRef Used) {
  // All three plugins read the plugin-wide variables, and each device reads
  // its own: without a marker one bad setting would be reported once per
  // reader. The plugins share no symbols (only __tgt_rtl* is exported), but
  // they share the environment, whatever the order they are loaded in. The
  // marker holds the pid, so that a child the program execs with this
  // environment still reports the value once itself, and the value, so that
  // a different bad value is reported again.
  std::string Stamp = std::to_string(getpid()) + ":" + Value.str();
  if (reportedBefore(reportedMarkerName(Name), Stamp))
    return;
  llvm::errs() << linePrefix("") << ": warning: ignoring " << Name << "='" << Value
               << "': expected " << Expected << "; using " << Used << "\n";
}

void offloadio::reportDeprecatedEnv(const char *Name,
                                    const char *Replacement) {
  // A marker of its own: a bad value of the old name is reported too.
  if (reportedBefore(std::string("OFFLOADIO_REPORTED_DEPRECATED_") + Name,
                     std::to_string(getpid())))
    return;
  llvm::errs() << linePrefix("") << ": warning: " << Name << " is deprecated; use "
               << Replacement << "\n";
}

namespace {
/// The innermost recording log of each thread. Thread-local because the
/// readers it observes (IOConfigTy::fromEnv and the like) take no observer
/// argument, and another thread's reads belong to another caller.
OFFLOADIO_STATIC_TLS thread_local EnvReadLogTy *ActiveEnvReadLog = nullptr;

/// Record a read of \p Name if this thread is logging.
void noteRead(const char *Name, const std::optional<std::string> &Raw,
              std::string Used, std::string Default, std::string Expected,
              bool Invalid) {
  if (!EnvReadLogTy::recording())
    return;
  EnvReadLogTy::note({Name, Raw, std::move(Used), std::move(Default),
                      std::move(Expected), Invalid});
}

const char *const BoolExpected = "true/false, on/off, yes/no or 1/0";
const char *onOff(bool B) { return B ? "on" : "off"; }
} // namespace

EnvReadLogTy::EnvReadLogTy() : Enclosing(ActiveEnvReadLog) {
  ActiveEnvReadLog = this;
}

EnvReadLogTy::~EnvReadLogTy() { ActiveEnvReadLog = Enclosing; }

bool EnvReadLogTy::recording() { return ActiveEnvReadLog != nullptr; }

void EnvReadLogTy::note(EnvReadTy Read) {
  if (ActiveEnvReadLog)
    ActiveEnvReadLog->Reads.push_back(std::move(Read));
}

std::string offloadio::formatSizeSetting(uint64_t N) {
  static const char Suffixes[] = {'G', 'M', 'K'};
  for (unsigned I = 0; I < 3; ++I) {
    uint64_t Unit = 1ULL << (10 * (3 - I));
    if (N && N % Unit == 0)
      return std::to_string(N / Unit) + Suffixes[I];
  }
  return std::to_string(N);
}

bool offloadio::readBoolEnv(const char *Name, bool Default) {
  auto Raw = getEnv(Name);
  std::optional<bool> B = Raw ? parseBool(*Raw) : std::nullopt;
  bool Invalid = Raw && !B;
  bool Used = B.value_or(Default);
  if (Invalid)
    reportInvalidEnv(Name, *Raw, BoolExpected, Default ? "true" : "false");
  noteRead(Name, Raw, onOff(Used), onOff(Default), BoolExpected, Invalid);
  return Used;
}

uint64_t offloadio::readSizeEnv(const char *Name, uint64_t Default,
                                uint64_t Min, uint64_t Max) {
  auto Raw = getEnv(Name);
  std::optional<uint64_t> N = Raw ? parseSize(*Raw) : std::nullopt;
  bool Valid = N && *N >= Min && *N <= Max;
  bool Invalid = Raw && !Valid;
  uint64_t Used = Valid ? *N : Default;
  // The text is built only when someone reads it.
  auto Expected = [&] {
    return llvm::formatv("a size from {0} to {1} (K/M/G suffixes allowed)",
                         Min, Max)
        .str();
  };
  if (Invalid)
    reportInvalidEnv(Name, *Raw, Expected(), std::to_string(Default));
  if (EnvReadLogTy::recording())
    noteRead(Name, Raw, formatSizeSetting(Used), formatSizeSetting(Default),
             Expected(), Invalid);
  return Used;
}

int64_t offloadio::readIntEnv(const char *Name, int64_t Default, int64_t Min,
                              int64_t Max) {
  auto Raw = getEnv(Name);
  std::optional<int64_t> N = Raw ? parseInt(*Raw) : std::nullopt;
  bool Valid = N && *N >= Min && *N <= Max;
  bool Invalid = Raw && !Valid;
  int64_t Used = Valid ? *N : Default;
  auto Expected = [&] {
    return llvm::formatv("an integer from {0} to {1}", Min, Max).str();
  };
  if (Invalid)
    reportInvalidEnv(Name, *Raw, Expected(), std::to_string(Default));
  if (EnvReadLogTy::recording())
    noteRead(Name, Raw, std::to_string(Used), std::to_string(Default),
             Expected(), Invalid);
  return Used;
}

unsigned offloadio::readChoiceEnv(const char *Name,
                                  llvm::ArrayRef<const char *> Choices,
                                  unsigned Default) {
  auto Raw = getEnv(Name);
  std::optional<unsigned> Index;
  if (Raw) {
    std::string Lower = StringRef(*Raw).trim().lower();
    for (unsigned I = 0; I < Choices.size() && !Index; ++I)
      if (Lower == Choices[I])
        Index = I;
  }
  bool Invalid = Raw && !Index;
  unsigned Used = Index.value_or(Default);
  std::string Expected = "one of";
  for (unsigned I = 0; I < Choices.size(); ++I)
    Expected += std::string(I ? ", " : " ") + Choices[I];
  if (Invalid)
    reportInvalidEnv(Name, *Raw, Expected, Choices[Default]);
  noteRead(Name, Raw, Choices[Used], Choices[Default], Expected, Invalid);
  return Used;
}

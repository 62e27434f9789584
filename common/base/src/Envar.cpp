// SPDX-License-Identifier: Apache-2.0
#include "offloadio/Envar.h"
#include "offloadio/MessagePrefix.h"
#include "offloadio/StaticTLS.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

using namespace offloadio;

namespace {
/// \p S without the whitespace around it (llvm::StringRef::trim's set).
std::string_view trim(std::string_view S) {
  const char *Space = " \t\n\v\f\r";
  size_t Begin = S.find_first_not_of(Space);
  if (Begin == std::string_view::npos)
    return {};
  return S.substr(Begin, S.find_last_not_of(Space) - Begin + 1);
}

/// \p S in ASCII lower case.
std::string lower(std::string_view S) {
  std::string Out(S);
  for (char &C : Out)
    if (C >= 'A' && C <= 'Z')
      C = char(C - 'A' + 'a');
  return Out;
}

/// The value of digit \p C in any radix up to 36, or 36 for none.
unsigned digitValue(char C) {
  if (C >= '0' && C <= '9')
    return unsigned(C - '0');
  if (C >= 'a' && C <= 'z')
    return unsigned(C - 'a' + 10);
  if (C >= 'A' && C <= 'Z')
    return unsigned(C - 'A' + 10);
  return 36;
}

/// All of \p S as an unsigned number in \p Radix; nullopt when it is empty,
/// has another character, or overflows.
std::optional<uint64_t> parseDigits(std::string_view S, unsigned Radix) {
  if (S.empty())
    return std::nullopt;
  uint64_t N = 0;
  for (char C : S) {
    unsigned D = digitValue(C);
    if (D >= Radix || N > (UINT64_MAX - D) / Radix)
      return std::nullopt;
    N = N * Radix + D;
  }
  return N;
}
} // namespace

std::optional<bool> offloadio::parseBool(std::string_view Value) {
  std::string Lower = lower(trim(Value));
  if (Lower == "true" || Lower == "yes" || Lower == "on" || Lower == "1")
    return true;
  if (Lower == "false" || Lower == "no" || Lower == "off" || Lower == "0")
    return false;
  return std::nullopt;
}

std::optional<uint64_t> offloadio::parseSize(std::string_view Value) {
  std::string_view S = trim(Value);
  uint64_t Scale = 1;
  if (!S.empty()) {
    switch (S.back()) {
    case 'k':
    case 'K':
      Scale = 1ULL << 10;
      break;
    case 'm':
    case 'M':
      Scale = 1ULL << 20;
      break;
    case 'g':
    case 'G':
      Scale = 1ULL << 30;
      break;
    default:
      break;
    }
    if (Scale != 1)
      S.remove_suffix(1);
  }
  // Decimal digits only, and no leading zero: "010M" would be 8 MiB to a
  // reader that senses the radix as parseInt does, and 10 MiB to one that
  // does not; neither reading is what every user expects, so it is refused.
  if (S.size() > 1 && S.front() == '0')
    return std::nullopt;
  std::optional<uint64_t> N = parseDigits(S, 10);
  if (!N || *N > UINT64_MAX / Scale)
    return std::nullopt;
  return *N * Scale;
}

std::optional<int64_t> offloadio::parseInt(std::string_view Value) {
  std::string_view S = trim(Value);
  bool Negative = !S.empty() && S.front() == '-';
  if (Negative)
    S.remove_prefix(1);
  // The radix from the prefix: 0x, 0b, 0o, or a 0 before a digit (octal).
  unsigned Radix = 10;
  auto StartsWith = [&](const char *P) { return S.substr(0, 2) == P; };
  if (StartsWith("0x") || StartsWith("0X")) {
    Radix = 16;
    S.remove_prefix(2);
  } else if (StartsWith("0b") || StartsWith("0B")) {
    Radix = 2;
    S.remove_prefix(2);
  } else if (StartsWith("0o")) {
    Radix = 8;
    S.remove_prefix(2);
  } else if (S.size() > 1 && S[0] == '0' && S[1] >= '0' && S[1] <= '9') {
    Radix = 8;
    S.remove_prefix(1);
  }
  std::optional<uint64_t> N = parseDigits(S, Radix);
  if (!N)
    return std::nullopt;
  if (!Negative)
    return *N <= uint64_t(INT64_MAX) ? std::optional<int64_t>(int64_t(*N))
                                     : std::nullopt;
  if (*N > uint64_t(INT64_MAX) + 1)
    return std::nullopt;
  return *N == uint64_t(INT64_MAX) + 1 ? INT64_MIN : -int64_t(*N);
}

std::optional<std::string> offloadio::getEnv(const char *Name) {
  if (const char *V = std::getenv(Name))
    return std::string(V);
  return std::nullopt;
}

std::string offloadio::reportedMarkerName(const char *Name) {
  return std::string("OFFLOADIO_REPORTED_") + Name;
}

/// Print "offload-io[<pid>]: warning: <Text>" on stderr, as one write.
static void warn(const std::string &Text) {
  std::string Line = linePrefix("") + ": warning: " + Text + "\n";
  std::fwrite(Line.data(), 1, Line.size(), stderr);
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
    warn("setenv(" + Marker + ") failed: " + std::strerror(errno) +
         "; the warning below may be repeated");
  return false;
}

void offloadio::reportInvalidEnv(const char *Name, std::string_view Value,
                                 std::string_view Expected,
                                 std::string_view Used) {
  // All three plugins read the plugin-wide variables, and each device reads
  // its own: without a marker one bad setting would be reported once per
  // reader. The plugins share no symbols (only __tgt_rtl* is exported), but
  // they share the environment, whatever the order they are loaded in. The
  // marker holds the pid, so that a child the program execs with this
  // environment still reports the value once itself, and the value, so that
  // a different bad value is reported again.
  std::string Stamp = std::to_string(getpid()) + ":" + std::string(Value);
  if (reportedBefore(reportedMarkerName(Name), Stamp))
    return;
  warn("ignoring " + std::string(Name) + "='" + std::string(Value) +
       "': expected " + std::string(Expected) + "; using " +
       std::string(Used));
}

void offloadio::reportDeprecatedEnv(const char *Name,
                                    const char *Replacement) {
  // A marker of its own: a bad value of the old name is reported too.
  if (reportedBefore(std::string("OFFLOADIO_REPORTED_DEPRECATED_") + Name,
                     std::to_string(getpid())))
    return;
  warn(std::string(Name) + " is deprecated; use " + Replacement);
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
    return "a size from " + std::to_string(Min) + " to " +
           std::to_string(Max) + " (K/M/G suffixes allowed)";
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
    return "an integer from " + std::to_string(Min) + " to " +
           std::to_string(Max);
  };
  if (Invalid)
    reportInvalidEnv(Name, *Raw, Expected(), std::to_string(Default));
  if (EnvReadLogTy::recording())
    noteRead(Name, Raw, std::to_string(Used), std::to_string(Default),
             Expected(), Invalid);
  return Used;
}

unsigned offloadio::readChoiceEnv(const char *Name, ChoiceListTy Choices,
                                  unsigned Default) {
  auto Raw = getEnv(Name);
  std::optional<unsigned> Index;
  if (Raw) {
    std::string Lower = lower(trim(*Raw));
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

const char *offloadio::settingLayerName(SettingLayerTy Layer) {
  switch (Layer) {
  case SettingLayerTy::Plugin:
    return "plugin";
  case SettingLayerTy::Device:
    return "device";
  case SettingLayerTy::IOEngine:
    return "io-engine";
  case SettingLayerTy::Host:
    return "host";
  case SettingLayerTy::CUDA:
    return "cuda";
  case SettingLayerTy::AMDGPU:
    return "amdgpu";
  }
  return "unknown";
}

std::vector<std::string> offloadio::settingChoices(const SettingDeclTy &Decl) {
  std::vector<std::string> Out;
  std::string_view Rest = Decl.Choices;
  while (!Rest.empty()) {
    size_t Comma = Rest.find(',');
    Out.emplace_back(Rest.substr(0, Comma));
    Rest = Comma == std::string_view::npos ? std::string_view()
                                           : Rest.substr(Comma + 1);
  }
  return Out;
}

bool offloadio::readBoolSetting(const SettingDeclTy &D) {
  return readBoolEnv(D.Name, D.Default != 0);
}

int64_t offloadio::readIntSetting(const SettingDeclTy &D,
                                  const SettingBoundsTy &Bounds) {
  return readIntEnv(D.Name, int64_t(Bounds.Default.value_or(D.Default)),
                    int64_t(Bounds.Min.value_or(D.Min)),
                    int64_t(Bounds.Max.value_or(D.Max)));
}

uint64_t offloadio::readSizeSetting(const SettingDeclTy &D,
                                    const SettingBoundsTy &Bounds) {
  return readSizeEnv(D.Name, Bounds.Default.value_or(D.Default),
                     Bounds.Min.value_or(D.Min), Bounds.Max.value_or(D.Max));
}

unsigned offloadio::readChoiceSetting(const SettingDeclTy &D) {
  std::vector<std::string> Names = settingChoices(D);
  std::vector<const char *> Choices;
  for (const std::string &N : Names)
    Choices.push_back(N.c_str());
  return readChoiceEnv(D.Name, Choices, unsigned(D.Default));
}

uint32_t offloadio::readInfoMaskSetting(const SettingDeclTy &D) {
  auto Raw = getEnv(D.Name);
  std::optional<int64_t> N = Raw ? parseInt(*Raw) : std::nullopt;
  bool Invalid = Raw && !N;
  uint32_t Used = N ? uint32_t(*N) : uint32_t(D.Default);
  // libomptarget accepts decimal or hex; -1 means everything.
  if (Invalid)
    reportInvalidEnv(D.Name, *Raw, "an integer", std::to_string(D.Default));
  if (EnvReadLogTy::recording())
    noteRead(D.Name, Raw, std::to_string(Used), std::to_string(D.Default),
             "an integer", Invalid);
  return Used;
}

std::optional<std::string> offloadio::readPathSetting(const SettingDeclTy &D) {
  auto Raw = getEnv(D.Name);
  // Every text names a file; an empty one names none, as unset.
  std::optional<std::string> Used;
  if (Raw && !Raw->empty())
    Used = *Raw;
  if (EnvReadLogTy::recording())
    noteRead(D.Name, Raw, Used.value_or(""), "", "a file name", false);
  return Used;
}

std::string offloadio::readSettingText(const SettingDeclTy &D) {
  switch (D.Kind) {
  case SettingKindTy::Bool:
    return onOff(readBoolSetting(D));
  case SettingKindTy::Int:
    return std::to_string(readIntSetting(D));
  case SettingKindTy::Size:
    return formatSizeSetting(readSizeSetting(D));
  case SettingKindTy::Choice:
    return settingChoices(D)[readChoiceSetting(D)];
  case SettingKindTy::InfoMask:
    return std::to_string(readInfoMaskSetting(D));
  case SettingKindTy::Path:
    return readPathSetting(D).value_or("");
  }
  return "";
}

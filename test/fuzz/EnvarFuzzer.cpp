// SPDX-License-Identifier: Apache-2.0
//
// Fuzzes every parser and reader of Envar.h against a reference parser
// written here from their documentation:
//  - parseBool: true/yes/on/1 or false/no/off/0, any case, surrounding
//    whitespace allowed.
//  - parseInt: an optional '-', then digits in the radix that llvm's
//    getAsInteger senses from the prefix (0x/0X hex, 0b/0B binary, 0o
//    octal, a leading 0 octal, else decimal), within int64_t.
//  - parseSize: decimal digits without a leading zero (0 itself allowed),
//    then at most one K/M/G (any case, binary multiples), within uint64_t.
//  - the readers: the parsed value when it is valid and inside the declared
//    [Min, Max] (for readChoiceEnv: the index of the choice, compared
//    case-insensitively), else the default together with exactly one warning
//    on stderr naming the variable, the value and the default; nothing
//    printed otherwise, and the default without a warning when unset.
// Each input also round-trips values taken from it through their canonical
// spellings (decimal, hex, octal, suffixed, padded with whitespace; sizes
// only decimal, and hex or octal spellings of a size must be refused).
//
// Input: one byte choosing the reader (or the round trips), the text, and
// 24 bytes at the end for the numbers a check needs (range, default,
// whether the variable is set, values to round-trip).
#include "offloadio/Envar.h"

#include "FuzzCheck.h"

#include "llvm/ADT/StringExtras.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <tuple>
#include <unistd.h>

using namespace offloadio;
using llvm::StringRef;

namespace {

constexpr const char *Var = "OFFLOADIO_FUZZ_ENVAR";

//===----------------------------------------------------------------------===//
// The reference parser
//===----------------------------------------------------------------------===//

/// The characters StringRef::trim() removes, which the parsers document as
/// "surrounding whitespace".
bool isSpace(char C) {
  return C == ' ' || C == '\t' || C == '\n' || C == '\v' || C == '\f' ||
         C == '\r';
}

std::string trimmed(const std::string &S) {
  size_t B = 0, E = S.size();
  while (B < E && isSpace(S[B]))
    ++B;
  while (E > B && isSpace(S[E - 1]))
    --E;
  return S.substr(B, E - B);
}

std::string lowered(std::string S) {
  for (char &C : S)
    if (C >= 'A' && C <= 'Z')
      C = char(C - 'A' + 'a');
  return S;
}

std::optional<bool> refBool(const std::string &Text) {
  std::string S = lowered(trimmed(Text));
  if (S == "true" || S == "yes" || S == "on" || S == "1")
    return true;
  if (S == "false" || S == "no" || S == "off" || S == "0")
    return false;
  return std::nullopt;
}

/// Digits of an unsigned number with a radix prefix; the magnitude, or
/// nullopt when malformed or not below 2^64 (as __int128, so that the
/// callers can check their own limits without overflowing).
std::optional<unsigned __int128> refMagnitude(std::string S) {
  unsigned Radix = 10;
  auto StartsWith = [&](const char *P) { return S.rfind(P, 0) == 0; };
  if (StartsWith("0x") || StartsWith("0X")) {
    Radix = 16;
    S.erase(0, 2);
  } else if (StartsWith("0b") || StartsWith("0B")) {
    Radix = 2;
    S.erase(0, 2);
  } else if (StartsWith("0o")) {
    Radix = 8;
    S.erase(0, 2);
  } else if (S.size() > 1 && S[0] == '0' && S[1] >= '0' && S[1] <= '9') {
    Radix = 8;
    S.erase(0, 1);
  }
  if (S.empty())
    return std::nullopt;
  unsigned __int128 Value = 0;
  for (char C : S) {
    unsigned Digit;
    if (C >= '0' && C <= '9')
      Digit = C - '0';
    else if (C >= 'a' && C <= 'z')
      Digit = C - 'a' + 10;
    else if (C >= 'A' && C <= 'Z')
      Digit = C - 'A' + 10;
    else
      return std::nullopt;
    if (Digit >= Radix)
      return std::nullopt;
    Value = Value * Radix + Digit;
    if (Value > UINT64_MAX)
      return std::nullopt;
  }
  return Value;
}

std::optional<uint64_t> refSize(const std::string &Text) {
  std::string S = trimmed(Text);
  unsigned Shift = 0;
  if (!S.empty()) {
    switch (S.back()) {
    case 'k':
    case 'K':
      Shift = 10;
      break;
    case 'm':
    case 'M':
      Shift = 20;
      break;
    case 'g':
    case 'G':
      Shift = 30;
      break;
    default:
      break;
    }
    if (Shift)
      S.pop_back();
  }
  // Decimal only: refMagnitude would take a radix prefix or a leading 0.
  if (S.empty() || (S.size() > 1 && S[0] == '0'))
    return std::nullopt;
  for (char C : S)
    if (C < '0' || C > '9')
      return std::nullopt;
  std::optional<unsigned __int128> N = refMagnitude(S);
  if (!N || (*N << Shift) > UINT64_MAX)
    return std::nullopt;
  return uint64_t(*N << Shift);
}

std::optional<int64_t> refInt(const std::string &Text) {
  std::string S = trimmed(Text);
  bool Negative = !S.empty() && S[0] == '-';
  if (Negative)
    S.erase(0, 1);
  std::optional<unsigned __int128> N = refMagnitude(S);
  if (!N)
    return std::nullopt;
  constexpr unsigned __int128 Limit =
      static_cast<unsigned __int128>(INT64_MAX) + 1;
  if (Negative) {
    if (*N > Limit)
      return std::nullopt;
    return *N == Limit ? INT64_MIN : -int64_t(*N);
  }
  if (*N >= Limit)
    return std::nullopt;
  return int64_t(*N);
}

//===----------------------------------------------------------------------===//
// Running a reader with its stderr captured
//===----------------------------------------------------------------------===//

test::StderrCaptureTy &capture() {
  static test::StderrCaptureTy Capture;
  OFFLOADIO_FUZZ_CHECK(Capture.works(), "cannot capture stderr: {0}",
                       std::strerror(errno));
  return Capture;
}

/// Check the reader's output: one warning naming the variable, the value
/// and \p Used when \p Warn, nothing otherwise.
void checkWarning(const std::string &Out, bool Warn, const std::string &Value,
                  const std::string &Used, const char *Reader) {
  if (!Warn) {
    OFFLOADIO_FUZZ_CHECK(Out.empty(), "{0}('{1}') printed '{2}'", Reader,
                         llvm::StringRef(Value), llvm::StringRef(Out));
    return;
  }
  std::string Want = "offload-io[" + std::to_string(::getpid()) +
                     "]: warning: ignoring " + Var +
                     "='" + Value + "': expected ";
  OFFLOADIO_FUZZ_CHECK(
      StringRef(Out).starts_with(Want) &&
          StringRef(Out).ends_with("; using " + Used + "\n") &&
          llvm::count(Out, '\n') == llvm::count(Value, '\n') + 1,
      "{0}('{1}'): warning '{2}' (default {3})", Reader, llvm::StringRef(Value),
      llvm::StringRef(Out), llvm::StringRef(Used));
}

/// Set the variable, or unset it (rarely) to check that an unset variable
/// gives the default quietly. Returns whether it is set.
bool setVar(FuzzedDataProvider &Input, const std::string &Value) {
  // A value is reported once per process (the marker says it was): each
  // input starts as if none had been.
  unsetenv(reportedMarkerName(Var).c_str());
  if (Input.ConsumeIntegral<uint8_t>() < 4) {
    unsetenv(Var);
    return false;
  }
  // putenv with one buffer of ours rather than setenv: glibc keeps every
  // distinct value ever passed to setenv, which would grow without bound
  // over millions of inputs.
  static std::string Entry;
  Entry = std::string(Var) + "=" + Value;
  OFFLOADIO_FUZZ_CHECK(putenv(Entry.data()) == 0, "putenv failed");
  return true;
}

//===----------------------------------------------------------------------===//
// The checks
//===----------------------------------------------------------------------===//

void fuzzParsers(const std::string &Text) {
  std::optional<bool> B = parseBool(Text), WantB = refBool(Text);
  OFFLOADIO_FUZZ_CHECK(B == WantB, "parseBool('{0}'): {1}, reference {2}",
                       llvm::StringRef(Text), B ? int(*B) : -1,
                       WantB ? int(*WantB) : -1);
  std::optional<uint64_t> S = parseSize(Text), WantS = refSize(Text);
  OFFLOADIO_FUZZ_CHECK(S == WantS, "parseSize('{0}'): {1}, reference {2}",
                       llvm::StringRef(Text), S ? std::to_string(*S) : "none",
                       WantS ? std::to_string(*WantS) : "none");
  std::optional<int64_t> I = parseInt(Text), WantI = refInt(Text);
  OFFLOADIO_FUZZ_CHECK(I == WantI, "parseInt('{0}'): {1}, reference {2}",
                       llvm::StringRef(Text), I ? std::to_string(*I) : "none",
                       WantI ? std::to_string(*WantI) : "none");
}

void fuzzReadBool(FuzzedDataProvider &Input, const std::string &Value) {
  bool Default = Input.ConsumeBool();
  bool Set = setVar(Input, Value);
  std::string Out;
  bool Got = capture().run([&] { return readBoolEnv(Var, Default); }, Out);
  std::optional<bool> Parsed = refBool(Value);
  bool Warn = Set && !Parsed;
  bool Want = Set && Parsed ? *Parsed : Default;
  OFFLOADIO_FUZZ_CHECK(Got == Want, "readBoolEnv('{0}', {1}): {2}",
                       llvm::StringRef(Value), Default, Got);
  checkWarning(Out, Warn, Value, Default ? "true" : "false", "readBoolEnv");
}

/// A range: one the plugins declare, or one from the input.
template <typename T>
std::pair<T, T> pickRange(FuzzedDataProvider &Input,
                          std::initializer_list<std::pair<T, T>> Known) {
  size_t K = Input.ConsumeIntegralInRange<size_t>(0, Known.size());
  if (K < Known.size())
    return Known.begin()[K];
  T A = Input.ConsumeIntegral<T>(), B = Input.ConsumeIntegral<T>();
  return A <= B ? std::make_pair(A, B) : std::make_pair(B, A);
}

void fuzzReadSize(FuzzedDataProvider &Input, const std::string &Value) {
  uint64_t Min, Max;
  std::tie(Min, Max) = pickRange<uint64_t>(Input, {{0, 64 << 10},
                                                   {4096, 1ULL << 30},
                                                   {64 << 10, 1 << 30},
                                                   {0, 1 << 20},
                                                   {0, UINT64_MAX},
                                                   {16, 32}});
  uint64_t Default = Input.ConsumeIntegralInRange<uint64_t>(Min, Max);
  bool Set = setVar(Input, Value);
  std::string Out;
  uint64_t Got =
      capture().run([&] { return readSizeEnv(Var, Default, Min, Max); }, Out);
  std::optional<uint64_t> Parsed = refSize(Value);
  bool Valid = Parsed && *Parsed >= Min && *Parsed <= Max;
  uint64_t Want = Set && Valid ? *Parsed : Default;
  OFFLOADIO_FUZZ_CHECK(Got == Want, "readSizeEnv('{0}', {1}, [{2}, {3}]): {4}",
                       llvm::StringRef(Value), Default, Min, Max, Got);
  OFFLOADIO_FUZZ_CHECK(Got == Default || (Got >= Min && Got <= Max),
                       "readSizeEnv out of range: {0}", Got);
  checkWarning(Out, Set && !Valid, Value, std::to_string(Default),
               "readSizeEnv");
}

void fuzzReadInt(FuzzedDataProvider &Input, const std::string &Value) {
  int64_t Min, Max;
  std::tie(Min, Max) = pickRange<int64_t>(Input, {{1, 256},
                                                  {1, 64},
                                                  {0, INT32_MAX},
                                                  {0, 1024},
                                                  {-10, 10},
                                                  {INT64_MIN, INT64_MAX}});
  int64_t Default = Input.ConsumeIntegralInRange<int64_t>(Min, Max);
  bool Set = setVar(Input, Value);
  std::string Out;
  int64_t Got =
      capture().run([&] { return readIntEnv(Var, Default, Min, Max); }, Out);
  std::optional<int64_t> Parsed = refInt(Value);
  bool Valid = Parsed && *Parsed >= Min && *Parsed <= Max;
  int64_t Want = Set && Valid ? *Parsed : Default;
  OFFLOADIO_FUZZ_CHECK(Got == Want, "readIntEnv('{0}', {1}, [{2}, {3}]): {4}",
                       llvm::StringRef(Value), Default, Min, Max, Got);
  checkWarning(Out, Set && !Valid, Value, std::to_string(Default),
               "readIntEnv");
}

void fuzzReadChoice(FuzzedDataProvider &Input, const std::string &Value) {
  // The lists the plugins use.
  static const char *const Pageable[] = {"auto", "staged", "lock"};
  static const char *const Mapped[] = {
      "off", "on", "mandatory", "false", "true", "0", "1", "no", "yes"};
  static const char *const Paths[] = {"auto", "direct", "fastpath", "staged"};
  static const char *const Single[] = {"only"};
  static const llvm::ArrayRef<const char *> Lists[] = {Pageable, Mapped, Paths,
                                                       Single};
  llvm::ArrayRef<const char *> Choices =
      Lists[Input.ConsumeIntegralInRange<size_t>(0, std::size(Lists) - 1)];
  unsigned Default =
      Input.ConsumeIntegralInRange<unsigned>(0, Choices.size() - 1);
  bool Set = setVar(Input, Value);
  std::string Out;
  unsigned Got =
      capture().run([&] { return readChoiceEnv(Var, Choices, Default); }, Out);
  std::string Key = lowered(trimmed(Value));
  std::optional<unsigned> Parsed;
  for (unsigned I = 0; I < Choices.size() && !Parsed; ++I)
    if (Key == Choices[I])
      Parsed = I;
  unsigned Want = Set && Parsed ? *Parsed : Default;
  OFFLOADIO_FUZZ_CHECK(Got == Want, "readChoiceEnv('{0}', default {1}): {2}",
                       llvm::StringRef(Value), Default, Got);
  checkWarning(Out, Set && !Parsed, Value, Choices[Default], "readChoiceEnv");
}

/// Surround \p S with whitespace chosen by the input.
std::string padded(FuzzedDataProvider &Input, const std::string &S) {
  static const char Spaces[] = {' ', '\t', '\n', '\v', '\f', '\r'};
  std::string Result;
  for (unsigned N = Input.ConsumeIntegralInRange<unsigned>(0, 2); N; --N)
    Result += Spaces[Input.ConsumeIntegralInRange<size_t>(0, 5)];
  Result += S;
  for (unsigned N = Input.ConsumeIntegralInRange<unsigned>(0, 2); N; --N)
    Result += Spaces[Input.ConsumeIntegralInRange<size_t>(0, 5)];
  return Result;
}

/// Canonical spellings of values from the input parse back to the values.
void fuzzRoundTrips(FuzzedDataProvider &Input) {
  uint64_t U = Input.ConsumeIntegral<uint64_t>();
  char Octal[32];
  std::snprintf(Octal, sizeof(Octal), "0%llo", (unsigned long long)U);
  std::string P = padded(Input, std::to_string(U));
  OFFLOADIO_FUZZ_CHECK(parseSize(P) == U, "parseSize('{0}') != {1}",
                       llvm::StringRef(P), U);
  // Sizes are decimal: other radixes are refused, not read as another value.
  std::string Refused[] = {"0x" + llvm::utohexstr(U, /*LowerCase=*/true),
                           "0X" + llvm::utohexstr(U), Octal};
  for (const std::string &S : Refused) {
    P = padded(Input, S);
    OFFLOADIO_FUZZ_CHECK(!parseSize(P), "parseSize('{0}') accepted",
                         llvm::StringRef(P));
  }
  static const char Suffixes[] = {'K', 'M', 'G'};
  for (unsigned I = 0; I < 3; ++I) {
    uint64_t Unit = 1ULL << (10 * (I + 1));
    if (U % Unit)
      continue;
    char Suffix = Input.ConsumeBool() ? Suffixes[I] : char(Suffixes[I] + 32);
    P = padded(Input, std::to_string(U / Unit) + Suffix);
    OFFLOADIO_FUZZ_CHECK(parseSize(P) == U, "parseSize('{0}') != {1}",
                         llvm::StringRef(P), U);
  }

  int64_t N = Input.ConsumeIntegral<int64_t>();
  uint64_t Magnitude = N < 0 ? 0 - uint64_t(N) : uint64_t(N);
  std::string Sign = N < 0 ? "-" : "";
  for (const std::string &S :
       {std::to_string(N), Sign + "0x" + llvm::utohexstr(Magnitude)}) {
    P = padded(Input, S);
    OFFLOADIO_FUZZ_CHECK(parseInt(P) == N, "parseInt('{0}') != {1}",
                         llvm::StringRef(P), N);
  }

  static const char *const Bools[] = {"true",  "yes", "on",  "1",
                                      "false", "no",  "off", "0"};
  size_t K = Input.ConsumeIntegralInRange<size_t>(0, 7);
  std::string Word = Bools[K];
  for (char &C : Word)
    if (Input.ConsumeBool())
      C = llvm::toUpper(C);
  P = padded(Input, Word);
  OFFLOADIO_FUZZ_CHECK(parseBool(P) == (K < 4), "parseBool('{0}')",
                       llvm::StringRef(P));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  if (Size == 0)
    return 0;
  unsigned Mode = Data[0];
  // The last ParamBytes bytes (fewer in a short input) are the numbers a
  // check needs; the text is what lies between them and the mode byte.
  // setenv stops at a NUL, so the readers see the text up to one; the
  // parsers take all of it.
  constexpr size_t ParamBytes = 24;
  size_t NumBytes = std::min(Size - 1, ParamBytes);
  std::string Text(reinterpret_cast<const char *>(Data + 1),
                   Size - 1 - NumBytes);
  FuzzedDataProvider Params(Data + Size - NumBytes, NumBytes);
  std::string Value = Text.substr(0, Text.find('\0'));

  fuzzParsers(Text);
  switch (Mode % 5) {
  case 0:
    fuzzReadBool(Params, Value);
    break;
  case 1:
    fuzzReadSize(Params, Value);
    break;
  case 2:
    fuzzReadInt(Params, Value);
    break;
  case 3:
    fuzzReadChoice(Params, Value);
    break;
  default:
    fuzzRoundTrips(Params);
    break;
  }
  return 0;
}

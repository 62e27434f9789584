// SPDX-License-Identifier: Apache-2.0
//
// Typed environment variables: the parsers on their own, then the readers
// with real setenv/unsetenv. An invalid value must fall back to the default
// and say so on stderr, naming the variable and the value.
#include "offloadio/Envar.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

using namespace offloadio;

namespace {

::testing::AssertionResult contains(const std::string &Text,
                                    const std::string &Needle) {
  if (Text.find(Needle) != std::string::npos)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "'" << Text << "' does not contain '" << Needle << "'";
}

//===----------------------------------------------------------------------===//
// parseBool
//===----------------------------------------------------------------------===//

TEST(EnvarTest, ParseBoolAcceptsEverySpelling) {
  for (const char *S : {"true", "TRUE", "True", "yes", "YES", "on", "On", "1",
                        " true", "yes\t", "  on  "})
    EXPECT_EQ(parseBool(S), std::optional<bool>(true)) << "'" << S << "'";
  for (const char *S :
       {"false", "FALSE", "no", "No", "off", "OFF", "0", "\tfalse\n", " 0 "})
    EXPECT_EQ(parseBool(S), std::optional<bool>(false)) << "'" << S << "'";
}

TEST(EnvarTest, ParseBoolRejectsEverythingElse) {
  for (const char *S : {"", " ", "2", "-1", "00", "01", "t", "f", "y", "n",
                        "tru", "truee", "yes please", "o n", "enable", "0x1"})
    EXPECT_EQ(parseBool(S), std::nullopt) << "'" << S << "'";
}

//===----------------------------------------------------------------------===//
// parseSize
//===----------------------------------------------------------------------===//

TEST(EnvarTest, ParseSizePlainNumbers) {
  EXPECT_EQ(parseSize("0"), std::optional<uint64_t>(0));
  EXPECT_EQ(parseSize("42"), std::optional<uint64_t>(42));
  EXPECT_EQ(parseSize("  8192 "), std::optional<uint64_t>(8192));
  EXPECT_EQ(parseSize("18446744073709551615"),
            std::optional<uint64_t>(UINT64_MAX));
}

TEST(EnvarTest, ParseSizeSuffixesAreBinaryAndCaseInsensitive) {
  EXPECT_EQ(parseSize("1K"), std::optional<uint64_t>(1024));
  EXPECT_EQ(parseSize("1k"), std::optional<uint64_t>(1024));
  EXPECT_EQ(parseSize("64K"), std::optional<uint64_t>(64 * 1024));
  EXPECT_EQ(parseSize("2M"), std::optional<uint64_t>(2ULL << 20));
  EXPECT_EQ(parseSize("2m"), std::optional<uint64_t>(2ULL << 20));
  EXPECT_EQ(parseSize("3G"), std::optional<uint64_t>(3ULL << 30));
  EXPECT_EQ(parseSize("3g"), std::optional<uint64_t>(3ULL << 30));
  EXPECT_EQ(parseSize(" 4k\n"), std::optional<uint64_t>(4096));
  EXPECT_EQ(parseSize("0K"), std::optional<uint64_t>(0));
}

TEST(EnvarTest, ParseSizeIsDecimalOnly) {
  // No radix prefixes, and no leading zero: "010M" is neither 8 MiB (octal,
  // as the integer settings read it) nor silently 10 MiB, but refused.
  for (const char *S :
       {"0x10", "0X10", "0x10K", "0xffffffffffffffff", "010", "010M", "08",
        "00", "00K", "0b1", "0B1", "0o7", "007k", " 010 "})
    EXPECT_EQ(parseSize(S), std::nullopt) << "'" << S << "'";
  EXPECT_EQ(parseSize("0"), std::optional<uint64_t>(0));
  EXPECT_EQ(parseSize("10"), std::optional<uint64_t>(10));
  EXPECT_EQ(parseSize("10M"), std::optional<uint64_t>(10ULL << 20));
  EXPECT_EQ(parseSize("100"), std::optional<uint64_t>(100));
}

TEST(EnvarTest, ParseSizeOverflowIsRejected) {
  EXPECT_EQ(parseSize("18446744073709551616"), std::nullopt);
  EXPECT_EQ(parseSize("99999999999999999999"), std::nullopt);
  // 2^54 K = 2^64: one past the largest value.
  EXPECT_EQ(parseSize("18014398509481984K"), std::nullopt);
  EXPECT_EQ(parseSize("18014398509481983K"),
            std::optional<uint64_t>(18014398509481983ULL << 10));
  // 2^34 G = 2^64.
  EXPECT_EQ(parseSize("17179869184G"), std::nullopt);
  EXPECT_EQ(parseSize("17179869183G"),
            std::optional<uint64_t>(17179869183ULL << 30));
  EXPECT_EQ(parseSize("17592186044416M"), std::nullopt); // 2^44 M = 2^64
}

TEST(EnvarTest, ParseSizeRejectsGarbage) {
  for (const char *S : {"",   "   ", "K",    "k",     "G",   "-1",    "-1K",
                        "+5", "1.5", "1.5K", "12abc", "abc", "1KB",   "1KK",
                        "1T", "1 K", "K1",   "0x",    "0xK", "1_000", "1e3"})
    EXPECT_EQ(parseSize(S), std::nullopt) << "'" << S << "'";
}

//===----------------------------------------------------------------------===//
// parseInt
//===----------------------------------------------------------------------===//

TEST(EnvarTest, ParseIntDecimalHexOctal) {
  EXPECT_EQ(parseInt("0"), std::optional<int64_t>(0));
  EXPECT_EQ(parseInt("-0"), std::optional<int64_t>(0));
  EXPECT_EQ(parseInt("17"), std::optional<int64_t>(17));
  EXPECT_EQ(parseInt("-17"), std::optional<int64_t>(-17));
  EXPECT_EQ(parseInt(" \t42\n"), std::optional<int64_t>(42));
  EXPECT_EQ(parseInt("0x1f"), std::optional<int64_t>(31));
  EXPECT_EQ(parseInt("0X1F"), std::optional<int64_t>(31));
  EXPECT_EQ(parseInt("-0x10"), std::optional<int64_t>(-16));
  EXPECT_EQ(parseInt("010"), std::optional<int64_t>(8));
}

TEST(EnvarTest, ParseIntLimits) {
  EXPECT_EQ(parseInt("9223372036854775807"), std::optional<int64_t>(INT64_MAX));
  EXPECT_EQ(parseInt("-9223372036854775808"),
            std::optional<int64_t>(INT64_MIN));
  EXPECT_EQ(parseInt("0x7fffffffffffffff"), std::optional<int64_t>(INT64_MAX));
  EXPECT_EQ(parseInt("9223372036854775808"), std::nullopt);
  EXPECT_EQ(parseInt("-9223372036854775809"), std::nullopt);
  EXPECT_EQ(parseInt("0x8000000000000000"), std::nullopt);
  EXPECT_EQ(parseInt("99999999999999999999999"), std::nullopt);
}

TEST(EnvarTest, ParseIntRejectsGarbage) {
  for (const char *S : {"", "  ", "-", "--1", "+-1", "1K", "12abc", "abc",
                        "1 2", "1.0", "0x", "08", "0xg", "- 1", "1-"})
    EXPECT_EQ(parseInt(S), std::nullopt) << "'" << S << "'";
}

//===----------------------------------------------------------------------===//
// The readers
//===----------------------------------------------------------------------===//

/// Owns one test variable and makes sure no test leaks it into the next.
class EnvarReadTest : public ::testing::Test {
protected:
  static constexpr const char *Var = "OFFLOADIO_UNITTEST_ENVAR";

  void SetUp() override {
    unsetenv(Var);
    unsetenv(reportedMarkerName(Var).c_str());
  }
  void TearDown() override {
    unsetenv(Var);
    unsetenv(reportedMarkerName(Var).c_str());
  }

  void set(const char *Value) { ASSERT_EQ(setenv(Var, Value, 1), 0); }

  /// Run \p Fn with stderr captured; returns its result and stores the
  /// captured text in Stderr.
  template <typename FnTy> auto captured(FnTy Fn) {
    ::testing::internal::CaptureStderr();
    auto Result = Fn();
    Stderr = ::testing::internal::GetCapturedStderr();
    return Result;
  }

  /// The warning must name the variable and the offending value, so that a
  /// user can find the setting that was ignored.
  void expectWarning(const std::string &Value, const std::string &Used) {
    EXPECT_TRUE(contains(Stderr, "warning"));
    EXPECT_TRUE(contains(Stderr, std::string(Var) + "='" + Value + "'"));
    EXPECT_TRUE(contains(Stderr, "using " + Used));
    // Exactly one line per ignored setting.
    EXPECT_EQ(std::count(Stderr.begin(), Stderr.end(), '\n'), 1) << Stderr;
  }

  std::string Stderr;
};

TEST_F(EnvarReadTest, GetEnv) {
  EXPECT_EQ(getEnv(Var), std::nullopt);
  set("some value");
  EXPECT_EQ(getEnv(Var), std::optional<std::string>("some value"));
  set("");
  // Set but empty is not the same as unset.
  EXPECT_EQ(getEnv(Var), std::optional<std::string>(""));
  unsetenv(Var);
  EXPECT_EQ(getEnv(Var), std::nullopt);
}

TEST_F(EnvarReadTest, BoolUnsetGivesDefaultSilently) {
  EXPECT_TRUE(captured([&] { return readBoolEnv(Var, true); }));
  EXPECT_EQ(Stderr, "");
  EXPECT_FALSE(captured([&] { return readBoolEnv(Var, false); }));
  EXPECT_EQ(Stderr, "");
}

TEST_F(EnvarReadTest, BoolValidValues) {
  set("off");
  EXPECT_FALSE(captured([&] { return readBoolEnv(Var, true); }));
  EXPECT_EQ(Stderr, "");
  set("YES");
  EXPECT_TRUE(captured([&] { return readBoolEnv(Var, false); }));
  EXPECT_EQ(Stderr, "");
}

TEST_F(EnvarReadTest, BoolInvalidFallsBackAndWarns) {
  set("maybe");
  EXPECT_TRUE(captured([&] { return readBoolEnv(Var, true); }));
  expectWarning("maybe", "true");
  set("2");
  EXPECT_FALSE(captured([&] { return readBoolEnv(Var, false); }));
  expectWarning("2", "false");
  // An empty value is a mistake too, not "unset".
  set("");
  EXPECT_TRUE(captured([&] { return readBoolEnv(Var, true); }));
  expectWarning("", "true");
}

TEST_F(EnvarReadTest, SizeValidValues) {
  set("64K");
  EXPECT_EQ(captured([&] { return readSizeEnv(Var, 1, 0, 1 << 20); }),
            64u * 1024);
  EXPECT_EQ(Stderr, "");
  set("256");
  EXPECT_EQ(captured([&] { return readSizeEnv(Var, 1, 0, 1 << 20); }), 256u);
  EXPECT_EQ(Stderr, "");
  // The bounds are inclusive.
  set("16");
  EXPECT_EQ(captured([&] { return readSizeEnv(Var, 1, 16, 32); }), 16u);
  set("32");
  EXPECT_EQ(captured([&] { return readSizeEnv(Var, 1, 16, 32); }), 32u);
  EXPECT_EQ(Stderr, "");
}

TEST_F(EnvarReadTest, SizeUnsetGivesDefault) {
  EXPECT_EQ(captured([&] { return readSizeEnv(Var, 8192, 0, 65536); }), 8192u);
  EXPECT_EQ(Stderr, "");
}

TEST_F(EnvarReadTest, SizeInvalidFallsBackAndWarns) {
  set("lots");
  EXPECT_EQ(captured([&] { return readSizeEnv(Var, 8192, 0, 65536); }), 8192u);
  expectWarning("lots", "8192");
  set("-4K");
  EXPECT_EQ(captured([&] { return readSizeEnv(Var, 8192, 0, 65536); }), 8192u);
  expectWarning("-4K", "8192");
  set("99999999999999999999G");
  EXPECT_EQ(captured([&] { return readSizeEnv(Var, 7, 0, UINT64_MAX); }), 7u);
  expectWarning("99999999999999999999G", "7");
}

TEST_F(EnvarReadTest, SizeInOtherRadixFallsBackAndWarns) {
  set("010M");
  EXPECT_EQ(captured([&] { return readSizeEnv(Var, 4096, 0, 1 << 30); }),
            4096u);
  expectWarning("010M", "4096");
  EXPECT_TRUE(contains(Stderr, "(K/M/G suffixes allowed)")) << Stderr;
  set("0x100");
  EXPECT_EQ(captured([&] { return readSizeEnv(Var, 1, 0, 1 << 20); }), 1u);
  expectWarning("0x100", "1");
}

TEST_F(EnvarReadTest, SizeOutOfRangeFallsBackAndWarns) {
  set("128K");
  EXPECT_EQ(captured([&] { return readSizeEnv(Var, 8192, 0, 65536); }), 8192u);
  expectWarning("128K", "8192");
  // The expected range is part of the message.
  EXPECT_TRUE(contains(Stderr, "65536"));
  set("15");
  EXPECT_EQ(captured([&] { return readSizeEnv(Var, 20, 16, 32); }), 20u);
  expectWarning("15", "20");
  EXPECT_TRUE(contains(Stderr, "16"));
}

TEST_F(EnvarReadTest, IntValidValues) {
  set("-3");
  EXPECT_EQ(captured([&] { return readIntEnv(Var, 0, -10, 10); }), -3);
  EXPECT_EQ(Stderr, "");
  set("0x20");
  EXPECT_EQ(captured([&] { return readIntEnv(Var, 0, 0, 100); }), 32);
  EXPECT_EQ(Stderr, "");
  set(" 7 ");
  EXPECT_EQ(captured([&] { return readIntEnv(Var, 0, 0, 100); }), 7);
  EXPECT_EQ(Stderr, "");
  set("-10");
  EXPECT_EQ(captured([&] { return readIntEnv(Var, 0, -10, 10); }), -10);
  set("10");
  EXPECT_EQ(captured([&] { return readIntEnv(Var, 0, -10, 10); }), 10);
  EXPECT_EQ(Stderr, "");
}

TEST_F(EnvarReadTest, IntUnsetGivesDefault) {
  EXPECT_EQ(captured([&] { return readIntEnv(Var, 4, 1, 64); }), 4);
  EXPECT_EQ(Stderr, "");
}

TEST_F(EnvarReadTest, IntInvalidFallsBackAndWarns) {
  set("four");
  EXPECT_EQ(captured([&] { return readIntEnv(Var, 4, 1, 64); }), 4);
  expectWarning("four", "4");
  set("1K");
  EXPECT_EQ(captured([&] { return readIntEnv(Var, 4, 1, 64); }), 4);
  expectWarning("1K", "4");
  set("9223372036854775808");
  EXPECT_EQ(captured([&] { return readIntEnv(Var, -1, INT64_MIN, INT64_MAX); }),
            -1);
  expectWarning("9223372036854775808", "-1");
}

TEST_F(EnvarReadTest, IntOutOfRangeFallsBackAndWarns) {
  set("65");
  EXPECT_EQ(captured([&] { return readIntEnv(Var, 4, 1, 64); }), 4);
  expectWarning("65", "4");
  EXPECT_TRUE(contains(Stderr, "from 1 to 64"));
  set("-1");
  EXPECT_EQ(captured([&] { return readIntEnv(Var, 4, 0, 64); }), 4);
  expectWarning("-1", "4");
}

TEST_F(EnvarReadTest, ChoiceMatchesCaseInsensitively) {
  const char *Choices[] = {"auto", "staged", "direct"};
  EXPECT_EQ(captured([&] { return readChoiceEnv(Var, Choices, 0); }), 0u);
  EXPECT_EQ(Stderr, "");
  set("direct");
  EXPECT_EQ(captured([&] { return readChoiceEnv(Var, Choices, 0); }), 2u);
  set("STAGED");
  EXPECT_EQ(captured([&] { return readChoiceEnv(Var, Choices, 0); }), 1u);
  set("  Direct ");
  EXPECT_EQ(captured([&] { return readChoiceEnv(Var, Choices, 0); }), 2u);
  EXPECT_EQ(Stderr, "");
}

TEST_F(EnvarReadTest, ChoiceInvalidFallsBackAndWarns) {
  const char *Choices[] = {"auto", "staged", "direct"};
  set("fastest");
  EXPECT_EQ(captured([&] { return readChoiceEnv(Var, Choices, 1); }), 1u);
  expectWarning("fastest", "staged");
  // The message lists what would have been accepted.
  EXPECT_TRUE(contains(Stderr, "auto, staged, direct"));
  set("");
  EXPECT_EQ(captured([&] { return readChoiceEnv(Var, Choices, 2); }), 2u);
  expectWarning("", "direct");
}

TEST_F(EnvarReadTest, InvalidValueIsReportedOncePerProcess) {
  // Every plugin of the process reads the plugin-wide variables; the first
  // reader reports a bad value, the others find its marker and stay quiet.
  set("many");
  EXPECT_EQ(captured([&] { return readIntEnv(Var, 3, 0, 8); }), 3);
  expectWarning("many", "3");
  EXPECT_EQ(captured([&] { return readIntEnv(Var, 3, 0, 8); }), 3);
  EXPECT_EQ(Stderr, "");
  const char *Choices[] = {"off", "on"};
  EXPECT_EQ(captured([&] { return readChoiceEnv(Var, Choices, 0); }), 0u);
  EXPECT_EQ(Stderr, "");
  // A different bad value is news.
  set("lots");
  EXPECT_EQ(captured([&] { return readIntEnv(Var, 3, 0, 8); }), 3);
  expectWarning("lots", "3");
  // A marker inherited from another process (another pid) does not count.
  ASSERT_EQ(setenv(reportedMarkerName(Var).c_str(), "1:lots", 1), 0);
  EXPECT_EQ(captured([&] { return readIntEnv(Var, 3, 0, 8); }), 3);
  expectWarning("lots", "3");
}

//===----------------------------------------------------------------------===//
// EnvReadLogTy: what the readers found, for reporting settings
//===----------------------------------------------------------------------===//

TEST(EnvarTest, FormatSizeSettingUsesTheLargestExactUnit) {
  EXPECT_EQ(formatSizeSetting(0), "0");
  EXPECT_EQ(formatSizeSetting(100), "100");
  EXPECT_EQ(formatSizeSetting(1024), "1K");
  EXPECT_EQ(formatSizeSetting(65 << 10), "65K");
  EXPECT_EQ(formatSizeSetting((8 << 20) + 1024), "8193K");
  EXPECT_EQ(formatSizeSetting(8 << 20), "8M");
  EXPECT_EQ(formatSizeSetting(uint64_t(3) << 30), "3G");
  EXPECT_EQ(formatSizeSetting(uint64_t(1) << 40), "1024G");
}

TEST_F(EnvarReadTest, LogRecordsEveryKindOfRead) {
  EnvReadLogTy Log;
  captured([&] { return readSizeEnv(Var, 8 << 20, 64 << 10, 1 << 30); });
  set("128k");
  captured([&] { return readSizeEnv(Var, 8 << 20, 64 << 10, 1 << 30); });
  set("7");
  captured([&] { return readIntEnv(Var, 2, 1, 64); });
  set("maybe");
  captured([&] { return readBoolEnv(Var, false); });
  expectWarning("maybe", "false");
  const char *Choices[] = {"auto", "direct", "staged"};
  set("Staged");
  captured([&] { return readChoiceEnv(Var, Choices, 0); });

  const std::vector<EnvReadTy> &R = Log.reads();
  ASSERT_EQ(R.size(), 5u);
  for (const EnvReadTy &Read : R)
    EXPECT_EQ(Read.Name, Var);
  // Unset: the default, in force.
  EXPECT_EQ(R[0].Raw, std::nullopt);
  EXPECT_EQ(R[0].Used, "8M");
  EXPECT_EQ(R[0].Default, "8M");
  EXPECT_FALSE(R[0].Invalid);
  EXPECT_TRUE(contains(R[0].Expected, "a size from 65536 to 1073741824"));
  // Valid: the environment's value, normalised; its text kept.
  EXPECT_EQ(R[1].Raw, std::optional<std::string>("128k"));
  EXPECT_EQ(R[1].Used, "128K");
  EXPECT_FALSE(R[1].Invalid);
  EXPECT_EQ(R[2].Used, "7");
  EXPECT_EQ(R[2].Default, "2");
  EXPECT_EQ(R[2].Expected, "an integer from 1 to 64");
  // Invalid: refused, the default in force.
  EXPECT_EQ(R[3].Raw, std::optional<std::string>("maybe"));
  EXPECT_TRUE(R[3].Invalid);
  EXPECT_EQ(R[3].Used, "off");
  EXPECT_EQ(R[3].Default, "off");
  EXPECT_EQ(R[4].Used, "staged");
  EXPECT_EQ(R[4].Default, "auto");
  EXPECT_EQ(R[4].Expected, "one of auto, direct, staged");
}

TEST_F(EnvarReadTest, LogsNestAndStopWithTheirScope) {
  EnvReadLogTy Outer;
  EXPECT_TRUE(EnvReadLogTy::recording());
  readIntEnv(Var, 1, 0, 9);
  {
    EnvReadLogTy Inner;
    readIntEnv(Var, 2, 0, 9);
    readIntEnv(Var, 3, 0, 9);
    ASSERT_EQ(Inner.reads().size(), 2u);
    EXPECT_EQ(Inner.reads()[1].Default, "3");
  }
  readIntEnv(Var, 4, 0, 9);
  ASSERT_EQ(Outer.reads().size(), 2u);
  EXPECT_EQ(Outer.reads()[0].Default, "1");
  EXPECT_EQ(Outer.reads()[1].Default, "4");
}

TEST_F(EnvarReadTest, NoLogNoRecord) {
  EXPECT_FALSE(EnvReadLogTy::recording());
  // Without a log a read is only a read; note() has nowhere to go.
  EnvReadLogTy::note({Var, std::nullopt, "1", "1", "", false});
  EXPECT_EQ(readIntEnv(Var, 5, 0, 9), 5);
  EnvReadLogTy Log;
  EXPECT_TRUE(Log.reads().empty());
}

TEST_F(EnvarReadTest, LogIsPerThread) {
  EnvReadLogTy Log;
  std::thread Other([&] {
    EXPECT_FALSE(EnvReadLogTy::recording());
    readIntEnv(Var, 1, 0, 9);
  });
  Other.join();
  EXPECT_TRUE(Log.reads().empty());
}

} // namespace

// SPDX-License-Identifier: Apache-2.0
//
// The JSON reader of libompx_io: random documents that llvm::json
// wrote read back equal (llvm::json is the model), strings decode, each
// malformed text is refused with what and where, nesting is limited, and a
// document nested a million deep is checked and skipped on a small stack.
#include "JsonReader.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <cmath>
#include <pthread.h>
#include <random>
#include <string>
#include <vector>

using ompxio::JsonFaultTy;
using ompxio::JsonReaderTy;
using KindTy = JsonReaderTy::KindTy;
using llvm::StringRef;

namespace {

/// JsonReaderTy::create as an llvm::Expected, the message as its error.
llvm::Expected<JsonReaderTy> create(StringRef Text, unsigned MaxDepth) {
  JsonFaultTy Fault;
  std::string Message;
  std::optional<JsonReaderTy> Reader = JsonReaderTy::create(
      std::string_view(Text.data(), Text.size()), MaxDepth, Fault, Message);
  if (!Reader)
    return llvm::createStringError(std::make_error_code(std::errc::invalid_argument),
                                   Message);
  return *Reader;
}

/// Reads the value at \p Reader's cursor into a llvm::json::Value.
llvm::json::Value readValue(JsonReaderTy &Reader, StringRef Text) {
  switch (Reader.kind()) {
  case KindTy::Object: {
    uint64_t Count = Reader.count();
    llvm::json::Object Object;
    std::string Key;
    Reader.enterObject();
    while (Reader.nextMember(Key))
      Object[Key] = readValue(Reader, Text);
    EXPECT_EQ(Count, Object.size());
    return Object;
  }
  case KindTy::Array: {
    uint64_t Count = Reader.count();
    llvm::json::Array Array;
    Reader.enterArray();
    while (Reader.nextElement())
      Array.push_back(readValue(Reader, Text));
    EXPECT_EQ(Count, Array.size());
    return Array;
  }
  case KindTy::String: {
    std::string S;
    Reader.readString(S);
    return S;
  }
  case KindTy::Number:
    return *llvm::json::parse(Reader.readNumber());
  case KindTy::Bool:
  case KindTy::Null: {
    size_t Start = Reader.offset();
    Reader.skipValue();
    return *llvm::json::parse(Text.slice(Start, Reader.offset()));
  }
  }
  return nullptr;
}

std::string randomString(std::mt19937_64 &Random) {
  // ASCII, what JSON must escape, and two- to four-byte UTF-8.
  // clang-format off
  static const char *const Pieces[] = {
      "a", "Z", "0", " ", "{", "]", ",", ":", "\"", "\\", "/", "\n", "\t",
      "\x01", "\x1f", "\x7f", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80"};
  // clang-format on
  std::string S;
  for (size_t N = Random() % 8; N > 0; --N)
    S += Pieces[Random() % std::size(Pieces)];
  return S;
}

llvm::json::Value randomValue(std::mt19937_64 &Random, unsigned Depth) {
  switch (Random() % (Depth ? 8 : 6)) {
  case 0:
    return nullptr;
  case 1:
    return Random() % 2 == 0;
  case 2:
    return static_cast<int64_t>(Random());
  case 3:
    return std::ldexp(static_cast<double>(Random() % 2000) - 1000.5,
                      static_cast<int>(Random() % 200) - 100);
  case 4:
    return Random() | 1ull << 63; // Above INT64_MAX: only uint64_t holds it.
  case 5:
    return randomString(Random);
  case 6: {
    llvm::json::Array Array;
    for (size_t N = Random() % 5; N > 0; --N)
      Array.push_back(randomValue(Random, Depth - 1));
    return Array;
  }
  default: {
    llvm::json::Object Object;
    for (size_t N = Random() % 5; N > 0; --N)
      Object[randomString(Random)] = randomValue(Random, Depth - 1);
    return Object;
  }
  }
}

TEST(JsonReaderTest, RandomDocumentsReadBackEqual) {
  std::mt19937_64 Random(27);
  for (int Round = 0; Round < 2000; ++Round) {
    llvm::json::Value Model = randomValue(Random, 6);
    std::string Text;
    llvm::raw_string_ostream OS(Text);
    // Indented or compact, so whitespace falls everywhere JSON allows it.
    OS << llvm::formatv(Round % 2 ? "{0:2}" : "{0}", Model);
    OS.flush();
    llvm::Expected<JsonReaderTy> Reader = create(Text, 64);
    ASSERT_TRUE(static_cast<bool>(Reader))
        << llvm::toString(Reader.takeError()) << "\n"
        << Text;
    JsonReaderTy Copy = *Reader;
    llvm::json::Value Read = readValue(*Reader, Text);
    EXPECT_EQ(Read, Model) << Text
                           << "\nread: " << llvm::formatv("{0}", Read).str();
    EXPECT_EQ(Reader->offset(), Text.size());
    // Skipping the whole value reaches the same end.
    Copy.skipValue();
    EXPECT_EQ(Copy.offset(), Text.size()) << Text;
  }
}

std::string decoded(StringRef Json) {
  llvm::Expected<JsonReaderTy> Reader = create(Json, 4);
  if (!Reader) {
    ADD_FAILURE() << llvm::toString(Reader.takeError());
    return "";
  }
  std::string Out;
  Reader->readString(Out);
  return Out;
}

TEST(JsonReaderTest, StringsDecode) {
  EXPECT_EQ(decoded(R"("\"\\\/\b\f\n\r\t")"), "\"\\/\b\f\n\r\t");
  EXPECT_EQ(decoded(R"("\u0041\u00e9\u20AC")"), "A\xc3\xa9\xe2\x82\xac");
  EXPECT_EQ(decoded(R"("\ud83d\ude00!")"), "\xf0\x9f\x98\x80!");
  EXPECT_EQ(decoded(R"("a\u0000b")"), std::string("a\0b", 3));
  EXPECT_EQ(decoded("\"\xf0\x9f\x98\x80\""), "\xf0\x9f\x98\x80");
  EXPECT_EQ(decoded(R"("")"), "");
}

TEST(JsonReaderTest, MalformedTextIsRefusedWithWhatAndWhere) {
  std::vector<std::pair<StringRef, StringRef>> Cases = {
      {"", "not JSON: a value expected, the text ends at byte 0"},
      {"  ", "not JSON: a value expected, the text ends at byte 2"},
      {"[", "not JSON: a value expected, the text ends at byte 1"},
      {"[1", "not JSON: ',' or ']' expected, the text ends at byte 2"},
      {"{", "not JSON: a member name expected at byte 1"},
      {"{\"a\":1,}", "not JSON: a member name expected at byte 7"},
      {"{\"a\" 1}", "not JSON: ':' expected after a member name at byte 5"},
      {"{1:2}", "not JSON: a member name expected at byte 1"},
      {"[1,]", "not JSON: a value expected, found ']' at byte 3"},
      {"[1 2]", "not JSON: ',' or ']' expected, found '2' at byte 3"},
      {"{\"a\":1]", "not JSON: ',' or '}' expected, found ']' at byte 6"},
      {"1 2", "not JSON: text after the value at byte 2"},
      {"tru", "not JSON: a value expected, found 't' at byte 0"},
      {"nul", "not JSON: a value expected, found 'n' at byte 0"},
      {"True", "not JSON: a value expected, found 'T' at byte 0"},
      {"\"abc", "not JSON: unterminated string at byte 4"},
      {"\"a\x01\"", "not JSON: control character in a string at byte 2"},
      {"\"\\x\"", "not JSON: invalid escape in a string at byte 2"},
      {"\"\\u12G4\"", "not JSON: four hex digits expected after \\u at byte 5"},
      {"\"\\u12", "not JSON: four hex digits expected after \\u at byte 5"},
      {"\"\\udc00\"", "not JSON: unpaired surrogate escape in a string"},
      {"\"\\ud800\"", "not JSON: unpaired surrogate escape in a string"},
      {"\"\\ud800\\n\"", "not JSON: unpaired surrogate escape in a string"},
      {"\"\\ud800\\ud800\"", "not JSON: unpaired surrogate escape in a string"},
      {"01", "not JSON: text after the value at byte 1"},
      {"-", "not JSON: a digit expected in a number at byte 1"},
      {"-a", "not JSON: a digit expected in a number at byte 1"},
      {"1.", "not JSON: a digit expected after '.' in a number at byte 2"},
      {"1e+", "not JSON: a digit expected in a number's exponent at byte 3"},
      {".5", "not JSON: a value expected, found '.' at byte 0"},
      {"+1", "not JSON: a value expected, found '+' at byte 0"},
      {"\xc3\x28", "not UTF-8: invalid byte sequence at byte 0"},
      {"[\"\xed\xa0\x80\"]", "not UTF-8: invalid byte sequence at byte 2"},
      {"\"\xc0\xaf\"", "not UTF-8: invalid byte sequence at byte 1"},
  };
  // Bytes that are not printable are shown in hex.
  Cases.push_back({StringRef("\0", 1), "a value expected, found byte 0x00 at "
                                       "byte 0"});
  Cases.push_back({"[1 \xc3\xa9]", "',' or ']' expected, found byte 0xc3 at "
                                   "byte 3"});
  for (const auto &[Text, Expected] : Cases) {
    llvm::Expected<JsonReaderTy> Reader = create(Text, 8);
    if (Reader) {
      ADD_FAILURE() << "accepted: " << Text.str();
      continue;
    }
    std::string E = llvm::toString(Reader.takeError());
    EXPECT_NE(E.find(Expected.str()), std::string::npos)
        << Text.str() << " -> " << E;
  }
}

TEST(JsonReaderTest, NestingIsLimited) {
  for (StringRef Text : {"[[[]]]", "[[[1]], {\"a\": {}}]", "{\"a\":{\"b\":[]}}",
                         "[[\"[[[[\"]]"}) {
    llvm::Expected<JsonReaderTy> Reader = create(Text, 3);
    EXPECT_TRUE(static_cast<bool>(Reader))
        << Text.str() << ": " << llvm::toString(Reader.takeError());
  }
  for (StringRef Text : {"[[[[]]]]", "[[], [[{}]]]", "{\"a\":{\"b\":[{}]}}",
                         "[[[[", "[[[{\"a\""}) {
    llvm::Expected<JsonReaderTy> Reader = create(Text, 3);
    ASSERT_FALSE(static_cast<bool>(Reader)) << Text.str();
    std::string E = llvm::toString(Reader.takeError());
    EXPECT_NE(E.find("arrays and objects nested more than 3 levels deep at "
                     "byte"),
              std::string::npos)
        << E;
  }
}

/// What a million-deep document does on a thread with a small stack.
struct DeepRunTy {
  std::string Text;
  bool Checked = false;
  size_t SkippedTo = 0;
  uint64_t Count = 0;
  bool Refused = false;
};

void *runDeep(void *Arg) {
  auto *Run = static_cast<DeepRunTy *>(Arg);
  llvm::Expected<JsonReaderTy> Reader = create(Run->Text, ~0u);
  Run->Checked = static_cast<bool>(Reader);
  if (Reader) {
    Run->Count = Reader->count();
    Reader->skipValue();
    Run->SkippedTo = Reader->offset();
  } else {
    llvm::consumeError(Reader.takeError());
  }
  llvm::Expected<JsonReaderTy> Limited = create(Run->Text, 128);
  Run->Refused = !Limited;
  if (!Limited)
    llvm::consumeError(Limited.takeError());
  return nullptr;
}

// Checking, counting and skipping use no stack per level.
TEST(JsonReaderTest, MillionDeepOnASmallStack) {
  const size_t Deep = 1000000;
  DeepRunTy Run;
  for (size_t I = 0; I < Deep; ++I)
    Run.Text += "{\"a\":[";
  Run.Text += "1";
  for (size_t I = 0; I < Deep; ++I)
    Run.Text += "]}";
  pthread_attr_t Attr;
  ASSERT_EQ(pthread_attr_init(&Attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&Attr, 256 << 10), 0);
  pthread_t Thread;
  ASSERT_EQ(pthread_create(&Thread, &Attr, runDeep, &Run), 0);
  ASSERT_EQ(pthread_join(Thread, nullptr), 0);
  pthread_attr_destroy(&Attr);
  EXPECT_TRUE(Run.Checked);
  EXPECT_EQ(Run.Count, 1u);
  EXPECT_EQ(Run.SkippedTo, Run.Text.size());
  EXPECT_TRUE(Run.Refused);
}

TEST(JsonReaderTest, CountAndSkipLeaveTheCursor) {
  std::string Text = R"( {"a": [1, [2, 3], {"b": "]}"}], "c": {}, "d": "x"} )";
  llvm::Expected<JsonReaderTy> Reader = create(Text, 8);
  ASSERT_TRUE(static_cast<bool>(Reader));
  EXPECT_EQ(Reader->count(), 3u);
  Reader->enterObject();
  std::string Key;
  ASSERT_TRUE(Reader->nextMember(Key));
  EXPECT_EQ(Key, "a");
  EXPECT_EQ(Reader->count(), 3u);
  Reader->skipValue();
  ASSERT_TRUE(Reader->nextMember(Key));
  EXPECT_EQ(Key, "c");
  EXPECT_EQ(Reader->kind(), KindTy::Object);
  EXPECT_EQ(Reader->count(), 0u);
  Reader->skipValue();
  ASSERT_TRUE(Reader->nextMember(Key));
  EXPECT_EQ(Key, "d");
  Reader->skipValue();
  EXPECT_FALSE(Reader->nextMember(Key));
}

// The fault kinds that callers turn into errno.
TEST(JsonReaderTest, FaultKinds) {
  JsonFaultTy Fault;
  std::string Message;
  EXPECT_FALSE(JsonReaderTy::create("\xff", 4, Fault, Message).has_value());
  EXPECT_EQ(Fault, JsonFaultTy::NotUTF8);
  EXPECT_FALSE(JsonReaderTy::create("[1,]", 4, Fault, Message).has_value());
  EXPECT_EQ(Fault, JsonFaultTy::NotJSON);
  EXPECT_FALSE(JsonReaderTy::create("[[[[[]]]]]", 4, Fault, Message).has_value());
  EXPECT_EQ(Fault, JsonFaultTy::TooDeep);
  EXPECT_TRUE(JsonReaderTy::create("[[[[]]]]", 4, Fault, Message).has_value());
}

// isUTF8 agrees with llvm::json::isUTF8 on random bytes, biased towards
// lead and continuation bytes, and finds the same first bad byte.
TEST(JsonReaderTest, Utf8CheckAgreesWithLLVM) {
  std::mt19937_64 Random(11);
  static const unsigned char Bytes[] = {0x00, 0x41, 0x7f, 0x80, 0xbf, 0xc0,
                                        0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0,
                                        0xf4, 0xf5, 0xff, 0x90, 0xa0, 0x9f};
  for (int Round = 0; Round < 200000; ++Round) {
    std::string Text;
    for (size_t N = Random() % 6; N > 0; --N)
      Text.push_back(static_cast<char>(Bytes[Random() % std::size(Bytes)]));
    size_t Ours = ~size_t(0), Theirs = ~size_t(0);
    bool Valid = ompxio::isUTF8(Text, Ours);
    ASSERT_EQ(Valid, llvm::json::isUTF8(Text, &Theirs)) << llvm::toHex(Text);
    if (!Valid)
      ASSERT_EQ(Ours, Theirs) << llvm::toHex(Text);
  }
}

} // namespace

// SPDX-License-Identifier: Apache-2.0
//
// The safetensors header reader of libompx_io: every malformed header the
// loader must refuse, each with its errno and a message naming the tensor
// and the problem, and a randomised serialise -> parse round trip against a
// model (the serialiser is this test's, written with llvm::json). The
// sharded checkpoints of an index are tested in SafetensorsIndexTest.cpp.
#include "SafetensorsHeader.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cerrno>
#include <map>
#include <random>
#include <string>

using namespace ompxio::safetensors;
using llvm::StringRef;

namespace {

llvm::Error toError(ErrorTy Err) {
  if (!Err)
    return llvm::Error::success();
  return llvm::createStringError(
      std::error_code(Err.Errno, std::generic_category()), Err.Message);
}

/// parseHeader as an llvm::Expected.
llvm::Expected<HeaderTy> parsed(StringRef Json, uint64_t FileSize) {
  HeaderTy Header;
  if (ErrorTy Err = parseHeader(std::string_view(Json.data(), Json.size()),
                                FileSize, Header))
    return toError(std::move(Err));
  return Header;
}

/// parseHeaderLength as an llvm::Expected.
llvm::Expected<uint64_t> lengthOf(StringRef Prefix, uint64_t FileSize) {
  uint64_t Length;
  if (ErrorTy Err = parseHeaderLength(
          std::string_view(Prefix.data(), Prefix.size()), FileSize, Length))
    return toError(std::move(Err));
  return Length;
}

/// The errno of parsing \p Json as the header of a file whose data section
/// holds 64 bytes (0: accepted).
int parseErrno(StringRef Json) {
  HeaderTy Header;
  return parseHeader(std::string_view(Json.data(), Json.size()),
                     HeaderLengthBytes + Json.size() + 64, Header)
      .Errno;
}

/// The message of \p Result's error; fails the test when there is none.
template <typename T> std::string errorOf(llvm::Expected<T> Result) {
  if (Result) {
    ADD_FAILURE() << "expected an error";
    return "";
  }
  return llvm::toString(Result.takeError());
}

/// Parses \p Json as the header of a file whose data section holds
/// \p DataBytes bytes, and returns the error message.
std::string parseError(StringRef Json, uint64_t DataBytes = 64) {
  return errorOf(parsed(Json, HeaderLengthBytes + Json.size() + DataBytes));
}

/// Lays out \p Tensors back to back from offset 0.
void layOutContiguously(std::vector<TensorInfoTy> &Tensors) {
  uint64_t Offset = 0;
  for (TensorInfoTy &T : Tensors) {
    uint64_t Bytes;
    ASSERT_FALSE(static_cast<bool>(tensorBytes(T.Name, T.DType, T.Shape, Bytes)));
    T.Begin = Offset;
    Offset += Bytes;
    T.End = Offset;
  }
}

/// The first 8 + N bytes of a file for \p Header, the JSON padded with
/// spaces to \p Alignment; sets Header.HeaderLength.
std::string serializeHeader(HeaderTy &Header, uint64_t Alignment) {
  std::string Json;
  llvm::raw_string_ostream OS(Json);
  llvm::json::OStream J(OS);
  J.object([&] {
    if (!Header.Metadata.empty())
      J.attributeObject("__metadata__", [&] {
        for (const auto &KV : Header.Metadata)
          J.attribute(KV.first, KV.second);
      });
    for (const TensorInfoTy &T : Header.Tensors)
      J.attributeObject(T.Name, [&] {
        J.attribute("dtype", std::string(dtypeName(T.DType)));
        J.attributeArray("shape", [&] {
          for (uint64_t Dim : T.Shape)
            J.value(Dim);
        });
        J.attributeArray("data_offsets", [&] {
          J.value(T.Begin);
          J.value(T.End);
        });
      });
  });
  OS.flush();
  uint64_t Unpadded = HeaderLengthBytes + Json.size();
  Json.append(llvm::alignTo(Unpadded, Alignment) - Unpadded, ' ');
  Header.HeaderLength = Json.size();
  char Length[HeaderLengthBytes];
  llvm::support::endian::write64le(Length, Header.HeaderLength);
  return std::string(Length, HeaderLengthBytes) + Json;
}

std::string lengthPrefix(uint64_t Length) {
  char Bytes[HeaderLengthBytes];
  llvm::support::endian::write64le(Bytes, Length);
  return std::string(Bytes, HeaderLengthBytes);
}

TEST(SafetensorsTest, FileShorterThanTheLength) {
  std::string E = errorOf(lengthOf("abc", 3));
  EXPECT_NE(E.find("file of 3 bytes is shorter than the 8-byte header length"),
            std::string::npos)
      << E;
  E = errorOf(lengthOf("", 0));
  EXPECT_NE(E.find("file of 0 bytes"), std::string::npos) << E;
}

TEST(SafetensorsTest, FileShorterThanTheHeader) {
  std::string E = errorOf(lengthOf(lengthPrefix(100), 58));
  EXPECT_NE(E.find("header length 100 is more than the 50 bytes the file "
                   "holds after it"),
            std::string::npos)
      << E;
  EXPECT_EQ(*lengthOf(lengthPrefix(50), 58), 50u);
}

TEST(SafetensorsTest, AbsurdHeaderLength) {
  uint64_t Huge = MaxHeaderLength + 1;
  std::string E = errorOf(lengthOf(lengthPrefix(Huge), ~0ull));
  EXPECT_NE(E.find("over the limit"), std::string::npos) << E;
  E = errorOf(lengthOf(lengthPrefix(~0ull), 1000));
  EXPECT_NE(E.find("over the limit"), std::string::npos) << E;
}

TEST(SafetensorsTest, FileEndsBeforeTheDataSection) {
  std::string E = errorOf(parsed("{}", 9));
  EXPECT_NE(E.find("ends before the data section at offset 10"),
            std::string::npos)
      << E;
}

TEST(SafetensorsTest, NotJsonOrNotAnObject) {
  EXPECT_NE(parseError("{\"a\": ").find("not JSON"), std::string::npos);
  EXPECT_NE(parseError("\x01\x02garbage").find("not JSON"), std::string::npos);
  EXPECT_NE(parseError("[1, 2]").find("not a JSON object"), std::string::npos);
  EXPECT_NE(parseError("42").find("not a JSON object"), std::string::npos);
}

TEST(SafetensorsTest, EntryNotAnObject) {
  std::string E = parseError(R"({"w": [1, 2]})");
  EXPECT_NE(E.find("tensor 'w': entry is not an object"), std::string::npos)
      << E;
}

TEST(SafetensorsTest, MissingFields) {
  EXPECT_NE(parseError(R"({"w": {"shape": [1], "data_offsets": [0, 4]}})")
                .find("tensor 'w': missing field 'dtype'"),
            std::string::npos);
  EXPECT_NE(parseError(R"({"w": {"dtype": "F32", "data_offsets": [0, 4]}})")
                .find("tensor 'w': missing field 'shape'"),
            std::string::npos);
  EXPECT_NE(parseError(R"({"w": {"dtype": "F32", "shape": [1]}})")
                .find("tensor 'w': missing field 'data_offsets'"),
            std::string::npos);
}

TEST(SafetensorsTest, WronglyTypedFields) {
  EXPECT_NE(
      parseError(R"({"w": {"dtype": 4, "shape": [1], "data_offsets": [0, 4]}})")
          .find("tensor 'w': field 'dtype' is not a string"),
      std::string::npos);
  EXPECT_NE(parseError(
                R"({"w": {"dtype": "F32", "shape": 1, "data_offsets": [0, 4]}})")
                .find("tensor 'w': field 'shape' is not an array"),
            std::string::npos);
  EXPECT_NE(parseError(
                R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [4]}})")
                .find("tensor 'w': field 'data_offsets' is not an array of two"),
            std::string::npos);
  EXPECT_NE(
      parseError(
          R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": "0-4"}})")
          .find("tensor 'w': field 'data_offsets' is not an array of two"),
      std::string::npos);
  EXPECT_NE(
      parseError(
          R"({"w": {"dtype": "F32", "shape": ["1"], "data_offsets": [0, 4]}})")
          .find("tensor 'w': shape[0] is not a number"),
      std::string::npos);
  EXPECT_NE(
      parseError(
          R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, null]}})")
          .find("tensor 'w': data_offsets[1] is not a number"),
      std::string::npos);
}

TEST(SafetensorsTest, UnknownDType) {
  std::string E = parseError(
      R"({"w": {"dtype": "F128", "shape": [1], "data_offsets": [0, 16]}})");
  EXPECT_NE(E.find("tensor 'w': unknown dtype 'F128'"), std::string::npos) << E;
}

TEST(SafetensorsTest, BadDimensions) {
  std::string E = parseError(
      R"({"w": {"dtype": "F32", "shape": [2, -3], "data_offsets": [0, 4]}})");
  EXPECT_NE(E.find("tensor 'w': shape[1] is negative (-3)"), std::string::npos)
      << E;
  E = parseError(
      R"({"w": {"dtype": "F32", "shape": [2.5], "data_offsets": [0, 10]}})");
  EXPECT_NE(E.find("tensor 'w': shape[0] is not an integer (2.5"),
            std::string::npos)
      << E;
  // An integral JSON number written as a fraction is an integer.
  EXPECT_TRUE(static_cast<bool>(parsed(
      R"({"w": {"dtype": "F32", "shape": [2.0], "data_offsets": [0, 8]}})",
      1000)));
}

TEST(SafetensorsTest, ShapeOverflow) {
  std::string E = parseError(R"({"w": {"dtype": "F64", "shape": )"
                             R"([4294967296, 4294967296], "data_offsets": [0, 8]}})");
  EXPECT_NE(E.find("tensor 'w': shape's byte size overflows 64 bits"),
            std::string::npos)
      << E;
}

TEST(SafetensorsTest, OffsetsOutsideTheDataSection) {
  std::string E = parseError(
      R"({"w": {"dtype": "F32", "shape": [20], "data_offsets": [0, 80]}})", 64);
  EXPECT_NE(E.find("tensor 'w': data_offsets [0, 80) end outside the data "
                   "section of 64 bytes"),
            std::string::npos)
      << E;
  E = parseError(
      R"({"w": {"dtype": "U8", "shape": [1], "data_offsets": [-1, 0]}})");
  EXPECT_NE(E.find("tensor 'w': data_offsets[0] is negative"), std::string::npos)
      << E;
}

TEST(SafetensorsTest, BeginAfterEnd) {
  std::string E = parseError(
      R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [8, 4]}})");
  EXPECT_NE(E.find("tensor 'w': data_offsets [8, 4): begin > end"),
            std::string::npos)
      << E;
}

TEST(SafetensorsTest, OverlappingTensors) {
  std::string E = parseError(
      R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},)"
      R"( "b": {"dtype": "F32", "shape": [4], "data_offsets": [12, 28]}})");
  EXPECT_NE(E.find("tensor 'b': data_offsets [12, 28) overlap tensor 'a' at "
                   "[0, 16)"),
            std::string::npos)
      << E;
  // A tensor inside a larger one, behind a third that ends earlier.
  E = parseError(
      R"({"big": {"dtype": "U8", "shape": [40], "data_offsets": [0, 40]},)"
      R"( "mid": {"dtype": "U8", "shape": [4], "data_offsets": [4, 8]},)"
      R"( "in": {"dtype": "U8", "shape": [4], "data_offsets": [20, 24]}})");
  EXPECT_NE(E.find("overlap tensor 'big' at [0, 40)"), std::string::npos) << E;
  // Empty tensors own no bytes: they may sit anywhere in the section.
  EXPECT_TRUE(static_cast<bool>(parsed(
      R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},)"
      R"( "e": {"dtype": "F32", "shape": [0, 3], "data_offsets": [8, 8]}})",
      1000)));
}

TEST(SafetensorsTest, LengthNotShapeTimesDTypeSize) {
  std::string E = parseError(
      R"({"w": {"dtype": "BF16", "shape": [3, 2], "data_offsets": [0, 10]}})");
  EXPECT_NE(E.find("tensor 'w': data_offsets [0, 10) hold 10 bytes, but "
                   "shape and dtype BF16 need 12"),
            std::string::npos)
      << E;
}

TEST(SafetensorsTest, BadMetadata) {
  EXPECT_NE(parseError(R"({"__metadata__": [1]})")
                .find("'__metadata__' is not an object"),
            std::string::npos);
  EXPECT_NE(parseError(R"({"__metadata__": {"epoch": 3}})")
                .find("'__metadata__' value of 'epoch' is not a string"),
            std::string::npos);
}

/// \p Count copies of \p Text.
std::string repeated(StringRef Text, size_t Count) {
  std::string Out;
  Out.reserve(Text.size() * Count);
  for (size_t I = 0; I < Count; ++I)
    Out += Text;
  return Out;
}

/// A valid tensor entry of \p DType and \p Shape (a JSON array) at
/// [Begin, End).
std::string entry(StringRef DType, StringRef Shape, uint64_t Begin,
                  uint64_t End) {
  return "{\"dtype\": \"" + DType.str() + "\", \"shape\": " + Shape.str() +
         ", \"data_offsets\": [" + std::to_string(Begin) + ", " +
         std::to_string(End) + "]}";
}

constexpr const char *TooDeep = "arrays and objects nested more than 128 "
                                "levels deep";

// Nesting costs no stack: headers nested 100,000 deep, closed or not, are
// refused with the limit in the message wherever the nesting is.
TEST(SafetensorsTest, DeepArraysAndObjectsAreRefused) {
  const size_t Deep = 100000;
  std::string Arrays = repeated("[", Deep) + repeated("]", Deep);
  std::string Objects = repeated("{\"a\":", Deep) + "1" + repeated("}", Deep);
  const std::string Headers[] = {
      "{\"__metadata__\": " + Arrays + "}",
      "{\"__metadata__\": " + Objects + "}",
      "{\"__metadata__\": " + repeated("[", Deep) + "}",
      Objects,
      Arrays,
      "{\"w\": " + Objects + "}",
      "{\"w\": {\"dtype\": \"U8\", \"shape\": " + Arrays +
          ", \"data_offsets\": [0, 1]}}",
      "{\"w\": {\"extra\": " + Arrays +
          ", \"dtype\": \"U8\", \"shape\": [1], "
          "\"data_offsets\": [0, 1]}}",
  };
  for (const std::string &Json : Headers) {
    std::string E = parseError(Json);
    EXPECT_NE(E.find(TooDeep), std::string::npos) << E.substr(0, 300);
  }
}

// The header is level 1 and a tensor entry level 2: a field the format
// does not define may hold 126 more levels, not 127.
TEST(SafetensorsTest, NestingLimitIsExact) {
  auto WithExtra = [](size_t Levels) {
    return "{\"w\": {\"extra\": " + repeated("[", Levels) +
           repeated("]", Levels) +
           ", \"dtype\": \"U8\", \"shape\": [1], \"data_offsets\": [0, 1]}}";
  };
  std::string Json = WithExtra(126);
  llvm::Expected<HeaderTy> H = parsed(Json, 1000);
  ASSERT_TRUE(static_cast<bool>(H)) << llvm::toString(H.takeError());
  EXPECT_EQ(H->Tensors.size(), 1u);
  std::string E = parseError(WithExtra(127));
  EXPECT_NE(
      E.find(std::string(TooDeep) + " at byte " + std::to_string(16 + 126)),
      std::string::npos)
      << E;
}

// The reference implementation parses every entry: an invalid one is
// refused even when a later entry of the same name is valid.
TEST(SafetensorsTest, InvalidEntryBeforeAValidOneIsRefused) {
  std::string Valid = entry("F32", "[4]", 0, 16);
  std::string E = parseError("{\"w\": " + entry("F128", "[4]", 0, 16) +
                             ", \"w\": " + Valid + "}");
  EXPECT_NE(E.find("tensor 'w': unknown dtype 'F128'"), std::string::npos) << E;
  E = parseError("{\"w\": " + entry("F32", "[4, -1]", 0, 16) +
                 ", \"w\": " + Valid + "}");
  EXPECT_NE(E.find("tensor 'w': shape[1] is negative (-1)"), std::string::npos)
      << E;
  E = parseError(R"({"w": {"dtype": "F32"}, "w": )" + Valid + "}");
  EXPECT_NE(E.find("tensor 'w': missing field 'shape'"), std::string::npos)
      << E;
  // Each entry is checked against the file on its own, too.
  E = parseError("{\"w\": " + entry("F32", "[32]", 0, 128) +
                 ", \"w\": " + Valid + "}");
  EXPECT_NE(E.find("tensor 'w': data_offsets [0, 128) end outside"),
            std::string::npos)
      << E;
  E = parseError("{\"w\": " + entry("F32", "[3]", 0, 16) + ", \"w\": " + Valid +
                 "}");
  EXPECT_NE(E.find("tensor 'w': data_offsets [0, 16) hold 16 bytes"),
            std::string::npos)
      << E;
}

// Of valid entries with the same name the last one describes the tensor
// (the reference implementation reads the header into a map); the entry it
// replaces overlaps nothing.
TEST(SafetensorsTest, LastOfValidDuplicateEntriesWins) {
  std::string Json = "{\"a\": " + entry("F32", "[4]", 0, 16) +
                     ", \"b\": " + entry("U8", "[8]", 16, 24) +
                     ", \"a\": " + entry("I64", "[1]", 24, 32) +
                     ", \"a\": " + entry("F16", "[2, 2]", 0, 8) + "}";
  llvm::Expected<HeaderTy> H =
      parsed(Json, HeaderLengthBytes + Json.size() + 32);
  ASSERT_TRUE(static_cast<bool>(H)) << llvm::toString(H.takeError());
  ASSERT_EQ(H->Tensors.size(), 2u);
  EXPECT_EQ(H->Tensors[0].Name, "a");
  EXPECT_EQ(H->Tensors[0].DType, DTypeTy::F16);
  EXPECT_EQ(H->Tensors[0].Shape, (std::vector<uint64_t>{2, 2}));
  EXPECT_EQ(H->Tensors[0].End, 8u);
  EXPECT_EQ(H->Tensors[1].Name, "b");
  // Exact copies are one tensor.
  Json = "{\"a\": " + entry("F32", "[4]", 0, 16) +
         ", \"a\": " + entry("F32", "[4]", 0, 16) + "}";
  H = parsed(Json, 1000);
  ASSERT_TRUE(static_cast<bool>(H)) << llvm::toString(H.takeError());
  EXPECT_EQ(H->Tensors.size(), 1u);
  // Metadata keys given twice keep the last value.
  Json = R"({"__metadata__": {"k": "1", "j": "0", "k": "2"}})";
  H = parsed(Json, 1000);
  ASSERT_TRUE(static_cast<bool>(H)) << llvm::toString(H.takeError());
  EXPECT_EQ(H->Metadata, (std::vector<std::pair<std::string, std::string>>{
                             {"j", "0"}, {"k", "2"}}));
}

// As in the reference implementation, a field of an entry or the metadata
// object given twice is refused.
TEST(SafetensorsTest, RepeatedFieldsAreRefused) {
  std::string E =
      parseError(R"({"w": {"dtype": "F32", "shape": [1], "dtype": "U8", )"
                 R"("data_offsets": [0, 4]}})");
  EXPECT_NE(E.find("tensor 'w': field 'dtype' appears twice"),
            std::string::npos)
      << E;
  E = parseError(R"({"__metadata__": {}, "__metadata__": {"a": "b"}})");
  EXPECT_NE(E.find("'__metadata__' appears twice"), std::string::npos) << E;
}

TEST(SafetensorsTest, NotUtf8OrUnpairedSurrogates) {
  std::string E = parseError("{\"w\xff\": 1}");
  EXPECT_NE(E.find("not UTF-8: invalid byte sequence at byte 3"),
            std::string::npos)
      << E;
  // An escaped surrogate must pair up: alone it is no character.
  for (StringRef Json :
       {R"({"\ud800": 1})", R"({"\udc00x": 1})", R"({"\ud800\u0041": 1})"}) {
    E = parseError(Json);
    EXPECT_NE(E.find("not JSON: unpaired surrogate escape"), std::string::npos)
        << E;
  }
  // A pair is one character, decoded to UTF-8.
  std::string Json = R"({"\ud83d\ude00": )" + entry("U8", "[1]", 0, 1) + "}";
  llvm::Expected<HeaderTy> H = parsed(Json, 1000);
  ASSERT_TRUE(static_cast<bool>(H)) << llvm::toString(H.takeError());
  EXPECT_EQ(H->Tensors[0].Name, "\xf0\x9f\x98\x80");
}

// Numbers follow the JSON grammar; integers beyond 64 bits are refused by
// what they are.
TEST(SafetensorsTest, NumbersOutsideTheGrammarOrRange) {
  for (StringRef Dim : {"01", "1.", "+1", ".5", "1e", "-", "0x10"}) {
    std::string E = parseError("{\"w\": {\"dtype\": \"U8\", \"shape\": [" +
                               Dim.str() + "], \"data_offsets\": [0, 1]}}");
    EXPECT_NE(E.find("not JSON"), std::string::npos) << Dim.str() << ": " << E;
  }
  std::string E =
      parseError(R"({"w": {"dtype": "U8", "shape": [18446744073709551616], )"
                 R"("data_offsets": [0, 1]}})");
  EXPECT_NE(E.find("tensor 'w': shape[0] does not fit 64 bits "
                   "(18446744073709551616)"),
            std::string::npos)
      << E;
  E = parseError(R"({"w": {"dtype": "U8", "shape": [1], )"
                 R"("data_offsets": [0, 1e300]}})");
  EXPECT_NE(E.find("tensor 'w': data_offsets[1] does not fit 64 bits (1e300)"),
            std::string::npos)
      << E;
  // The largest offset is an offset, and outside any real data section.
  E = parseError(R"({"w": {"dtype": "U8", "shape": [1], )"
                 R"("data_offsets": [18446744073709551614, )"
                 R"(18446744073709551615]}})");
  EXPECT_NE(E.find("end outside the data section"), std::string::npos) << E;
  // Written with an exponent, an integer is an integer.
  llvm::Expected<HeaderTy> H = parsed(
      R"({"w": {"dtype": "U8", "shape": [1e3], "data_offsets": [0, 1E3]}})",
      2000);
  ASSERT_TRUE(static_cast<bool>(H)) << llvm::toString(H.takeError());
  EXPECT_EQ(H->Tensors[0].Shape, std::vector<uint64_t>{1000});
}

// What the file says is shown cut to a bounded length, control characters
// escaped.
TEST(SafetensorsTest, MessagesShowNamesBounded) {
  std::string Long(1000000, 'n');
  std::string E =
      parseError("{\"" + Long + "\": " + entry("F128", "[1]", 0, 1) + "}");
  EXPECT_LT(E.size(), 400u);
  EXPECT_NE(E.find("nnn... (1000000 bytes)': unknown dtype 'F128'"),
            std::string::npos)
      << E;
  E = parseError(R"({"a\u001b[2J": )" + entry("F128", "[1]", 0, 1) + "}");
  EXPECT_NE(E.find("tensor 'a\\x1b[2J': unknown dtype"), std::string::npos)
      << E;
  E = parseError(R"({"w": {"dtype": "U8", "shape": [)" +
                 std::string(100000, '9') + R"(], "data_offsets": [0, 1]}})");
  EXPECT_LT(E.size(), 400u);
  EXPECT_NE(E.find("shape[0] does not fit 64 bits (999"), std::string::npos)
      << E.substr(0, 400);
}

// Parsing keeps at most ParseBytesPerHeaderByte bytes per header byte:
// headers dense in what a parser must store are refused; real ones are not.
TEST(SafetensorsTest, ParsingMemoryIsBounded) {
  const char *TooMuch = "needs more than";
  std::string E =
      parseError("{\"w\": {\"dtype\": \"U8\", \"shape\": [1" +
                 repeated(",1", 1 << 20) + "], \"data_offsets\": [0, 1]}}");
  EXPECT_NE(E.find(TooMuch), std::string::npos) << E;
  std::string Metadata = "{\"__metadata__\": {\"k\": \"\"";
  for (int I = 0; I < 300000; ++I)
    Metadata += ",\"" + std::to_string(I) + "\":\"\"";
  E = parseError(Metadata + "}}");
  EXPECT_NE(E.find(TooMuch), std::string::npos) << E;
  // 100,000 small tensors, back to back.
  std::string Json = "{";
  for (int I = 0; I < 100000; ++I)
    Json += (I ? ",\"" : "\"") + std::to_string(I) +
            "\":" + entry("U8", "[1]", I, I + 1);
  Json += "}";
  llvm::Expected<HeaderTy> H = parsed(Json, Json.size() + 100008);
  ASSERT_TRUE(static_cast<bool>(H)) << llvm::toString(H.takeError());
  EXPECT_EQ(H->Tensors.size(), 100000u);
}

TEST(SafetensorsTest, DTypeNamesRoundTrip) {
  for (StringRef Name : {"BOOL", "U8", "I8", "F8_E4M3", "F8_E5M2", "U16", "I16",
                         "F16", "BF16", "U32", "I32", "F32", "U64", "I64",
                         "F64"}) {
    std::optional<DTypeTy> D = dtypeFromName(Name);
    ASSERT_TRUE(D.has_value()) << Name.str();
    EXPECT_EQ(std::string(dtypeName(*D)), Name.str());
  }
  EXPECT_EQ(dtypeSize(DTypeTy::BF16), 2u);
  EXPECT_EQ(dtypeSize(DTypeTy::F64), 8u);
  EXPECT_FALSE(dtypeFromName("f32").has_value());
}

// Every dtype of the format, by its public number: name and size.
TEST(SafetensorsTest, EveryDTypeByPublicNumber) {
  struct {
    int Number;
    const char *Name;
    uint64_t Size;
  } const Table[] = {
      {OMPX_SAFETENSORS_BOOL, "BOOL", 1},  {OMPX_SAFETENSORS_U8, "U8", 1},
      {OMPX_SAFETENSORS_I8, "I8", 1},      {OMPX_SAFETENSORS_F8_E4M3, "F8_E4M3", 1},
      {OMPX_SAFETENSORS_F8_E5M2, "F8_E5M2", 1}, {OMPX_SAFETENSORS_I16, "I16", 2},
      {OMPX_SAFETENSORS_U16, "U16", 2},    {OMPX_SAFETENSORS_F16, "F16", 2},
      {OMPX_SAFETENSORS_BF16, "BF16", 2},  {OMPX_SAFETENSORS_I32, "I32", 4},
      {OMPX_SAFETENSORS_U32, "U32", 4},    {OMPX_SAFETENSORS_F32, "F32", 4},
      {OMPX_SAFETENSORS_F64, "F64", 8},    {OMPX_SAFETENSORS_I64, "I64", 8},
      {OMPX_SAFETENSORS_U64, "U64", 8},
  };
  ASSERT_EQ(std::size(Table), size_t(OMPX_SAFETENSORS_NUM_DTYPES));
  for (const auto &Row : Table) {
    std::optional<DTypeTy> D = dtypeFromNumber(Row.Number);
    ASSERT_TRUE(D.has_value()) << Row.Name;
    EXPECT_EQ(std::string(dtypeName(*D)), Row.Name);
    EXPECT_EQ(dtypeSize(*D), Row.Size) << Row.Name;
    EXPECT_EQ(dtypeFromName(Row.Name), D) << Row.Name;
    // A header of each dtype parses, with the byte size of its shape.
    std::string Json = std::string(R"({"t": {"dtype": ")") + Row.Name +
                       R"(", "shape": [2, 3], "data_offsets": [0, )" +
                       std::to_string(6 * Row.Size) + "]}}";
    llvm::Expected<HeaderTy> H = parsed(Json, HeaderLengthBytes + Json.size() + 64);
    ASSERT_TRUE(static_cast<bool>(H)) << llvm::toString(H.takeError());
    EXPECT_EQ(H->Tensors[0].DType, *D);
  }
  EXPECT_FALSE(dtypeFromNumber(-1).has_value());
  EXPECT_FALSE(dtypeFromNumber(OMPX_SAFETENSORS_NUM_DTYPES).has_value());
}

// Malformed content is EINVAL; what is over a limit (length, depth, 64
// bits, parse memory) is EOVERFLOW.
TEST(SafetensorsTest, ErrnoOfEachKind) {
  struct {
    const char *Json;
    int Errno;
  } const Table[] = {
      {"{}", 0},
      {"[1]", EINVAL},
      {"{\"a\": ", EINVAL},
      {R"({"w": {"dtype": "X", "shape": [], "data_offsets": [0, 0]}})", EINVAL},
      {R"({"w": {"dtype": "U8", "shape": [1], "data_offsets": [0, 2]}})", EINVAL},
      {R"({"w": {"dtype": "U8", "shape": [-1], "data_offsets": [0, 1]}})", EINVAL},
      {R"({"w": {"dtype": "U8", "shape": [1], "data_offsets": [0, 65]}})", EINVAL},
      {R"({"w": {"dtype": "U8", "shape": [18446744073709551616], "data_offsets": [0, 1]}})", EOVERFLOW},
      {R"({"w": {"dtype": "F64", "shape": [4294967296, 4294967296], "data_offsets": [0, 1]}})", EOVERFLOW},
      {R"({"__metadata__": {"a": 1}})", EINVAL},
  };
  for (const auto &Row : Table)
    EXPECT_EQ(parseErrno(Row.Json), Row.Errno) << Row.Json;
  std::string Deep(MaxHeaderDepth + 1, '[');
  Deep += std::string(MaxHeaderDepth + 1, ']');
  EXPECT_EQ(parseErrno(Deep), EOVERFLOW);
  char Prefix[HeaderLengthBytes];
  llvm::support::endian::write64le(Prefix, MaxHeaderLength + 1);
  uint64_t Length;
  EXPECT_EQ(parseHeaderLength(std::string_view(Prefix, sizeof(Prefix)), ~0ull,
                              Length)
                .Errno,
            EOVERFLOW);
  EXPECT_EQ(parseHeaderLength("abc", 3, Length).Errno, EINVAL);
}

// Hostile headers: random bytes changed, inserted or cut in a valid
// header are either accepted with every invariant holding, or refused
// with EINVAL or EOVERFLOW and a message; nothing else happens.
TEST(SafetensorsTest, RandomlyDamagedHeaders) {
  const std::string Valid =
      R"({"__metadata__": {"format": "pt"}, "a": {"dtype": "BF16", "shape": [2, 3], "data_offsets": [0, 12]}, )"
      R"("b": {"dtype": "F8_E5M2", "shape": [4], "data_offsets": [12, 16]}, "c": {"dtype": "U64", "shape": [], "data_offsets": [16, 24]}})";
  const char Alphabet[] = "{}[]\",:0123456789-.eE abcdtypshaeofF8UIB_\\u\x80\xff";
  std::mt19937_64 Random(7);
  unsigned Accepted = 0;
  for (int Round = 0; Round < 20000; ++Round) {
    std::string Json = Valid;
    for (int Edits = 1 + Random() % 4; Edits > 0; --Edits) {
      size_t At = Random() % (Json.size() + 1);
      char C = Alphabet[Random() % (sizeof(Alphabet) - 1)];
      switch (Random() % 3) {
      case 0:
        if (At < Json.size())
          Json[At] = C;
        break;
      case 1:
        Json.insert(Json.begin() + At, C);
        break;
      default:
        Json.erase(At, 1 + Random() % 8);
        break;
      }
    }
    uint64_t FileSize = HeaderLengthBytes + Json.size() + Random() % 40;
    HeaderTy H;
    ErrorTy Err = parseHeader(Json, FileSize, H);
    if (Err) {
      EXPECT_TRUE(Err.Errno == EINVAL || Err.Errno == EOVERFLOW) << Json;
      EXPECT_NE(Err.Message.find("safetensors header: "), std::string::npos);
      continue;
    }
    ++Accepted;
    uint64_t DataBytes = FileSize - H.dataOffset();
    uint64_t FurthestEnd = 0;
    for (const TensorInfoTy &T : H.Tensors) {
      uint64_t Bytes;
      ASSERT_FALSE(static_cast<bool>(tensorBytes(T.Name, T.DType, T.Shape, Bytes)));
      EXPECT_EQ(Bytes, T.bytes()) << Json;
      EXPECT_LE(T.End, DataBytes) << Json;
      if (T.bytes()) {
        EXPECT_GE(T.Begin, FurthestEnd) << Json;
        FurthestEnd = T.End;
      }
    }
  }
  // Some edits (whitespace, a metadata value) keep the header valid.
  EXPECT_GT(Accepted, 0u);
}

/// The model: what a reader must find for each tensor, by name.
struct ModelTensorTy {
  DTypeTy DType;
  std::vector<uint64_t> Shape;
  uint64_t Bytes;
};

TEST(SafetensorsTest, RandomRoundTripAgainstModel) {
  std::mt19937_64 Random(20240616);
  const DTypeTy DTypes[] = {DTypeTy::BOOL, DTypeTy::U8,  DTypeTy::F16,
                            DTypeTy::BF16, DTypeTy::I32, DTypeTy::F32,
                            DTypeTy::I64,  DTypeTy::F64, DTypeTy::F8_E4M3};
  const uint64_t Alignments[] = {8, 64, 4096};
  for (int Round = 0; Round < 300; ++Round) {
    HeaderTy Header;
    std::map<std::string, ModelTensorTy> Model;
    std::map<std::string, std::string> ModelMetadata;
    size_t Count = Random() % 40;
    for (size_t I = 0; I < Count; ++I) {
      TensorInfoTy T;
      // Names with characters JSON must escape, and a name per index.
      T.Name = "t" + std::to_string(I) + (Random() % 4 ? "" : "\"\\/\n\t\xc3\xa9");
      T.DType = DTypes[Random() % std::size(DTypes)];
      size_t Rank = Random() % 4;
      uint64_t Bytes = dtypeSize(T.DType);
      for (size_t R = 0; R < Rank; ++R) {
        T.Shape.push_back(Random() % 9 == 0 ? 0 : 1 + Random() % 17);
        Bytes *= T.Shape.back();
      }
      Model[T.Name] = {T.DType, T.Shape, Bytes};
      Header.Tensors.push_back(std::move(T));
    }
    std::shuffle(Header.Tensors.begin(), Header.Tensors.end(), Random);
    if (Random() % 2) {
      ModelMetadata["format"] = "pt";
      ModelMetadata["seed \"" + std::to_string(Round) + "\""] =
          std::to_string(Random());
      for (const auto &KV : ModelMetadata)
        Header.Metadata.push_back(KV);
    }
    layOutContiguously(Header.Tensors);
    uint64_t Alignment = Alignments[Random() % std::size(Alignments)];
    std::string Prefix = serializeHeader(Header, Alignment);
    ASSERT_EQ(Prefix.size() % Alignment, 0u);
    ASSERT_EQ(Prefix.size(), Header.dataOffset());

    uint64_t FileSize = Prefix.size() + Header.dataBytes() + Random() % 3;
    llvm::Expected<uint64_t> Length = lengthOf(Prefix, FileSize);
    ASSERT_TRUE(static_cast<bool>(Length)) << llvm::toString(Length.takeError());
    ASSERT_EQ(*Length, Prefix.size() - HeaderLengthBytes);
    llvm::Expected<HeaderTy> Parsed = parsed(
        StringRef(Prefix).substr(HeaderLengthBytes, *Length), FileSize);
    ASSERT_TRUE(static_cast<bool>(Parsed)) << llvm::toString(Parsed.takeError());

    ASSERT_EQ(Parsed->Tensors.size(), Model.size());
    uint64_t Previous = 0;
    uint64_t Total = 0;
    for (const TensorInfoTy &T : Parsed->Tensors) {
      auto It = Model.find(T.Name);
      ASSERT_NE(It, Model.end()) << T.Name;
      EXPECT_EQ(T.DType, It->second.DType) << T.Name;
      EXPECT_EQ(T.Shape, It->second.Shape) << T.Name;
      EXPECT_EQ(T.bytes(), It->second.Bytes) << T.Name;
      // In file order, back to back.
      EXPECT_GE(T.Begin, Previous) << T.Name;
      Previous = T.Begin;
      Total += T.bytes();
    }
    EXPECT_EQ(Parsed->dataBytes(), Total);
    EXPECT_EQ(Parsed->dataOffset(), Header.dataOffset());
    std::map<std::string, std::string> GotMetadata(Parsed->Metadata.begin(),
                                                   Parsed->Metadata.end());
    EXPECT_EQ(GotMetadata, ModelMetadata);

    // A data section one byte short of the last tensor is refused.
    if (Header.dataBytes() > 0) {
      std::string E = errorOf(parsed(
          StringRef(Prefix).substr(HeaderLengthBytes),
          Prefix.size() + Header.dataBytes() - 1));
      EXPECT_NE(E.find("end outside the data section"), std::string::npos) << E;
    }
  }
}

} // namespace

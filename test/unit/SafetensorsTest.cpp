// SPDX-License-Identifier: Apache-2.0
//
// The safetensors header of examples/checkpoint: every malformed header the
// loader must refuse, each with a message naming the tensor and the
// problem, and a randomised serialise -> parse round trip against a model.
#include "Safetensors.h"

#include "llvm/Support/Endian.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <map>
#include <random>
#include <string>

using namespace offloadio::safetensors;
using llvm::StringRef;

namespace {

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
  return errorOf(parseHeader(Json, HeaderLengthBytes + Json.size() + DataBytes));
}

std::string lengthPrefix(uint64_t Length) {
  char Bytes[HeaderLengthBytes];
  llvm::support::endian::write64le(Bytes, Length);
  return std::string(Bytes, HeaderLengthBytes);
}

TEST(SafetensorsTest, FileShorterThanTheLength) {
  std::string E = errorOf(parseHeaderLength("abc", 3));
  EXPECT_NE(E.find("file of 3 bytes is shorter than the 8-byte header length"),
            std::string::npos)
      << E;
  E = errorOf(parseHeaderLength("", 0));
  EXPECT_NE(E.find("file of 0 bytes"), std::string::npos) << E;
}

TEST(SafetensorsTest, FileShorterThanTheHeader) {
  std::string E = errorOf(parseHeaderLength(lengthPrefix(100), 58));
  EXPECT_NE(E.find("header length 100 is more than the 50 bytes the file "
                   "holds after it"),
            std::string::npos)
      << E;
  EXPECT_EQ(*parseHeaderLength(lengthPrefix(50), 58), 50u);
}

TEST(SafetensorsTest, AbsurdHeaderLength) {
  uint64_t Huge = MaxHeaderLength + 1;
  std::string E = errorOf(parseHeaderLength(lengthPrefix(Huge), ~0ull));
  EXPECT_NE(E.find("over the limit"), std::string::npos) << E;
  E = errorOf(parseHeaderLength(lengthPrefix(~0ull), 1000));
  EXPECT_NE(E.find("over the limit"), std::string::npos) << E;
}

TEST(SafetensorsTest, FileEndsBeforeTheDataSection) {
  std::string E = errorOf(parseHeader("{}", 9));
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
  EXPECT_TRUE(static_cast<bool>(parseHeader(
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
  EXPECT_TRUE(static_cast<bool>(parseHeader(
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

TEST(SafetensorsTest, DTypeNamesRoundTrip) {
  for (StringRef Name : {"BOOL", "U8", "I8", "F8_E4M3", "F8_E5M2", "U16", "I16",
                         "F16", "BF16", "U32", "I32", "F32", "U64", "I64",
                         "F64"}) {
    std::optional<DTypeTy> D = dtypeFromName(Name);
    ASSERT_TRUE(D.has_value()) << Name.str();
    EXPECT_EQ(dtypeName(*D), Name);
  }
  EXPECT_EQ(dtypeSize(DTypeTy::BF16), 2u);
  EXPECT_EQ(dtypeSize(DTypeTy::F64), 8u);
  EXPECT_FALSE(dtypeFromName("f32").has_value());
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
    ASSERT_FALSE(static_cast<bool>(layOutContiguously(Header.Tensors)));
    uint64_t Alignment = Alignments[Random() % std::size(Alignments)];
    std::string Prefix = serializeHeader(Header, Alignment);
    ASSERT_EQ(Prefix.size() % Alignment, 0u);
    ASSERT_EQ(Prefix.size(), Header.dataOffset());

    uint64_t FileSize = Prefix.size() + Header.dataBytes() + Random() % 3;
    llvm::Expected<uint64_t> Length = parseHeaderLength(Prefix, FileSize);
    ASSERT_TRUE(static_cast<bool>(Length)) << llvm::toString(Length.takeError());
    ASSERT_EQ(*Length, Prefix.size() - HeaderLengthBytes);
    llvm::Expected<HeaderTy> Parsed = parseHeader(
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
      std::string E = errorOf(parseHeader(
          StringRef(Prefix).substr(HeaderLengthBytes),
          Prefix.size() + Header.dataBytes() - 1));
      EXPECT_NE(E.find("end outside the data section"), std::string::npos) << E;
    }
  }
}

} // namespace

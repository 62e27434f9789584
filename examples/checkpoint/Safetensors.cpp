// SPDX-License-Identifier: Apache-2.0
#include "Safetensors.h"
#include "JsonReader.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <sys/stat.h>
#include <unistd.h>

namespace offloadio {
namespace safetensors {

using llvm::Error;
using llvm::Expected;
using llvm::StringRef;

namespace {

struct DTypeEntryTy {
  DTypeTy DType;
  llvm::StringLiteral Name;
  uint64_t Size;
};

constexpr DTypeEntryTy DTypeTable[] = {
    {DTypeTy::BOOL, "BOOL", 1},       {DTypeTy::U8, "U8", 1},
    {DTypeTy::I8, "I8", 1},           {DTypeTy::F8_E4M3, "F8_E4M3", 1},
    {DTypeTy::F8_E5M2, "F8_E5M2", 1}, {DTypeTy::U16, "U16", 2},
    {DTypeTy::I16, "I16", 2},         {DTypeTy::F16, "F16", 2},
    {DTypeTy::BF16, "BF16", 2},       {DTypeTy::U32, "U32", 4},
    {DTypeTy::I32, "I32", 4},         {DTypeTy::F32, "F32", 4},
    {DTypeTy::U64, "U64", 8},         {DTypeTy::I64, "I64", 8},
    {DTypeTy::F64, "F64", 8},
};

const DTypeEntryTy &dtypeEntry(DTypeTy DType) {
  for (const DTypeEntryTy &E : DTypeTable)
    if (E.DType == DType)
      return E;
  llvm_unreachable("every DTypeTy has a table entry");
}

/// \p Text from the file as a message shows it: control characters
/// escaped, and cut (at a character boundary) after MaxShownBytes, with its
/// length, as a name or a number may be as long as the header.
std::string shownText(StringRef Text) {
  constexpr size_t MaxShownBytes = 200;
  size_t Cut = Text.size();
  if (Cut > MaxShownBytes) {
    Cut = MaxShownBytes;
    while (Cut > 0 && (static_cast<unsigned char>(Text[Cut]) & 0xC0) == 0x80)
      --Cut;
  }
  std::string Shown;
  llvm::raw_string_ostream OS(Shown);
  for (unsigned char C : Text.take_front(Cut)) {
    if (C < 0x20 || C == 0x7F)
      OS << llvm::format("\\x%02x", C);
    else
      OS << C;
  }
  if (Cut < Text.size())
    OS << "... (" << Text.size() << " bytes)";
  return OS.str();
}

Error headerError(const llvm::Twine &Message) {
  return llvm::createStringError(std::make_error_code(std::errc::invalid_argument),
                                 "safetensors header: " + Message.str());
}

Error tensorError(StringRef Name, const llvm::Twine &Message) {
  return headerError("tensor '" + shownText(Name) + "': " + Message);
}

/// What parsing a header keeps (the tensors, their names and shapes, the
/// metadata, the index that finds repeated names), charged before it is
/// allocated, against ParseBytesPerHeaderByte per header byte and
/// ParseBytesAllowance more.
class ParseBudgetTy {
public:
  explicit ParseBudgetTy(uint64_t HeaderLength)
      : HeaderLength(HeaderLength),
        Limit(HeaderLength * ParseBytesPerHeaderByte + ParseBytesAllowance),
        Left(Limit) {}

  Error charge(uint64_t Bytes) {
    if (Bytes <= Left) {
      Left -= Bytes;
      return Error::success();
    }
    return headerError(
        llvm::formatv("a header of {0} bytes needs more than {1} bytes of "
                      "memory to parse (the limit is {2} bytes per header "
                      "byte and {3} more)",
                      HeaderLength, Limit, ParseBytesPerHeaderByte,
                      ParseBytesAllowance)
            .str());
  }

  /// Appends \p Item to \p Items, charging the growth of \p Items first.
  template <typename T> Error append(std::vector<T> &Items, T Item) {
    if (Items.size() == Items.capacity()) {
      size_t Grown = std::max<size_t>(4, 2 * Items.capacity());
      if (Error Err = charge(Grown * sizeof(T)))
        return Err;
      Items.reserve(Grown);
    }
    Items.push_back(std::move(Item));
    return Error::success();
  }

private:
  uint64_t HeaderLength;
  uint64_t Limit;
  uint64_t Left;
};

using KindTy = checkpoint::JsonReaderTy::KindTy;

/// A non-negative integer: JSON numbers like 3.0 and 1e3 count as
/// integers; the error text says what \p What (a field) holds instead.
Expected<uint64_t> readCount(checkpoint::JsonReaderTy &Reader, StringRef Name,
                             const llvm::Twine &What) {
  if (Reader.kind() != KindTy::Number)
    return tensorError(Name, What + " is not a number");
  StringRef Text = Reader.readNumber();
  bool Negative = Text.starts_with("-");
  if (Text.find_first_of(".eE") == StringRef::npos) {
    StringRef Digits = Text.drop_front(Negative ? 1 : 0);
    uint64_t Value;
    if (Negative && Digits.find_first_not_of('0') != StringRef::npos)
      return tensorError(Name, What + " is negative (" + shownText(Text) + ")");
    if (Digits.getAsInteger(10, Value))
      return tensorError(Name, What + " does not fit 64 bits (" +
                                   shownText(Text) + ")");
    return Value;
  }
  double Value = std::strtod(Text.str().c_str(), nullptr);
  if (std::isfinite(Value) && std::trunc(Value) != Value)
    return tensorError(Name,
                       What + " is not an integer (" + shownText(Text) + ")");
  if (Value < 0)
    return tensorError(Name, What + " is negative (" + shownText(Text) + ")");
  // 2^64: the first double above the range.
  if (!(Value < 18446744073709551616.0))
    return tensorError(Name, What + " does not fit 64 bits (" +
                                 shownText(Text) + ")");
  return static_cast<uint64_t>(Value);
}

Error readDType(checkpoint::JsonReaderTy &Reader, TensorInfoTy &T) {
  if (Reader.kind() != KindTy::String)
    return tensorError(T.Name, "field 'dtype' is not a string");
  std::string Text;
  Reader.readString(Text);
  std::optional<DTypeTy> DType = dtypeFromName(Text);
  if (!DType)
    return tensorError(T.Name, "unknown dtype '" + shownText(Text) + "'");
  T.DType = *DType;
  return Error::success();
}

Error readShape(checkpoint::JsonReaderTy &Reader, TensorInfoTy &T,
                ParseBudgetTy &Budget) {
  if (Reader.kind() != KindTy::Array)
    return tensorError(T.Name, "field 'shape' is not an array");
  Reader.enterArray();
  while (Reader.nextElement()) {
    Expected<uint64_t> Dim =
        readCount(Reader, T.Name, "shape[" + llvm::Twine(T.Shape.size()) + "]");
    if (!Dim)
      return Dim.takeError();
    if (Error Err = Budget.append(T.Shape, *Dim))
      return Err;
  }
  return Error::success();
}

Error readOffsets(checkpoint::JsonReaderTy &Reader, TensorInfoTy &T) {
  if (Reader.kind() != KindTy::Array || Reader.count() != 2)
    return tensorError(T.Name,
                       "field 'data_offsets' is not an array of two integers");
  Reader.enterArray();
  uint64_t *Offsets[] = {&T.Begin, &T.End};
  for (size_t I = 0; I < 2; ++I) {
    Reader.nextElement();
    Expected<uint64_t> Offset =
        readCount(Reader, T.Name, "data_offsets[" + llvm::Twine(I) + "]");
    if (!Offset)
      return Offset.takeError();
    *Offsets[I] = *Offset;
  }
  Reader.nextElement(); // Leaves the array.
  return Error::success();
}

/// The entry of tensor \p Name at the cursor: each of its fields once, in
/// any order; fields the format does not define are skipped, as the
/// reference implementation skips them.
Expected<TensorInfoTy> parseTensor(checkpoint::JsonReaderTy &Reader,
                                   StringRef Name, ParseBudgetTy &Budget) {
  if (Reader.kind() != KindTy::Object)
    return tensorError(Name, "entry is not an object");
  TensorInfoTy T;
  if (Error Err = Budget.charge(Name.size()))
    return std::move(Err);
  T.Name = Name.str();
  enum FieldTy { DType, Shape, Offsets, FieldCount };
  static constexpr llvm::StringLiteral FieldNames[FieldCount] = {
      "dtype", "shape", "data_offsets"};
  bool Seen[FieldCount] = {};
  std::string Key;
  Reader.enterObject();
  while (Reader.nextMember(Key)) {
    const auto *Known = llvm::find(FieldNames, Key);
    if (Known == std::end(FieldNames)) {
      Reader.skipValue();
      continue;
    }
    size_t Field = Known - std::begin(FieldNames);
    if (Seen[Field])
      return tensorError(Name, "field '" + Key + "' appears twice");
    Seen[Field] = true;
    Error Err = Field == DType   ? readDType(Reader, T)
                : Field == Shape ? readShape(Reader, T, Budget)
                                 : readOffsets(Reader, T);
    if (Err)
      return std::move(Err);
  }
  for (size_t Field = 0; Field < FieldCount; ++Field)
    if (!Seen[Field])
      return tensorError(Name, "missing field '" + FieldNames[Field] + "'");
  return T;
}

/// Of the items of \p Items with equal names (\p NameOf), keeps the last;
/// the others keep their order. A later JSON member of a name replaces an
/// earlier one, as in the reference implementation.
template <typename ItemTy, typename NameOfTy>
Error keepLastOfEachName(std::vector<ItemTy> &Items, NameOfTy NameOf,
                         ParseBudgetTy &Budget) {
  if (Error Err = Budget.charge(Items.size() * (sizeof(size_t) + 1)))
    return Err;
  std::vector<size_t> ByName(Items.size());
  std::iota(ByName.begin(), ByName.end(), 0);
  llvm::sort(ByName, [&](size_t A, size_t B) {
    return std::make_pair(NameOf(Items[A]), A) <
           std::make_pair(NameOf(Items[B]), B);
  });
  std::vector<bool> Replaced(Items.size());
  for (size_t I = 0; I + 1 < ByName.size(); ++I)
    Replaced[ByName[I]] =
        NameOf(Items[ByName[I]]) == NameOf(Items[ByName[I + 1]]);
  size_t Kept = 0;
  for (size_t I = 0; I < Items.size(); ++I) {
    if (Replaced[I])
      continue;
    if (Kept != I)
      Items[Kept] = std::move(Items[I]);
    ++Kept;
  }
  Items.resize(Kept);
  return Error::success();
}

/// The "__metadata__" object at the cursor: string values, sorted by key;
/// of a key given twice, the last value.
Expected<std::vector<std::pair<std::string, std::string>>>
parseMetadata(checkpoint::JsonReaderTy &Reader, ParseBudgetTy &Budget) {
  if (Reader.kind() != KindTy::Object)
    return headerError("'__metadata__' is not an object");
  std::vector<std::pair<std::string, std::string>> Metadata;
  std::string Key, Text;
  Reader.enterObject();
  while (Reader.nextMember(Key)) {
    if (Reader.kind() != KindTy::String)
      return headerError("'__metadata__' value of '" + shownText(Key) +
                         "' is not a string");
    Reader.readString(Text);
    if (Error Err = Budget.charge(Key.size() + Text.size()))
      return std::move(Err);
    if (Error Err = Budget.append(Metadata, {Key, Text}))
      return std::move(Err);
  }
  auto KeyOf = [](const std::pair<std::string, std::string> &KV) {
    return StringRef(KV.first);
  };
  if (Error Err = keepLastOfEachName(Metadata, KeyOf, Budget))
    return std::move(Err);
  llvm::sort(Metadata);
  return Metadata;
}

/// \p T lies in the data section of \p DataBytes bytes and holds
/// product(shape) * dtype size bytes.
Error checkTensor(const TensorInfoTy &T, uint64_t DataBytes) {
  if (T.Begin > T.End)
    return tensorError(T.Name, llvm::formatv("data_offsets [{0}, {1}): "
                                             "begin > end",
                                             T.Begin, T.End)
                                   .str());
  if (T.End > DataBytes)
    return tensorError(
        T.Name, llvm::formatv("data_offsets [{0}, {1}) end outside the data "
                              "section of {2} bytes",
                              T.Begin, T.End, DataBytes)
                    .str());
  Expected<uint64_t> Bytes = tensorBytes(T.Name, T.DType, T.Shape);
  if (!Bytes)
    return Bytes.takeError();
  if (*Bytes != T.bytes())
    return tensorError(
        T.Name,
        llvm::formatv("data_offsets [{0}, {1}) hold {2} bytes, but "
                      "shape and dtype {3} need {4}",
                      T.Begin, T.End, T.bytes(), dtypeName(T.DType), *Bytes)
            .str());
  return Error::success();
}

/// No two of \p Tensors overlap. Sorts \p Tensors by offset.
Error checkOverlaps(std::vector<TensorInfoTy> &Tensors) {
  llvm::sort(Tensors, [](const TensorInfoTy &A, const TensorInfoTy &B) {
    return std::tie(A.Begin, A.End, A.Name) < std::tie(B.Begin, B.End, B.Name);
  });
  // Empty tensors own no bytes and overlap nothing. Of the others, each must
  // start at or after the furthest end seen so far.
  const TensorInfoTy *Furthest = nullptr;
  for (const TensorInfoTy &T : Tensors) {
    if (T.Begin == T.End)
      continue;
    if (Furthest && T.Begin < Furthest->End)
      return tensorError(
          T.Name, llvm::formatv("data_offsets [{0}, {1}) overlap tensor "
                                "'{2}' at [{3}, {4})",
                                T.Begin, T.End, shownText(Furthest->Name),
                                Furthest->Begin, Furthest->End)
                      .str());
    if (!Furthest || T.End > Furthest->End)
      Furthest = &T;
  }
  return Error::success();
}

Error systemError(const llvm::Twine &Message) {
  return llvm::createStringError(std::error_code(errno, std::generic_category()),
                                 Message + ": " + std::strerror(errno));
}

} // namespace

Error preadFull(int Fd, char *Buf, uint64_t Size, uint64_t Offset,
                StringRef Path) {
  uint64_t Done = 0;
  while (Done < Size) {
    ssize_t N = ::pread(Fd, Buf + Done, Size - Done,
                        static_cast<off_t>(Offset + Done));
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0)
      return systemError(llvm::formatv("pread({0}, {1}, {2} bytes, offset {3})",
                                       Path, static_cast<void *>(Buf + Done),
                                       Size - Done, Offset + Done)
                             .str());
    if (N == 0)
      return llvm::createStringError(
          std::make_error_code(std::errc::io_error),
          llvm::formatv("{0}: end of file at offset {1} (reading {2} bytes "
                        "at offset {3})",
                        Path, Offset + Done, Size, Offset)
              .str());
    Done += static_cast<uint64_t>(N);
  }
  return Error::success();
}

StringRef dtypeName(DTypeTy DType) { return dtypeEntry(DType).Name; }

uint64_t dtypeSize(DTypeTy DType) { return dtypeEntry(DType).Size; }

std::optional<DTypeTy> dtypeFromName(StringRef Name) {
  for (const DTypeEntryTy &E : DTypeTable)
    if (E.Name == Name)
      return E.DType;
  return std::nullopt;
}

uint64_t HeaderTy::dataBytes() const {
  uint64_t Max = 0;
  for (const TensorInfoTy &T : Tensors)
    Max = std::max(Max, T.End);
  return Max;
}

Expected<uint64_t> tensorBytes(StringRef Name, DTypeTy DType,
                               const std::vector<uint64_t> &Shape) {
  uint64_t Bytes = dtypeSize(DType);
  for (uint64_t Dim : Shape)
    if (__builtin_mul_overflow(Bytes, Dim, &Bytes))
      return tensorError(Name, "shape's byte size overflows 64 bits");
  return Bytes;
}

Error layOutContiguously(std::vector<TensorInfoTy> &Tensors) {
  uint64_t Offset = 0;
  for (TensorInfoTy &T : Tensors) {
    Expected<uint64_t> Bytes = tensorBytes(T.Name, T.DType, T.Shape);
    if (!Bytes)
      return Bytes.takeError();
    T.Begin = Offset;
    if (__builtin_add_overflow(Offset, *Bytes, &Offset))
      return tensorError(T.Name, "data section size overflows 64 bits");
    T.End = Offset;
  }
  return Error::success();
}

std::string serializeHeader(HeaderTy &Header, uint64_t Alignment) {
  assert(Alignment >= 8 && (Alignment & (Alignment - 1)) == 0 &&
         "alignment must be a power of two, at least 8");
  std::string Json;
  llvm::raw_string_ostream OS(Json);
  llvm::json::OStream J(OS);
  J.object([&] {
    if (!Header.Metadata.empty())
      J.attributeObject(MetadataKey, [&] {
        for (const auto &KV : Header.Metadata)
          J.attribute(KV.first, KV.second);
      });
    for (const TensorInfoTy &T : Header.Tensors)
      J.attributeObject(T.Name, [&] {
        J.attribute("dtype", dtypeName(T.DType));
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
  // Trailing spaces are JSON whitespace: they align the data section.
  uint64_t Unpadded = HeaderLengthBytes + Json.size();
  Json.append(llvm::alignTo(Unpadded, Alignment) - Unpadded, ' ');
  Header.HeaderLength = Json.size();
  char Length[HeaderLengthBytes];
  llvm::support::endian::write64le(Length, Header.HeaderLength);
  return std::string(Length, HeaderLengthBytes) + Json;
}

Expected<uint64_t> parseHeaderLength(StringRef Prefix, uint64_t FileSize) {
  if (FileSize < HeaderLengthBytes || Prefix.size() < HeaderLengthBytes)
    return headerError(llvm::formatv("file of {0} bytes is shorter than the "
                                     "{1}-byte header length",
                                     FileSize, HeaderLengthBytes)
                           .str());
  uint64_t Length = llvm::support::endian::read64le(Prefix.data());
  if (Length > MaxHeaderLength)
    return headerError(llvm::formatv("header length {0} is over the limit of "
                                     "{1} bytes (not a safetensors file?)",
                                     Length, MaxHeaderLength)
                           .str());
  if (Length > FileSize - HeaderLengthBytes)
    return headerError(llvm::formatv("header length {0} is more than the {1} "
                                     "bytes the file holds after it",
                                     Length, FileSize - HeaderLengthBytes)
                           .str());
  return Length;
}

Expected<HeaderTy> parseHeader(StringRef Json, uint64_t FileSize) {
  HeaderTy Header;
  Header.HeaderLength = Json.size();
  if (FileSize < Header.dataOffset())
    return headerError(llvm::formatv("file of {0} bytes ends before the data "
                                     "section at offset {1}",
                                     FileSize, Header.dataOffset())
                           .str());
  uint64_t DataBytes = FileSize - Header.dataOffset();
  Expected<checkpoint::JsonReaderTy> Reader =
      checkpoint::JsonReaderTy::create(Json, MaxHeaderDepth);
  if (!Reader)
    return headerError(llvm::toString(Reader.takeError()));
  if (Reader->kind() != KindTy::Object)
    return headerError("not a JSON object");
  ParseBudgetTy Budget(Json.size());
  uint64_t Entries = Reader->count();
  if (Error Err = Budget.charge(Entries * sizeof(TensorInfoTy)))
    return std::move(Err);
  Header.Tensors.reserve(Entries);
  bool HasMetadata = false;
  std::string Key;
  Reader->enterObject();
  while (Reader->nextMember(Key)) {
    if (Key == MetadataKey) {
      // The reference implementation refuses a second one.
      if (HasMetadata)
        return headerError("'__metadata__' appears twice");
      HasMetadata = true;
      auto Metadata = parseMetadata(*Reader, Budget);
      if (!Metadata)
        return Metadata.takeError();
      Header.Metadata = std::move(*Metadata);
      continue;
    }
    // Every entry must be valid, also one that a later entry of its name
    // replaces.
    Expected<TensorInfoTy> T = parseTensor(*Reader, Key, Budget);
    if (!T)
      return T.takeError();
    if (Error Err = checkTensor(*T, DataBytes))
      return std::move(Err);
    Header.Tensors.push_back(std::move(*T));
  }
  auto NameOf = [](const TensorInfoTy &T) { return StringRef(T.Name); };
  if (Error Err = keepLastOfEachName(Header.Tensors, NameOf, Budget))
    return std::move(Err);
  if (Error Err = checkOverlaps(Header.Tensors))
    return std::move(Err);
  return Header;
}

Expected<HeaderTy> readHeader(int Fd, StringRef Path) {
  struct stat St;
  if (::fstat(Fd, &St) != 0)
    return systemError(llvm::formatv("fstat({0}, fd {1})", Path, Fd).str());
  uint64_t FileSize = static_cast<uint64_t>(St.st_size);
  char Prefix[HeaderLengthBytes];
  uint64_t PrefixBytes = std::min<uint64_t>(FileSize, HeaderLengthBytes);
  if (Error Err = preadFull(Fd, Prefix, PrefixBytes, 0, Path))
    return std::move(Err);
  Expected<uint64_t> Length =
      parseHeaderLength(StringRef(Prefix, PrefixBytes), FileSize);
  if (!Length)
    return llvm::createStringError(std::make_error_code(std::errc::invalid_argument),
                                   Path + ": " + toString(Length.takeError()));
  std::string Json(*Length, '\0');
  if (Error Err = preadFull(Fd, Json.data(), *Length, HeaderLengthBytes, Path))
    return std::move(Err);
  Expected<HeaderTy> Header = parseHeader(Json, FileSize);
  if (!Header)
    return llvm::createStringError(std::make_error_code(std::errc::invalid_argument),
                                   Path + ": " + toString(Header.takeError()));
  return Header;
}

} // namespace safetensors
} // namespace offloadio

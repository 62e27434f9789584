// SPDX-License-Identifier: Apache-2.0
#include "SafetensorsHeader.h"
#include "JsonReader.h"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <sys/stat.h>
#include <tuple>
#include <unistd.h>

namespace ompxio {
namespace safetensors {

namespace {

struct DTypeEntryTy {
  DTypeTy DType;
  std::string_view Name;
  uint64_t Size;
};

constexpr DTypeEntryTy DTypeTable[] = {
    {DTypeTy::BOOL, "BOOL", 1},       {DTypeTy::U8, "U8", 1},
    {DTypeTy::I8, "I8", 1},           {DTypeTy::F8_E4M3, "F8_E4M3", 1},
    {DTypeTy::F8_E5M2, "F8_E5M2", 1}, {DTypeTy::I16, "I16", 2},
    {DTypeTy::U16, "U16", 2},         {DTypeTy::F16, "F16", 2},
    {DTypeTy::BF16, "BF16", 2},       {DTypeTy::I32, "I32", 4},
    {DTypeTy::U32, "U32", 4},         {DTypeTy::F32, "F32", 4},
    {DTypeTy::F64, "F64", 8},         {DTypeTy::I64, "I64", 8},
    {DTypeTy::U64, "U64", 8},
};
static_assert(std::size(DTypeTable) == OMPX_SAFETENSORS_NUM_DTYPES,
              "every dtype of ompx_safetensors.h has a table entry");

const DTypeEntryTy &dtypeEntry(DTypeTy DType) {
  // The table is in the order of the public numbers.
  const DTypeEntryTy &E = DTypeTable[static_cast<int>(DType)];
  assert(E.DType == DType && "the dtype table follows the public numbers");
  return E;
}

__attribute__((format(printf, 1, 2))) std::string format(const char *Fmt,
                                                         ...) {
  va_list Args, Copy;
  va_start(Args, Fmt);
  va_copy(Copy, Args);
  int Length = std::vsnprintf(nullptr, 0, Fmt, Copy);
  va_end(Copy);
  std::string Text(Length > 0 ? static_cast<size_t>(Length) : 0, '\0');
  if (Length > 0)
    std::vsnprintf(Text.data(), Text.size() + 1, Fmt, Args);
  va_end(Args);
  return Text;
}

using ULL = unsigned long long;

ErrorTy headerError(int Errno, const std::string &Message) {
  return {Errno, "safetensors header: " + Message};
}

ErrorTy tensorError(int Errno, std::string_view Name,
                    const std::string &Message) {
  return headerError(Errno, "tensor '" + shownText(Name) + "': " + Message);
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

  ErrorTy charge(uint64_t Bytes) {
    if (Bytes <= Left) {
      Left -= Bytes;
      return {};
    }
    return headerError(
        EOVERFLOW,
        format("a header of %llu bytes needs more than %llu bytes of memory "
               "to parse (the limit is %llu bytes per header byte and %llu "
               "more)",
               ULL(HeaderLength), ULL(Limit), ULL(ParseBytesPerHeaderByte),
               ULL(ParseBytesAllowance)));
  }

  /// Appends \p Item to \p Items, charging the growth of \p Items first.
  template <typename T> ErrorTy append(std::vector<T> &Items, T Item) {
    if (Items.size() == Items.capacity()) {
      size_t Grown = std::max<size_t>(4, 2 * Items.capacity());
      if (ErrorTy Err = charge(Grown * sizeof(T)))
        return Err;
      Items.reserve(Grown);
    }
    Items.push_back(std::move(Item));
    return {};
  }

private:
  uint64_t HeaderLength;
  uint64_t Limit;
  uint64_t Left;
};

using KindTy = JsonReaderTy::KindTy;

/// A non-negative integer into \p Value: JSON numbers like 3.0 and 1e3
/// count as integers; the error text says what \p What (a field) holds
/// instead.
ErrorTy readCount(JsonReaderTy &Reader, std::string_view Name,
                  const std::string &What, uint64_t &Value) {
  if (Reader.kind() != KindTy::Number)
    return tensorError(EINVAL, Name, What + " is not a number");
  std::string Text(Reader.readNumber());
  bool Negative = Text[0] == '-';
  if (Text.find_first_of(".eE") == std::string::npos) {
    std::string_view Digits(Text);
    Digits.remove_prefix(Negative ? 1 : 0);
    if (Negative && Digits.find_first_not_of('0') != std::string_view::npos)
      return tensorError(EINVAL, Name,
                         What + " is negative (" + shownText(Text) + ")");
    Value = 0;
    for (char C : Digits)
      if (__builtin_mul_overflow(Value, 10, &Value) ||
          __builtin_add_overflow(Value, uint64_t(C - '0'), &Value))
        return tensorError(EOVERFLOW, Name,
                           What + " does not fit 64 bits (" + shownText(Text) +
                               ")");
    return {};
  }
  double Real = std::strtod(Text.c_str(), nullptr);
  if (std::isfinite(Real) && std::trunc(Real) != Real)
    return tensorError(EINVAL, Name,
                       What + " is not an integer (" + shownText(Text) + ")");
  if (Real < 0)
    return tensorError(EINVAL, Name,
                       What + " is negative (" + shownText(Text) + ")");
  // 2^64: the first double above the range.
  if (!(Real < 18446744073709551616.0))
    return tensorError(EOVERFLOW, Name,
                       What + " does not fit 64 bits (" + shownText(Text) +
                           ")");
  Value = static_cast<uint64_t>(Real);
  return {};
}

ErrorTy readDType(JsonReaderTy &Reader, TensorInfoTy &T) {
  if (Reader.kind() != KindTy::String)
    return tensorError(EINVAL, T.Name, "field 'dtype' is not a string");
  std::string Text;
  Reader.readString(Text);
  std::optional<DTypeTy> DType = dtypeFromName(Text);
  if (!DType)
    return tensorError(EINVAL, T.Name,
                       "unknown dtype '" + shownText(Text) + "'");
  T.DType = *DType;
  return {};
}

ErrorTy readShape(JsonReaderTy &Reader, TensorInfoTy &T,
                  ParseBudgetTy &Budget) {
  if (Reader.kind() != KindTy::Array)
    return tensorError(EINVAL, T.Name, "field 'shape' is not an array");
  Reader.enterArray();
  while (Reader.nextElement()) {
    uint64_t Dim;
    if (ErrorTy Err =
            readCount(Reader, T.Name,
                      "shape[" + std::to_string(T.Shape.size()) + "]", Dim))
      return Err;
    if (ErrorTy Err = Budget.append(T.Shape, Dim))
      return Err;
  }
  return {};
}

ErrorTy readOffsets(JsonReaderTy &Reader, TensorInfoTy &T) {
  if (Reader.kind() != KindTy::Array || Reader.count() != 2)
    return tensorError(EINVAL, T.Name,
                       "field 'data_offsets' is not an array of two integers");
  Reader.enterArray();
  uint64_t *Offsets[] = {&T.Begin, &T.End};
  for (size_t I = 0; I < 2; ++I) {
    Reader.nextElement();
    if (ErrorTy Err =
            readCount(Reader, T.Name,
                      "data_offsets[" + std::to_string(I) + "]", *Offsets[I]))
      return Err;
  }
  Reader.nextElement(); // Leaves the array.
  return {};
}

/// The entry of tensor \p Name at the cursor, into \p T: each of its fields
/// once, in any order; fields the format does not define are skipped, as
/// the reference implementation skips them.
ErrorTy parseTensor(JsonReaderTy &Reader, std::string_view Name,
                    ParseBudgetTy &Budget, TensorInfoTy &T) {
  if (Reader.kind() != KindTy::Object)
    return tensorError(EINVAL, Name, "entry is not an object");
  if (ErrorTy Err = Budget.charge(Name.size()))
    return Err;
  T.Name = std::string(Name);
  enum FieldTy { DType, Shape, Offsets, FieldCount };
  static constexpr std::string_view FieldNames[FieldCount] = {
      "dtype", "shape", "data_offsets"};
  bool Seen[FieldCount] = {};
  std::string Key;
  Reader.enterObject();
  while (Reader.nextMember(Key)) {
    const auto *Known = std::find(std::begin(FieldNames), std::end(FieldNames),
                                  std::string_view(Key));
    if (Known == std::end(FieldNames)) {
      Reader.skipValue();
      continue;
    }
    size_t Field = Known - std::begin(FieldNames);
    if (Seen[Field])
      return tensorError(EINVAL, Name, "field '" + Key + "' appears twice");
    Seen[Field] = true;
    ErrorTy Err = Field == DType   ? readDType(Reader, T)
                  : Field == Shape ? readShape(Reader, T, Budget)
                                   : readOffsets(Reader, T);
    if (Err)
      return Err;
  }
  for (size_t Field = 0; Field < FieldCount; ++Field)
    if (!Seen[Field])
      return tensorError(EINVAL, Name,
                         "missing field '" + std::string(FieldNames[Field]) +
                             "'");
  return {};
}

/// Of the items of \p Items with equal names (\p NameOf), keeps the last;
/// the others keep their order. A later JSON member of a name replaces an
/// earlier one, as in the reference implementation.
template <typename ItemTy, typename NameOfTy>
ErrorTy keepLastOfEachName(std::vector<ItemTy> &Items, NameOfTy NameOf,
                           ParseBudgetTy &Budget) {
  if (ErrorTy Err = Budget.charge(Items.size() * (sizeof(size_t) + 1)))
    return Err;
  std::vector<size_t> ByName(Items.size());
  std::iota(ByName.begin(), ByName.end(), 0);
  std::sort(ByName.begin(), ByName.end(), [&](size_t A, size_t B) {
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
  return {};
}

/// The "__metadata__" object at the cursor: string values, sorted by key;
/// of a key given twice, the last value.
ErrorTy parseMetadata(JsonReaderTy &Reader, ParseBudgetTy &Budget,
                      std::vector<std::pair<std::string, std::string>> &Out) {
  if (Reader.kind() != KindTy::Object)
    return headerError(EINVAL, "'__metadata__' is not an object");
  std::vector<std::pair<std::string, std::string>> Metadata;
  std::string Key, Text;
  Reader.enterObject();
  while (Reader.nextMember(Key)) {
    if (Reader.kind() != KindTy::String)
      return headerError(EINVAL, "'__metadata__' value of '" + shownText(Key) +
                                     "' is not a string");
    Reader.readString(Text);
    if (ErrorTy Err = Budget.charge(Key.size() + Text.size()))
      return Err;
    if (ErrorTy Err = Budget.append(Metadata, {Key, Text}))
      return Err;
  }
  auto KeyOf = [](const std::pair<std::string, std::string> &KV) {
    return std::string_view(KV.first);
  };
  if (ErrorTy Err = keepLastOfEachName(Metadata, KeyOf, Budget))
    return Err;
  std::sort(Metadata.begin(), Metadata.end());
  Out = std::move(Metadata);
  return {};
}

/// \p T lies in the data section of \p DataBytes bytes and holds
/// product(shape) * dtype size bytes.
ErrorTy checkTensor(const TensorInfoTy &T, uint64_t DataBytes) {
  if (T.Begin > T.End)
    return tensorError(EINVAL, T.Name,
                       format("data_offsets [%llu, %llu): begin > end",
                              ULL(T.Begin), ULL(T.End)));
  if (T.End > DataBytes)
    return tensorError(EINVAL, T.Name,
                       format("data_offsets [%llu, %llu) end outside the data "
                              "section of %llu bytes",
                              ULL(T.Begin), ULL(T.End), ULL(DataBytes)));
  uint64_t Bytes;
  if (ErrorTy Err = tensorBytes(T.Name, T.DType, T.Shape, Bytes))
    return Err;
  if (Bytes != T.bytes())
    return tensorError(
        EINVAL, T.Name,
        format("data_offsets [%llu, %llu) hold %llu bytes, but shape and "
               "dtype %s need %llu",
               ULL(T.Begin), ULL(T.End), ULL(T.bytes()),
               std::string(dtypeName(T.DType)).c_str(), ULL(Bytes)));
  return {};
}

/// No two of \p Tensors overlap. Sorts \p Tensors by offset.
ErrorTy checkOverlaps(std::vector<TensorInfoTy> &Tensors) {
  std::sort(Tensors.begin(), Tensors.end(),
            [](const TensorInfoTy &A, const TensorInfoTy &B) {
              return std::tie(A.Begin, A.End, A.Name) <
                     std::tie(B.Begin, B.End, B.Name);
            });
  // Empty tensors own no bytes and overlap nothing. Of the others, each must
  // start at or after the furthest end seen so far.
  const TensorInfoTy *Furthest = nullptr;
  for (const TensorInfoTy &T : Tensors) {
    if (T.Begin == T.End)
      continue;
    if (Furthest && T.Begin < Furthest->End)
      return tensorError(
          EINVAL, T.Name,
          format("data_offsets [%llu, %llu) overlap tensor '%s' at [%llu, "
                 "%llu)",
                 ULL(T.Begin), ULL(T.End), shownText(Furthest->Name).c_str(),
                 ULL(Furthest->Begin), ULL(Furthest->End)));
    if (!Furthest || T.End > Furthest->End)
      Furthest = &T;
  }
  return {};
}

ErrorTy systemError(int Errno, const std::string &Message) {
  return {Errno, Message + ": " + std::strerror(Errno)};
}

} // namespace

std::string shownText(std::string_view Text) {
  constexpr size_t MaxShownBytes = 200;
  size_t Cut = Text.size();
  if (Cut > MaxShownBytes) {
    Cut = MaxShownBytes;
    while (Cut > 0 && (static_cast<unsigned char>(Text[Cut]) & 0xC0) == 0x80)
      --Cut;
  }
  std::string Shown;
  for (unsigned char C : Text.substr(0, Cut)) {
    if (C < 0x20 || C == 0x7F)
      Shown += format("\\x%02x", C);
    else
      Shown.push_back(static_cast<char>(C));
  }
  if (Cut < Text.size())
    Shown += "... (" + std::to_string(Text.size()) + " bytes)";
  return Shown;
}

ErrorTy preadFull(int Fd, char *Buf, uint64_t Size, uint64_t Offset,
                  const std::string &Path) {
  uint64_t Done = 0;
  while (Done < Size) {
    ssize_t N = ::pread(Fd, Buf + Done, Size - Done,
                        static_cast<off_t>(Offset + Done));
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0)
      return systemError(errno,
                         format("pread(%s, %p, %llu bytes, offset %llu)",
                                Path.c_str(), static_cast<void *>(Buf + Done),
                                ULL(Size - Done), ULL(Offset + Done)));
    if (N == 0)
      return {EIO, format("%s: end of file at offset %llu (reading %llu bytes "
                          "at offset %llu)",
                          Path.c_str(), ULL(Offset + Done), ULL(Size),
                          ULL(Offset))};
    Done += static_cast<uint64_t>(N);
  }
  return {};
}

std::string_view dtypeName(DTypeTy DType) { return dtypeEntry(DType).Name; }

uint64_t dtypeSize(DTypeTy DType) { return dtypeEntry(DType).Size; }

std::optional<DTypeTy> dtypeFromName(std::string_view Name) {
  for (const DTypeEntryTy &E : DTypeTable)
    if (E.Name == Name)
      return E.DType;
  return std::nullopt;
}

std::optional<DTypeTy> dtypeFromNumber(int Number) {
  if (Number < 0 || Number >= OMPX_SAFETENSORS_NUM_DTYPES)
    return std::nullopt;
  return DTypeTable[Number].DType;
}

uint64_t HeaderTy::dataBytes() const {
  uint64_t Max = 0;
  for (const TensorInfoTy &T : Tensors)
    Max = std::max(Max, T.End);
  return Max;
}

ErrorTy tensorBytes(std::string_view Name, DTypeTy DType,
                    const std::vector<uint64_t> &Shape, uint64_t &Bytes) {
  Bytes = dtypeSize(DType);
  for (uint64_t Dim : Shape)
    if (__builtin_mul_overflow(Bytes, Dim, &Bytes))
      return tensorError(EOVERFLOW, Name,
                         "shape's byte size overflows 64 bits");
  return {};
}

ErrorTy parseHeaderLength(std::string_view Prefix, uint64_t FileSize,
                          uint64_t &Length) {
  if (FileSize < HeaderLengthBytes || Prefix.size() < HeaderLengthBytes)
    return headerError(EINVAL, format("file of %llu bytes is shorter than the "
                                      "%llu-byte header length",
                                      ULL(FileSize), ULL(HeaderLengthBytes)));
  Length = 0;
  for (size_t I = HeaderLengthBytes; I-- > 0;)
    Length = Length << 8 | static_cast<unsigned char>(Prefix[I]);
  if (Length > MaxHeaderLength)
    return headerError(EOVERFLOW,
                       format("header length %llu is over the limit of %llu "
                              "bytes (not a safetensors file?)",
                              ULL(Length), ULL(MaxHeaderLength)));
  if (Length > FileSize - HeaderLengthBytes)
    return headerError(EINVAL,
                       format("header length %llu is more than the %llu bytes "
                              "the file holds after it",
                              ULL(Length), ULL(FileSize - HeaderLengthBytes)));
  return {};
}

ErrorTy parseHeader(std::string_view Json, uint64_t FileSize,
                    HeaderTy &Header) {
  Header = HeaderTy();
  Header.HeaderLength = Json.size();
  if (FileSize < Header.dataOffset())
    return headerError(EINVAL, format("file of %llu bytes ends before the "
                                      "data section at offset %llu",
                                      ULL(FileSize), ULL(Header.dataOffset())));
  uint64_t DataBytes = FileSize - Header.dataOffset();
  JsonFaultTy Fault;
  std::string Message;
  std::optional<JsonReaderTy> Reader =
      JsonReaderTy::create(Json, MaxHeaderDepth, Fault, Message);
  if (!Reader)
    return headerError(Fault == JsonFaultTy::TooDeep ? EOVERFLOW : EINVAL,
                       Message);
  if (Reader->kind() != KindTy::Object)
    return headerError(EINVAL, "not a JSON object");
  ParseBudgetTy Budget(Json.size());
  uint64_t Entries = Reader->count();
  if (ErrorTy Err = Budget.charge(Entries * sizeof(TensorInfoTy)))
    return Err;
  Header.Tensors.reserve(Entries);
  bool HasMetadata = false;
  std::string Key;
  Reader->enterObject();
  while (Reader->nextMember(Key)) {
    if (Key == MetadataKey) {
      // The reference implementation refuses a second one.
      if (HasMetadata)
        return headerError(EINVAL, "'__metadata__' appears twice");
      HasMetadata = true;
      if (ErrorTy Err = parseMetadata(*Reader, Budget, Header.Metadata))
        return Err;
      continue;
    }
    // Every entry must be valid, also one that a later entry of its name
    // replaces.
    TensorInfoTy T;
    if (ErrorTy Err = parseTensor(*Reader, Key, Budget, T))
      return Err;
    if (ErrorTy Err = checkTensor(T, DataBytes))
      return Err;
    Header.Tensors.push_back(std::move(T));
  }
  auto NameOf = [](const TensorInfoTy &T) { return std::string_view(T.Name); };
  if (ErrorTy Err = keepLastOfEachName(Header.Tensors, NameOf, Budget))
    return Err;
  return checkOverlaps(Header.Tensors);
}

ErrorTy readHeader(int Fd, const std::string &Path, HeaderTy &Header) {
  struct stat St;
  if (::fstat(Fd, &St) != 0)
    return systemError(errno, format("fstat(%s, fd %d)", Path.c_str(), Fd));
  uint64_t FileSize = static_cast<uint64_t>(St.st_size);
  char Prefix[HeaderLengthBytes];
  uint64_t PrefixBytes = std::min<uint64_t>(FileSize, HeaderLengthBytes);
  if (ErrorTy Err = preadFull(Fd, Prefix, PrefixBytes, 0, Path))
    return Err;
  uint64_t Length;
  if (ErrorTy Err = parseHeaderLength(std::string_view(Prefix, PrefixBytes),
                                      FileSize, Length))
    return {Err.Errno, Path + ": " + Err.Message};
  std::string Json(Length, '\0');
  if (ErrorTy Err = preadFull(Fd, Json.data(), Length, HeaderLengthBytes, Path))
    return Err;
  if (ErrorTy Err = parseHeader(Json, FileSize, Header))
    return {Err.Errno, Path + ": " + Err.Message};
  return {};
}

} // namespace safetensors
} // namespace ompxio

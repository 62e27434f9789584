// SPDX-License-Identifier: Apache-2.0
#include "Safetensors.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
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

Error headerError(const llvm::Twine &Message) {
  return llvm::createStringError(std::make_error_code(std::errc::invalid_argument),
                                 "safetensors header: " + Message.str());
}

Error tensorError(StringRef Name, const llvm::Twine &Message) {
  return headerError("tensor '" + Name + "': " + Message);
}

/// A non-negative JSON integer. JSON numbers like 3.0 count as integers;
/// the error text says what \p What (a field) holds instead.
Expected<uint64_t> readCount(const llvm::json::Value &V, StringRef Name,
                             const llvm::Twine &What) {
  if (std::optional<uint64_t> U = V.getAsUINT64())
    return *U;
  if (std::optional<int64_t> I = V.getAsInteger()) {
    if (*I < 0)
      return tensorError(Name, What + " is negative (" + llvm::Twine(*I) + ")");
    return static_cast<uint64_t>(*I);
  }
  if (std::optional<double> D = V.getAsNumber())
    return tensorError(Name, What + " is not an integer (" +
                                 llvm::formatv("{0}", *D).str() + ")");
  return tensorError(Name, What + " is not a number");
}

Expected<TensorInfoTy> parseTensor(StringRef Name,
                                   const llvm::json::Value &Entry) {
  const llvm::json::Object *Fields = Entry.getAsObject();
  if (!Fields)
    return tensorError(Name, "entry is not an object");
  TensorInfoTy T;
  T.Name = Name.str();

  const llvm::json::Value *DType = Fields->get("dtype");
  if (!DType)
    return tensorError(Name, "missing field 'dtype'");
  std::optional<StringRef> DTypeName = DType->getAsString();
  if (!DTypeName)
    return tensorError(Name, "field 'dtype' is not a string");
  std::optional<DTypeTy> Parsed = dtypeFromName(*DTypeName);
  if (!Parsed)
    return tensorError(Name, "unknown dtype '" + *DTypeName + "'");
  T.DType = *Parsed;

  const llvm::json::Value *Shape = Fields->get("shape");
  if (!Shape)
    return tensorError(Name, "missing field 'shape'");
  const llvm::json::Array *Dims = Shape->getAsArray();
  if (!Dims)
    return tensorError(Name, "field 'shape' is not an array");
  for (size_t I = 0; I < Dims->size(); ++I) {
    Expected<uint64_t> Dim =
        readCount((*Dims)[I], Name, "shape[" + llvm::Twine(I) + "]");
    if (!Dim)
      return Dim.takeError();
    T.Shape.push_back(*Dim);
  }

  const llvm::json::Value *Offsets = Fields->get("data_offsets");
  if (!Offsets)
    return tensorError(Name, "missing field 'data_offsets'");
  const llvm::json::Array *Pair = Offsets->getAsArray();
  if (!Pair || Pair->size() != 2)
    return tensorError(Name,
                       "field 'data_offsets' is not an array of two integers");
  Expected<uint64_t> Begin = readCount((*Pair)[0], Name, "data_offsets[0]");
  if (!Begin)
    return Begin.takeError();
  Expected<uint64_t> End = readCount((*Pair)[1], Name, "data_offsets[1]");
  if (!End)
    return End.takeError();
  T.Begin = *Begin;
  T.End = *End;
  return T;
}

Expected<std::vector<std::pair<std::string, std::string>>>
parseMetadata(const llvm::json::Value &V) {
  const llvm::json::Object *Entries = V.getAsObject();
  if (!Entries)
    return headerError("'__metadata__' is not an object");
  std::vector<std::pair<std::string, std::string>> Metadata;
  for (const auto &KV : *Entries) {
    std::optional<StringRef> Text = KV.second.getAsString();
    if (!Text)
      return headerError("'__metadata__' value of '" + KV.first.str() +
                         "' is not a string");
    Metadata.emplace_back(KV.first.str(), Text->str());
  }
  llvm::sort(Metadata);
  return Metadata;
}

/// Every tensor lies in the data section of \p DataBytes bytes, holds
/// product(shape) * dtype size bytes, and overlaps no other. Sorts
/// \p Tensors by offset.
Error checkLayout(std::vector<TensorInfoTy> &Tensors, uint64_t DataBytes) {
  for (const TensorInfoTy &T : Tensors) {
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
          T.Name, llvm::formatv("data_offsets [{0}, {1}) hold {2} bytes, but "
                                "shape and dtype {3} need {4}",
                                T.Begin, T.End, T.bytes(),
                                dtypeName(T.DType), *Bytes)
                      .str());
  }
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
                                T.Begin, T.End, Furthest->Name,
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
  Expected<llvm::json::Value> Root = llvm::json::parse(Json);
  if (!Root)
    return headerError("not JSON: " + llvm::toString(Root.takeError()));
  const llvm::json::Object *Entries = Root->getAsObject();
  if (!Entries)
    return headerError("not a JSON object");
  for (const auto &KV : *Entries) {
    if (StringRef(KV.first) == MetadataKey) {
      auto Metadata = parseMetadata(KV.second);
      if (!Metadata)
        return Metadata.takeError();
      Header.Metadata = std::move(*Metadata);
      continue;
    }
    Expected<TensorInfoTy> T = parseTensor(KV.first, KV.second);
    if (!T)
      return T.takeError();
    Header.Tensors.push_back(std::move(*T));
  }
  if (Error Err =
          checkLayout(Header.Tensors, FileSize - Header.dataOffset()))
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

// SPDX-License-Identifier: Apache-2.0
//
// The safetensors file format: an 8-byte little-endian header length N, N
// bytes of JSON header, then the data section. The header maps each tensor
// name to {"dtype", "shape", "data_offsets": [begin, end)} with offsets
// relative to the data section; an optional "__metadata__" object holds
// string values. This file models the header, writes it, and parses and
// validates it: a header that passes parseHeader describes tensors that lie
// inside the file, do not overlap, and whose byte length matches their
// shape and dtype.
#ifndef OFFLOADIO_EXAMPLES_CHECKPOINT_SAFETENSORS_H
#define OFFLOADIO_EXAMPLES_CHECKPOINT_SAFETENSORS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace offloadio {
namespace safetensors {

/// Bytes of the little-endian header length that starts every file.
constexpr uint64_t HeaderLengthBytes = 8;
/// Longest header accepted: a length above it is taken for a corrupt or
/// foreign file rather than allocated.
constexpr uint64_t MaxHeaderLength = 100ull << 20;
/// Deepest nesting of arrays and objects that a header may have. Real
/// headers nest three deep (the header, a tensor, its shape); the limit
/// refuses hostile nesting at once, with a message that names it. The
/// reference implementation's JSON parser has a limit of the same size.
constexpr unsigned MaxHeaderDepth = 128;
/// What parsing a header may allocate for what it keeps (tensors, names,
/// shapes, metadata): this many bytes per header byte, plus
/// ParseBytesAllowance. Real headers need about two.
constexpr uint64_t ParseBytesPerHeaderByte = 4;
/// See ParseBytesPerHeaderByte: room for small headers with metadata.
constexpr uint64_t ParseBytesAllowance = 1ull << 20;
/// The header key that holds the file's string metadata.
constexpr llvm::StringLiteral MetadataKey = "__metadata__";

/// The element types of the format.
enum class DTypeTy {
  BOOL,
  U8,
  I8,
  F8_E4M3,
  F8_E5M2,
  U16,
  I16,
  F16,
  BF16,
  U32,
  I32,
  F32,
  U64,
  I64,
  F64,
};

/// The header's spelling of \p DType ("F32").
llvm::StringRef dtypeName(DTypeTy DType);
/// Bytes of one element of \p DType.
uint64_t dtypeSize(DTypeTy DType);
/// The dtype spelled \p Name, or std::nullopt for an unknown spelling.
std::optional<DTypeTy> dtypeFromName(llvm::StringRef Name);

/// One tensor of a header.
struct TensorInfoTy {
  std::string Name;
  DTypeTy DType = DTypeTy::U8;
  std::vector<uint64_t> Shape;
  /// Byte range [Begin, End) relative to the data section.
  uint64_t Begin = 0;
  uint64_t End = 0;

  /// End - Begin.
  uint64_t bytes() const { return End - Begin; }
};

/// A parsed or to-be-written header.
struct HeaderTy {
  /// In file order (ascending Begin) after parseHeader; any order to
  /// serialise.
  std::vector<TensorInfoTy> Tensors;
  /// "__metadata__" entries, sorted by key after parseHeader.
  std::vector<std::pair<std::string, std::string>> Metadata;
  /// Bytes of the JSON header (N); set by parseHeader and
  /// serializeHeader's caller.
  uint64_t HeaderLength = 0;

  /// File offset of the data section: 8 + HeaderLength.
  uint64_t dataOffset() const { return HeaderLengthBytes + HeaderLength; }
  /// Bytes of the data section the tensors span (the largest End).
  uint64_t dataBytes() const;
};

/// Bytes that \p Shape of \p DType occupies, or an error naming \p Name when
/// the product overflows 64 bits.
llvm::Expected<uint64_t> tensorBytes(llvm::StringRef Name, DTypeTy DType,
                                     const std::vector<uint64_t> &Shape);

/// Lays out \p Tensors back to back in their order from offset 0, setting
/// each one's Begin and End from its shape and dtype.
llvm::Error layOutContiguously(std::vector<TensorInfoTy> &Tensors);

/// The file's first 8 + N bytes for \p Header: the length, then the JSON
/// header padded with spaces so that the data section starts at a multiple
/// of \p Alignment (a power of two, at least 8). Sets Header.HeaderLength.
std::string serializeHeader(HeaderTy &Header, uint64_t Alignment = 8);

/// The header length N from the file's first bytes \p Prefix, checked
/// against \p FileSize: the file holds the 8-byte length and N more bytes,
/// and N is at most MaxHeaderLength.
llvm::Expected<uint64_t> parseHeaderLength(llvm::StringRef Prefix,
                                           uint64_t FileSize);

/// Parses and validates the JSON header \p Json of a file of \p FileSize
/// bytes. Errors name the tensor and the problem: not UTF-8, not JSON,
/// nested deeper than MaxHeaderDepth, not an object, a missing, repeated
/// or wrongly typed field, an unknown dtype, a negative, non-integer or
/// over 64-bit dimension or offset, offsets outside the data section,
/// begin > end, overlapping tensors, a byte length that is not
/// product(shape) times the dtype size, metadata that is not an object of
/// strings or that appears twice, more memory needed than
/// ParseBytesPerHeaderByte allows. Every tensor entry must be valid; of
/// entries with the same name the last one describes the tensor, and of
/// metadata keys given twice the last value counts, as in the reference
/// implementation. Costs time linear in the header's length; besides the
/// header, memory for one decoded string at a time and what the parser
/// keeps, within ParseBytesPerHeaderByte.
llvm::Expected<HeaderTy> parseHeader(llvm::StringRef Json, uint64_t FileSize);

/// Reads and validates the header of the open file \p Fd (named \p Path in
/// errors): fstat, then pread of the length and of the header.
llvm::Expected<HeaderTy> readHeader(int Fd, llvm::StringRef Path);

/// Read exactly \p Size bytes of \p Fd (the file \p Path, for messages) at
/// \p Offset into \p Buf, retrying interrupted and short reads; end of file
/// first is an error.
llvm::Error preadFull(int Fd, char *Buf, uint64_t Size, uint64_t Offset,
                      llvm::StringRef Path);

} // namespace safetensors
} // namespace offloadio

#endif // OFFLOADIO_EXAMPLES_CHECKPOINT_SAFETENSORS_H

// SPDX-License-Identifier: Apache-2.0
//
// The safetensors file format: an 8-byte little-endian header length N, N
// bytes of JSON header, then the data section. The header maps each tensor
// name to {"dtype", "shape", "data_offsets": [begin, end)} with offsets
// relative to the data section; an optional "__metadata__" object holds
// string values. This file models the header and parses and validates it:
// a header that passes parseHeader describes tensors that lie inside the
// file, do not overlap, and whose byte length matches their shape and
// dtype. The limits are the public ones of ompx_safetensors.h.
#ifndef OMPX_IO_SAFETENSORSHEADER_H
#define OMPX_IO_SAFETENSORSHEADER_H

#include "ompx_safetensors.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ompxio {
namespace safetensors {

/// Bytes of the little-endian header length that starts every file.
constexpr uint64_t HeaderLengthBytes = 8;
/// Longest header accepted: a length above it is taken for a corrupt or
/// foreign file rather than allocated.
constexpr uint64_t MaxHeaderLength = OMPX_SAFETENSORS_MAX_HEADER_BYTES;
/// Deepest nesting of arrays and objects that a header may have. Real
/// headers nest three deep (the header, a tensor, its shape); the limit
/// refuses hostile nesting at once, with a message that names it. The
/// reference implementation's JSON parser has a limit of the same size.
constexpr unsigned MaxHeaderDepth = OMPX_SAFETENSORS_MAX_DEPTH;
/// What parsing a header may allocate for what it keeps (tensors, names,
/// shapes, metadata): this many bytes per header byte, plus
/// ParseBytesAllowance. Real headers need about two.
constexpr uint64_t ParseBytesPerHeaderByte = 4;
/// See ParseBytesPerHeaderByte: room for small headers with metadata.
constexpr uint64_t ParseBytesAllowance = 1ull << 20;
/// The header key that holds the file's string metadata.
constexpr std::string_view MetadataKey = "__metadata__";

/// The element types of the format, numbered as enum ompx_safetensors_dtype.
enum class DTypeTy {
  BOOL = OMPX_SAFETENSORS_BOOL,
  U8 = OMPX_SAFETENSORS_U8,
  I8 = OMPX_SAFETENSORS_I8,
  F8_E4M3 = OMPX_SAFETENSORS_F8_E4M3,
  F8_E5M2 = OMPX_SAFETENSORS_F8_E5M2,
  I16 = OMPX_SAFETENSORS_I16,
  U16 = OMPX_SAFETENSORS_U16,
  F16 = OMPX_SAFETENSORS_F16,
  BF16 = OMPX_SAFETENSORS_BF16,
  I32 = OMPX_SAFETENSORS_I32,
  U32 = OMPX_SAFETENSORS_U32,
  F32 = OMPX_SAFETENSORS_F32,
  F64 = OMPX_SAFETENSORS_F64,
  I64 = OMPX_SAFETENSORS_I64,
  U64 = OMPX_SAFETENSORS_U64,
};

/// How a step failed: an errno (0: it did not) and a message.
struct ErrorTy {
  int Errno = 0;
  std::string Message;

  /// True for a failure.
  explicit operator bool() const { return Errno != 0; }
};

/// The header's spelling of \p DType ("F32").
std::string_view dtypeName(DTypeTy DType);
/// Bytes of one element of \p DType.
uint64_t dtypeSize(DTypeTy DType);
/// The dtype spelled \p Name, or std::nullopt for an unknown spelling.
std::optional<DTypeTy> dtypeFromName(std::string_view Name);
/// The dtype numbered \p Number (an enum ompx_safetensors_dtype), or
/// std::nullopt.
std::optional<DTypeTy> dtypeFromNumber(int Number);

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

/// A parsed header.
struct HeaderTy {
  /// In file order (ascending Begin).
  std::vector<TensorInfoTy> Tensors;
  /// "__metadata__" entries, sorted by key.
  std::vector<std::pair<std::string, std::string>> Metadata;
  /// Bytes of the JSON header (N).
  uint64_t HeaderLength = 0;

  /// File offset of the data section: 8 + HeaderLength.
  uint64_t dataOffset() const { return HeaderLengthBytes + HeaderLength; }
  /// Bytes of the data section the tensors span (the largest End).
  uint64_t dataBytes() const;
};

/// \p Text from a file as a message shows it: control characters escaped,
/// and cut (at a character boundary) after 200 bytes, with its length, as
/// a name or a number may be as long as the header.
std::string shownText(std::string_view Text);

/// Sets \p Bytes to what \p Shape of \p DType occupies; EOVERFLOW naming
/// \p Name when the product overflows 64 bits.
ErrorTy tensorBytes(std::string_view Name, DTypeTy DType,
                    const std::vector<uint64_t> &Shape, uint64_t &Bytes);

/// Sets \p Length to the header length N from the file's first bytes
/// \p Prefix, checked against \p FileSize: the file holds the 8-byte length
/// and N more bytes (else EINVAL), and N is at most MaxHeaderLength (else
/// EOVERFLOW).
ErrorTy parseHeaderLength(std::string_view Prefix, uint64_t FileSize,
                          uint64_t &Length);

/// Parses and validates the JSON header \p Json of a file of \p FileSize
/// bytes into \p Header. Errors name the tensor and the problem: not UTF-8,
/// not JSON, not an object, a missing, repeated or wrongly typed field, an
/// unknown dtype, a negative or non-integer dimension or offset, offsets
/// outside the data section, begin > end, overlapping tensors, a byte
/// length that is not product(shape) times the dtype size, metadata that
/// is not an object of strings or that appears twice (EINVAL); nesting
/// deeper than MaxHeaderDepth, a dimension, offset or byte size over 64
/// bits, more memory needed than ParseBytesPerHeaderByte allows
/// (EOVERFLOW). Every tensor entry must be valid; of entries with the same
/// name the last one describes the tensor, and of metadata keys given twice
/// the last value counts, as in the reference implementation. Costs time
/// linear in the header's length (and a sort of the names); besides the
/// header, memory for one decoded string at a time and what the parser
/// keeps, within ParseBytesPerHeaderByte.
ErrorTy parseHeader(std::string_view Json, uint64_t FileSize,
                    HeaderTy &Header);

/// Reads and validates the header of the open file \p Fd into \p Header:
/// fstat, then pread of the length and of the header. Messages start with
/// \p Path.
ErrorTy readHeader(int Fd, const std::string &Path, HeaderTy &Header);

/// Reads exactly \p Size bytes of \p Fd (the file \p Path, for messages) at
/// \p Offset into \p Buf, retrying interrupted and short reads; end of file
/// first is EIO.
ErrorTy preadFull(int Fd, char *Buf, uint64_t Size, uint64_t Offset,
                  const std::string &Path);

} // namespace safetensors
} // namespace ompxio

#endif // OMPX_IO_SAFETENSORSHEADER_H

// SPDX-License-Identifier: Apache-2.0
//
// Writing safetensors headers: the model of a header to write (tensors in
// any order, their offsets laid out back to back) and its serialisation.
// Reading is libompx_io's (ompx_safetensors.h); the dtypes' names and sizes
// come from there too.
#ifndef OFFLOADIO_EXAMPLES_CHECKPOINT_SAFETENSORSWRITER_H
#define OFFLOADIO_EXAMPLES_CHECKPOINT_SAFETENSORSWRITER_H

#include "ompx_safetensors.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace offloadio {
namespace checkpoint {

/// Bytes of the little-endian header length that starts every file.
constexpr uint64_t HeaderLengthBytes = 8;

/// One tensor of a header to write.
struct TensorSpecTy {
  std::string Name;
  int DType = OMPX_SAFETENSORS_U8; ///< An enum ompx_safetensors_dtype.
  std::vector<uint64_t> Shape;
  /// Byte range [Begin, End) relative to the data section.
  uint64_t Begin = 0;
  uint64_t End = 0;

  /// End - Begin.
  uint64_t bytes() const { return End - Begin; }
};

/// A header to write.
struct HeaderSpecTy {
  std::vector<TensorSpecTy> Tensors;
  /// "__metadata__" entries.
  std::vector<std::pair<std::string, std::string>> Metadata;
  /// Bytes of the JSON header (N); set by serializeHeader.
  uint64_t HeaderLength = 0;

  /// File offset of the data section: 8 + HeaderLength.
  uint64_t dataOffset() const { return HeaderLengthBytes + HeaderLength; }
  /// Bytes of the data section the tensors span (the largest End).
  uint64_t dataBytes() const;
};

/// Lays out \p Tensors back to back in their order from offset 0, setting
/// each one's Begin and End from its shape and dtype; an error names the
/// tensor whose size overflows 64 bits.
llvm::Error layOutContiguously(std::vector<TensorSpecTy> &Tensors);

/// The file's first 8 + N bytes for \p Header: the length, then the JSON
/// header padded with spaces so that the data section starts at a multiple
/// of \p Alignment (a power of two, at least 8). Sets Header.HeaderLength.
std::string serializeHeader(HeaderSpecTy &Header, uint64_t Alignment = 8);

} // namespace checkpoint
} // namespace offloadio

#endif // OFFLOADIO_EXAMPLES_CHECKPOINT_SAFETENSORSWRITER_H

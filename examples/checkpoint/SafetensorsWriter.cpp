// SPDX-License-Identifier: Apache-2.0
#include "SafetensorsWriter.h"

#include "llvm/Support/Endian.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cassert>

namespace offloadio {
namespace checkpoint {

namespace {

llvm::Error overflow(const std::string &Name, const char *What) {
  return llvm::createStringError(std::make_error_code(std::errc::value_too_large),
                                 "tensor '" + Name + "': " + What +
                                     " overflows 64 bits");
}

} // namespace

uint64_t HeaderSpecTy::dataBytes() const {
  uint64_t Max = 0;
  for (const TensorSpecTy &T : Tensors)
    Max = std::max(Max, T.End);
  return Max;
}

llvm::Error layOutContiguously(std::vector<TensorSpecTy> &Tensors) {
  uint64_t Offset = 0;
  for (TensorSpecTy &T : Tensors) {
    uint64_t Bytes = ompx_safetensors_dtype_size(T.DType);
    assert(Bytes && "a dtype of ompx_safetensors.h");
    for (uint64_t Dim : T.Shape)
      if (__builtin_mul_overflow(Bytes, Dim, &Bytes))
        return overflow(T.Name, "the shape's byte size");
    T.Begin = Offset;
    if (__builtin_add_overflow(Offset, Bytes, &Offset))
      return overflow(T.Name, "the data section's size");
    T.End = Offset;
  }
  return llvm::Error::success();
}

std::string serializeHeader(HeaderSpecTy &Header, uint64_t Alignment) {
  assert(Alignment >= 8 && (Alignment & (Alignment - 1)) == 0 &&
         "alignment must be a power of two, at least 8");
  std::string Json;
  llvm::raw_string_ostream OS(Json);
  llvm::json::OStream J(OS);
  J.object([&] {
    if (!Header.Metadata.empty())
      J.attributeObject("__metadata__", [&] {
        for (const auto &KV : Header.Metadata)
          J.attribute(KV.first, KV.second);
      });
    for (const TensorSpecTy &T : Header.Tensors)
      J.attributeObject(T.Name, [&] {
        J.attribute("dtype", ompx_safetensors_dtype_name(T.DType));
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

} // namespace checkpoint
} // namespace offloadio

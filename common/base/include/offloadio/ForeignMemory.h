// SPDX-License-Identifier: Apache-2.0
//
// Memory that the program did not allocate through OpenMP (cudaMalloc,
// PyTorch's caching allocator, CuPy, hipMalloc, a NumPy array for the host
// device), as the vendor's pointer query describes it. The file API accepts
// such memory when it belongs to the device asked; the bounds are the
// vendor's allocation, so a transfer past its end is refused (EFAULT).
// Freeing such memory while a transfer uses it is the caller's contract:
// only frees through OpenMP wait for transfers in flight.
#ifndef OFFLOADIO_FOREIGNMEMORY_H
#define OFFLOADIO_FOREIGNMEMORY_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace offloadio {

/// The vendor's answer for one pointer.
struct ForeignMemoryTy {
  enum class OwnerTy {
    /// The vendor does not know the pointer (or the backend cannot ask).
    Unknown,
    /// Memory of this device, in the context the plugin uses.
    ThisDevice,
    /// Memory of another device, or of this device in another context:
    /// OwnerName says whose.
    Elsewhere,
  };
  OwnerTy Owner = OwnerTy::Unknown;
  /// The vendor's allocation containing the pointer (ThisDevice).
  const void *Base = nullptr;
  size_t Size = 0;
  /// Whose memory it is, for the refusal (Elsewhere): "CUDA device 1",
  /// "CUDA device 0 in another context", or why it was not accepted.
  std::string OwnerName;

  /// Bytes from \p Ptr to the end of the allocation (ThisDevice).
  size_t bytesFrom(const void *Ptr) const {
    uintptr_t End = reinterpret_cast<uintptr_t>(Base) + Size;
    uintptr_t At = reinterpret_cast<uintptr_t>(Ptr);
    return At < End ? End - At : 0;
  }
};

} // namespace offloadio

#endif // OFFLOADIO_FOREIGNMEMORY_H

// SPDX-License-Identifier: Apache-2.0
//
// Saving device buffers as a safetensors file with one ompx_io batch: the
// header from host memory and every tensor from device memory in the same
// batch. Loading is libompx_io's (ompx_safetensors_load).
#ifndef OFFLOADIO_EXAMPLES_CHECKPOINT_CHECKPOINTIO_H
#define OFFLOADIO_EXAMPLES_CHECKPOINT_CHECKPOINTIO_H

#include "SafetensorsWriter.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace offloadio {
namespace checkpoint {

/// Memory of one OpenMP device from omp_target_alloc, freed on
/// destruction. Empty (no pointer) for zero bytes.
class DeviceBufferTy {
public:
  DeviceBufferTy() = default;
  DeviceBufferTy(const DeviceBufferTy &) = delete;
  DeviceBufferTy &operator=(const DeviceBufferTy &) = delete;
  DeviceBufferTy(DeviceBufferTy &&Other) noexcept;
  DeviceBufferTy &operator=(DeviceBufferTy &&Other) noexcept;
  ~DeviceBufferTy();

  /// \p Bytes of memory of \p Device; an error names the size and device.
  static llvm::Expected<DeviceBufferTy> allocate(uint64_t Bytes, int Device);

  void *data() const { return Ptr; }
  uint64_t size() const { return Bytes; }
  int device() const { return Device; }

private:
  void release();

  void *Ptr = nullptr;
  uint64_t Bytes = 0;
  int Device = 0;
};

/// Writes \p Header (laid out already: offsets set) and, for each tensor,
/// the contents of the buffer at the same index of \p Buffers, to a new file
/// \p Path, in one batch. The data section starts at a multiple of
/// \p Alignment.
llvm::Error saveCheckpoint(llvm::StringRef Path,
                           HeaderSpecTy &Header,
                           llvm::ArrayRef<DeviceBufferTy> Buffers,
                           uint64_t Alignment = 8);

} // namespace checkpoint
} // namespace offloadio

#endif // OFFLOADIO_EXAMPLES_CHECKPOINT_CHECKPOINTIO_H

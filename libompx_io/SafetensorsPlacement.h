// SPDX-License-Identifier: Apache-2.0
//
// The device memory of a sharded load: each tensor with its device and the
// memory allocated for it there, owned until the placement is destroyed.
// What ompx_safetensors_placement_t points to. The allocation calls are
// passed in, so that tests can substitute them.
#ifndef OMPX_IO_SAFETENSORSPLACEMENT_H
#define OMPX_IO_SAFETENSORSPLACEMENT_H

#include "SafetensorsHeader.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ompxio {
namespace safetensors {

/// The calls that allocate and free memory of an OpenMP device.
struct DeviceMemoryTy {
  /// omp_target_alloc: \p Bytes of \p Device, or null.
  void *(*Alloc)(size_t Bytes, int Device) = nullptr;
  /// omp_target_free.
  void (*Free)(void *Ptr, int Device) = nullptr;
};

/// One tensor of a placement.
struct PlacedTensorTy {
  std::string Name;
  /// The path of its file, for messages.
  std::string File;
  /// Its number in the checkpoint.
  size_t Index = 0;
  int Device = 0;
  uint64_t Bytes = 0;
  /// Memory of Device, Bytes long; null for an empty tensor.
  void *Ptr = nullptr;
};

/// The tensors of one sharded load and the device memory they own.
class PlacementTy {
public:
  explicit PlacementTy(DeviceMemoryTy Memory) : Memory(Memory) {}
  PlacementTy(const PlacementTy &) = delete;
  PlacementTy &operator=(const PlacementTy &) = delete;
  /// Frees the memory of every tensor.
  ~PlacementTy() { release(); }

  /// Appends a tensor, no memory yet. Names must differ.
  void add(PlacedTensorTy Tensor) { Tensors.push_back(std::move(Tensor)); }

  /// Allocates the memory of every tensor that has bytes, in order. On the
  /// first allocation that fails, frees all allocated before and fails
  /// with ENOMEM naming the tensor, its file, the size and the device.
  ErrorTy allocate();

  /// The tensors, in the order added.
  const std::vector<PlacedTensorTy> &tensors() const { return Tensors; }

  /// The position of the tensor named \p Name, if any.
  std::optional<size_t> find(std::string_view Name) const;

private:
  void release();

  DeviceMemoryTy Memory;
  std::vector<PlacedTensorTy> Tensors;
  /// Positions sorted by name, for find: made by allocate.
  std::vector<size_t> ByName;
};

} // namespace safetensors
} // namespace ompxio

#endif // OMPX_IO_SAFETENSORSPLACEMENT_H

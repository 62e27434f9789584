// SPDX-License-Identifier: Apache-2.0
#include "SafetensorsPlacement.h"

#include <algorithm>
#include <cerrno>
#include <numeric>

using namespace ompxio::safetensors;

ErrorTy PlacementTy::allocate() {
  size_t Allocated = 0;
  for (PlacedTensorTy &T : Tensors) {
    if (T.Bytes == 0)
      continue;
    T.Ptr = Memory.Alloc(size_t(T.Bytes), T.Device);
    if (!T.Ptr) {
      release();
      return {ENOMEM, "tensor '" + shownText(T.Name) + "' of " + T.File +
                          ": omp_target_alloc(" + std::to_string(T.Bytes) +
                          " bytes, device " + std::to_string(T.Device) +
                          ") returned NULL; the " + std::to_string(Allocated) +
                          " allocations made before it were freed"};
    }
    ++Allocated;
  }
  ByName.resize(Tensors.size());
  std::iota(ByName.begin(), ByName.end(), size_t(0));
  std::sort(ByName.begin(), ByName.end(), [&](size_t A, size_t B) {
    return Tensors[A].Name < Tensors[B].Name;
  });
  return {};
}

std::optional<size_t> PlacementTy::find(std::string_view Name) const {
  auto It = std::lower_bound(
      ByName.begin(), ByName.end(), Name,
      [&](size_t I, std::string_view N) { return Tensors[I].Name < N; });
  if (It == ByName.end() || Tensors[*It].Name != Name)
    return std::nullopt;
  return *It;
}

void PlacementTy::release() {
  int SavedErrno = errno;
  for (PlacedTensorTy &T : Tensors) {
    if (T.Ptr)
      Memory.Free(T.Ptr, T.Device);
    T.Ptr = nullptr;
  }
  errno = SavedErrno;
}

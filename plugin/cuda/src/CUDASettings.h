// SPDX-License-Identifier: Apache-2.0
//
// Every environment variable of the CUDA plugin, with its default and its
// valid values, read once per device when the device initialises.
#ifndef OFFLOADIO_CUDA_CUDASETTINGS_H
#define OFFLOADIO_CUDA_CUDASETTINGS_H

#include <cstdint>

namespace offloadio {
namespace cuda {

/// The settings of one CUDA device.
struct CUDASettingsTy {
  /// OFFLOADIO_CUDA_GRAPHS: kernels launched again on a stream are replayed
  /// from one-node graphs (where the driver has the graph functions).
  /// Boolean; default on.
  bool Graphs = GraphsDefault;
  static constexpr const char *GraphsVar = "OFFLOADIO_CUDA_GRAPHS";
  static constexpr bool GraphsDefault = true;

  /// OFFLOADIO_CUDA_COMPLETION_FLAG: streams write a word to pinned host
  /// memory after their work, and synchronize polls it. Boolean; default on.
  bool CompletionFlag = CompletionFlagDefault;
  static constexpr const char *CompletionFlagVar =
      "OFFLOADIO_CUDA_COMPLETION_FLAG";
  static constexpr bool CompletionFlagDefault = true;

  /// LIBOMPTARGET_STACK_SIZE: CU_LIMIT_STACK_SIZE in bytes per thread. A
  /// size (K/M/G suffixes) from 0 to UINT64_MAX; default 0, which keeps the
  /// driver's default.
  uint64_t StackSize = StackSizeDefault;
  static constexpr const char *StackSizeVar = "LIBOMPTARGET_STACK_SIZE";
  static constexpr uint64_t StackSizeDefault = 0;
  static constexpr uint64_t StackSizeMin = 0;
  static constexpr uint64_t StackSizeMax = UINT64_MAX;

  /// LIBOMPTARGET_HEAP_SIZE: CU_LIMIT_MALLOC_HEAP_SIZE in bytes. A size
  /// (K/M/G suffixes) from 0 to UINT64_MAX; default 0, which keeps the
  /// driver's default.
  uint64_t HeapSize = HeapSizeDefault;
  static constexpr const char *HeapSizeVar = "LIBOMPTARGET_HEAP_SIZE";
  static constexpr uint64_t HeapSizeDefault = 0;
  static constexpr uint64_t HeapSizeMin = 0;
  static constexpr uint64_t HeapSizeMax = UINT64_MAX;

  /// Read every variable above once, in the order they are declared;
  /// invalid values are reported on stderr and give the default.
  static CUDASettingsTy fromEnv();
};

} // namespace cuda
} // namespace offloadio

#endif // OFFLOADIO_CUDA_CUDASETTINGS_H

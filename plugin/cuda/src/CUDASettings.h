// SPDX-License-Identifier: Apache-2.0
//
// Every environment variable of the CUDA plugin, read once per device when
// the device initialises; each is declared, with its default and valid
// values, in offloadio/Settings.def.
#ifndef OFFLOADIO_CUDA_CUDASETTINGS_H
#define OFFLOADIO_CUDA_CUDASETTINGS_H

#include "offloadio/SettingTable.h"

#include <cstdint>

namespace offloadio {
namespace cuda {

/// The settings of one CUDA device.
struct CUDASettingsTy {
  /// OFFLOADIO_CUDA_GRAPHS: kernels launched again on a stream are replayed
  /// from one-node graphs (where the driver has the graph functions).
  /// Boolean; default on.
  bool Graphs = settingDecl(SettingId::CUDAGraphs).Default != 0;

  /// OFFLOADIO_CUDA_COMPLETION_FLAG: streams write a word to pinned host
  /// memory after their work, and synchronize polls it. Boolean; default on.
  bool CompletionFlag = settingDecl(SettingId::CUDACompletionFlag).Default != 0;

  /// LIBOMPTARGET_STACK_SIZE: CU_LIMIT_STACK_SIZE in bytes per thread. A
  /// size (K/M/G suffixes) from 0 to UINT64_MAX; default 0, which keeps the
  /// driver's default.
  uint64_t StackSize = settingDecl(SettingId::CUDAStackSize).Default;

  /// LIBOMPTARGET_HEAP_SIZE: CU_LIMIT_MALLOC_HEAP_SIZE in bytes. A size
  /// (K/M/G suffixes) from 0 to UINT64_MAX; default 0, which keeps the
  /// driver's default.
  uint64_t HeapSize = settingDecl(SettingId::CUDAHeapSize).Default;

  /// Read every variable above once, in the order they are declared;
  /// invalid values are reported on stderr and give the default.
  static CUDASettingsTy fromEnv();
};

} // namespace cuda
} // namespace offloadio

#endif // OFFLOADIO_CUDA_CUDASETTINGS_H

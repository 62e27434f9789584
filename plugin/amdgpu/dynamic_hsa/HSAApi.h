// SPDX-License-Identifier: Apache-2.0
//
// The HSA runtime as a table of function pointers, filled by dlopen/dlsym at
// plugin initialisation. The plugin never links libhsa-runtime64: without
// the runtime (or without GPUs) it loads and reports zero devices.
//
// The declarations come from the ROCm 5.2 headers. Calls that arrived in
// later HSA_AMD interface versions are declared here (and only here) and
// resolved if the loaded runtime has them, else left null.
#ifndef OFFLOADIO_AMDGPU_HSAAPI_H
#define OFFLOADIO_AMDGPU_HSAAPI_H

#include "offloadio/Error.h"

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#include <memory>
#include <string>

//===----------------------------------------------------------------------===//
// Declarations newer than the headers we build against.
//===----------------------------------------------------------------------===//

extern "C" {
#if HSA_AMD_INTERFACE_VERSION_MAJOR == 1 && HSA_AMD_INTERFACE_VERSION_MINOR < 2
/// SDMA engine selector of hsa_amd_memory_async_copy_on_engine (1.2).
typedef enum hsa_amd_sdma_engine_id {
  HSA_AMD_SDMA_ENGINE_0 = 0x1,
  HSA_AMD_SDMA_ENGINE_1 = 0x2,
  HSA_AMD_SDMA_ENGINE_2 = 0x4,
  HSA_AMD_SDMA_ENGINE_3 = 0x8,
} hsa_amd_sdma_engine_id_t;
#endif
#if HSA_AMD_INTERFACE_VERSION_MAJOR == 1 && HSA_AMD_INTERFACE_VERSION_MINOR < 14
/// File handle of the experimental AIS file IO calls (1.14).
typedef union hsa_amd_ais_file_handle_s {
  void *handle;
  int fd;
  uint8_t pad[8];
} hsa_amd_ais_file_handle_t;
#endif
} // extern "C"

namespace offloadio {
namespace amdgpu {

/// HSA_AMD_AGENT_INFO_TIMESTAMP_FREQUENCY (uint64_t, Hz): the rate of the
/// agent's steady clock, newer than the headers we build against; runtimes
/// that do not know it refuse the query.
constexpr int AgentInfoTimestampFrequency = 0xA016;

/// hsa_amd_memory_async_copy_on_engine (interface 1.2).
using HSAAsyncCopyOnEngineFnTy = hsa_status_t (*)(
    void *Dst, hsa_agent_t DstAgent, const void *Src, hsa_agent_t SrcAgent,
    size_t Size, uint32_t NumDepSignals, const hsa_signal_t *DepSignals,
    hsa_signal_t CompletionSignal, hsa_amd_sdma_engine_id_t EngineId,
    bool ForceCopyOnSdma);
/// hsa_amd_memory_copy_engine_status (interface 1.2).
using HSACopyEngineStatusFnTy = hsa_status_t (*)(hsa_agent_t DstAgent,
                                                 hsa_agent_t SrcAgent,
                                                 uint32_t *EngineIdsMask);
/// hsa_amd_ais_file_read / hsa_amd_ais_file_write (interface 1.14).
using HSAAisFileIOFnTy = hsa_status_t (*)(hsa_amd_ais_file_handle_t Handle,
                                          void *DevicePtr, uint64_t Size,
                                          int64_t FileOffset,
                                          uint64_t *SizeCopied,
                                          int32_t *Status);

/// Every call the plugin requires, as X(name).
#define OFFLOADIO_HSA_REQUIRED_CALLS(X)                                        \
  X(hsa_init)                                                                  \
  X(hsa_shut_down)                                                             \
  X(hsa_status_string)                                                         \
  X(hsa_system_get_info)                                                       \
  X(hsa_iterate_agents)                                                        \
  X(hsa_agent_get_info)                                                        \
  X(hsa_agent_iterate_isas)                                                    \
  X(hsa_isa_get_info_alt)                                                      \
  X(hsa_amd_agent_iterate_memory_pools)                                        \
  X(hsa_amd_memory_pool_get_info)                                              \
  X(hsa_amd_agent_memory_pool_get_info)                                        \
  X(hsa_amd_memory_pool_allocate)                                              \
  X(hsa_amd_memory_pool_free)                                                  \
  X(hsa_amd_agents_allow_access)                                               \
  X(hsa_amd_memory_lock_to_pool)                                               \
  X(hsa_amd_memory_unlock)                                                     \
  X(hsa_amd_pointer_info)                                                      \
  X(hsa_amd_memory_async_copy)                                                 \
  X(hsa_signal_create)                                                         \
  X(hsa_signal_destroy)                                                        \
  X(hsa_signal_load_scacquire)                                                 \
  X(hsa_signal_store_relaxed)                                                  \
  X(hsa_signal_store_screlease)                                                \
  X(hsa_signal_subtract_screlease)                                             \
  X(hsa_signal_wait_scacquire)                                                 \
  X(hsa_amd_signal_async_handler)                                              \
  X(hsa_queue_create)                                                          \
  X(hsa_queue_destroy)                                                         \
  X(hsa_queue_add_write_index_relaxed)                                         \
  X(hsa_queue_load_read_index_scacquire)                                       \
  X(hsa_code_object_reader_create_from_memory)                                 \
  X(hsa_code_object_reader_destroy)                                            \
  X(hsa_executable_create_alt)                                                 \
  X(hsa_executable_load_agent_code_object)                                     \
  X(hsa_executable_freeze)                                                     \
  X(hsa_executable_get_symbol_by_name)                                         \
  X(hsa_executable_symbol_get_info)                                            \
  X(hsa_executable_destroy)

/// The loaded HSA runtime. One instance per plugin, passed by reference.
struct HSAApiTy {
#define OFFLOADIO_HSA_DECLARE(Name) decltype(&::Name) Name = nullptr;
  OFFLOADIO_HSA_REQUIRED_CALLS(OFFLOADIO_HSA_DECLARE)
#undef OFFLOADIO_HSA_DECLARE

  /// Optional calls: null when the runtime predates them.
  HSAAsyncCopyOnEngineFnTy hsa_amd_memory_async_copy_on_engine = nullptr;
  HSACopyEngineStatusFnTy hsa_amd_memory_copy_engine_status = nullptr;
  HSAAisFileIOFnTy hsa_amd_ais_file_read = nullptr;
  HSAAisFileIOFnTy hsa_amd_ais_file_write = nullptr;

  /// The path the runtime was loaded from (for print_device_info).
  std::string LibraryPath;

  /// Load \p LibraryName and resolve every call. ErrorCode::NotFound when
  /// the library cannot be opened, BackendError when a required call is
  /// missing. The library is never closed: runtime threads may outlive us.
  static Expected<std::unique_ptr<HSAApiTy>>
  load(const char *LibraryName = "libhsa-runtime64.so.1");

  /// "HSA_STATUS_...: description (0x....)" for \p Status.
  std::string describe(hsa_status_t Status) const;
};

/// Error for a failed HSA call: names the call, the runtime's text for
/// \p Status, and the context formatted from \p Fmt (pointer, size, device).
/// HSA_STATUS_ERROR_NOT_INITIALIZED, the runtime's answer once hsa_shut_down
/// took it down (the plugin initialised it at load), is
/// ErrorCode::DriverShutDown (TeardownTy decides what a teardown does with
/// it).
template <typename... ArgsTy>
Error checkHSA(const HSAApiTy &Api, hsa_status_t Status, const char *Call,
               const char *Fmt, ArgsTy &&...Args) {
  if (Status == HSA_STATUS_SUCCESS)
    return Error::success();
  // Memory running out is the program's to handle (ENOMEM for ompx_io, as
  // on the other backends), not a malfunction of the runtime.
  ErrorCode Code = Status == HSA_STATUS_ERROR_OUT_OF_RESOURCES
                       ? ErrorCode::OutOfResources
                   : Status == HSA_STATUS_ERROR_NOT_INITIALIZED
                       ? ErrorCode::DriverShutDown
                       : ErrorCode::BackendError;
  return makeError(Code, "{0} failed: {1}: {2}{3}", Call,
                   llvm::formatv(Fmt, std::forward<ArgsTy>(Args)...).str(),
                   Api.describe(Status),
                   Code == ErrorCode::DriverShutDown
                       ? " (the HSA runtime was shut down, as at the "
                         "process's exit)"
                       : "");
}

} // namespace amdgpu
} // namespace offloadio

#endif // OFFLOADIO_AMDGPU_HSAAPI_H

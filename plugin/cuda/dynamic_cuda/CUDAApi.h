// SPDX-License-Identifier: Apache-2.0
//
// The CUDA driver API as a table of function pointers filled at run time
// from libcuda.so.1. The plugin never links libcuda: a machine without the
// NVIDIA driver must still load it (and see 0 devices). This shim is the only
// place that knows about driver or header versions.
#ifndef OFFLOADIO_CUDA_CUDAAPI_H
#define OFFLOADIO_CUDA_CUDAAPI_H

#include "offloadio/Error.h"

#include <cuda.h>

#include <memory>
#include <string>

#if !defined(CUDA_VERSION) || CUDA_VERSION < 11040
#error "the cuda plugin needs cuda.h from CUDA 11.4 or later"
#endif

namespace offloadio {
namespace cuda {

/// Every driver function the plugin calls, by its cuda.h name.
///
/// cuda.h #defines many names to their current ABI version (cuMemAlloc is
/// cuMemAlloc_v2, cuMemHostRegister is cuMemHostRegister_v2, ...). The names
/// below go through those macros, so the table's member, its type and the
/// symbol looked up in libcuda all come from the same prototype: a call
/// written Api.cuMemAlloc(...) uses cuMemAlloc_v2's signature and the
/// cuMemAlloc_v2 entry point, as a program linked against libcuda would.
/// Only functions that are not deprecated in cuda.h belong here.
#define OFFLOADIO_CUDA_FUNCTIONS(X)                                            \
  X(cuInit)                                                                    \
  X(cuDriverGetVersion)                                                        \
  X(cuGetErrorName)                                                            \
  X(cuGetErrorString)                                                          \
  X(cuDeviceGetCount)                                                          \
  X(cuDeviceGet)                                                               \
  X(cuDeviceGetName)                                                           \
  X(cuDeviceGetAttribute)                                                      \
  X(cuDeviceGetPCIBusId)                                                       \
  X(cuDeviceTotalMem)                                                          \
  X(cuDeviceCanAccessPeer)                                                     \
  X(cuCtxEnablePeerAccess)                                                     \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuDevicePrimaryCtxRelease)                                                 \
  X(cuCtxSetCurrent)                                                           \
  X(cuCtxSetLimit)                                                             \
  X(cuMemGetInfo)                                                              \
  X(cuMemAlloc)                                                                \
  X(cuMemFree)                                                                 \
  X(cuMemAllocHost)                                                            \
  X(cuMemFreeHost)                                                             \
  X(cuMemAllocManaged)                                                         \
  X(cuMemHostRegister)                                                         \
  X(cuMemHostUnregister)                                                       \
  X(cuMemHostGetDevicePointer)                                                 \
  X(cuPointerGetAttributes)                                                    \
  X(cuMemcpyHtoD)                                                              \
  X(cuMemcpyDtoH)                                                              \
  X(cuMemcpyAsync)                                                             \
  X(cuMemcpyPeerAsync)                                                         \
  X(cuStreamCreate)                                                            \
  X(cuStreamDestroy)                                                           \
  X(cuStreamSynchronize)                                                       \
  X(cuStreamQuery)                                                             \
  X(cuStreamWaitEvent)                                                         \
  X(cuLaunchHostFunc)                                                          \
  X(cuEventCreate)                                                             \
  X(cuEventDestroy)                                                            \
  X(cuEventRecord)                                                             \
  X(cuEventSynchronize)                                                        \
  X(cuEventQuery)                                                              \
  X(cuModuleLoadDataEx)                                                        \
  X(cuModuleUnload)                                                            \
  X(cuModuleGetFunction)                                                       \
  X(cuModuleGetGlobal)                                                         \
  X(cuFuncGetAttribute)                                                        \
  X(cuLaunchKernel)

/// Functions the plugin can do without: load() leaves a missing one null,
/// and its users check. Kernel launches replayed from executable graphs
/// (CUDAGraphLauncher.h) need the cuGraph* ones (cuGraphAddKernelNode and
/// cuGraphExecKernelNodeSetParams are their _v2 forms with CUDA 12
/// headers); a stream's completion flag (CUDAStream.h) cuMemHostAlloc and
/// cuStreamWriteValue32; the driver's PTX JIT of bitcode images
/// (CUDAJIT.h) the cuLink* ones.
#define OFFLOADIO_CUDA_OPTIONAL_FUNCTIONS(X)                                   \
  X(cuGraphCreate)                                                             \
  X(cuGraphDestroy)                                                            \
  X(cuGraphAddKernelNode)                                                      \
  X(cuGraphInstantiateWithFlags)                                               \
  X(cuGraphExecKernelNodeSetParams)                                            \
  X(cuGraphExecDestroy)                                                        \
  X(cuGraphLaunch)                                                             \
  X(cuMemHostAlloc)                                                            \
  X(cuStreamWriteValue32)                                                      \
  X(cuLinkCreate)                                                              \
  X(cuLinkAddData)                                                             \
  X(cuLinkComplete)                                                            \
  X(cuLinkDestroy)

/// The driver entry points. A default-constructed table holds null pointers;
/// load() fills one from the driver library, and tests may fill one with
/// their own functions. The table is passed by reference to every class that
/// calls the driver; there is no global instance.
class CUDAApiTy {
public:
  CUDAApiTy() = default;
  CUDAApiTy(const CUDAApiTy &) = delete;
  CUDAApiTy &operator=(const CUDAApiTy &) = delete;

  /// dlopen \p Library and resolve every function of the table. Fails with
  /// ErrorCode::NotFound when the library or one of the required functions
  /// is missing (no driver installed, or a driver older than the header);
  /// optional functions that are missing stay null.
  static Expected<std::unique_ptr<CUDAApiTy>>
  load(const char *Library = "libcuda.so.1");

#define OFFLOADIO_CUDA_DECLARE(Fn) decltype(&::Fn) Fn = nullptr;
  OFFLOADIO_CUDA_FUNCTIONS(OFFLOADIO_CUDA_DECLARE)
  OFFLOADIO_CUDA_OPTIONAL_FUNCTIONS(OFFLOADIO_CUDA_DECLARE)
#undef OFFLOADIO_CUDA_DECLARE

  /// The symbolic name of \p Result ("CUDA_ERROR_OUT_OF_MEMORY"): the
  /// driver's, else the plugin's own for the results it knows (a driver
  /// that has shut down names none), else a numeric placeholder.
  std::string errorName(CUresult Result) const;
  /// The description of \p Result: the driver's, else the plugin's own
  /// for the results it knows, else "unknown error".
  std::string errorString(CUresult Result) const;

private:
  /// The library handle. It is never closed: the driver does not support
  /// being unloaded from a running process, and the plugin lives until exit.
  void *Handle = nullptr;
};

/// Check the result of driver call \p Call ("cuMemAlloc"). On failure the
/// error names the call, the CUDA error's name and description, and the
/// context formatted from \p Fmt and \p Args (pointer, size, device, ...).
/// CUDA_ERROR_DEINITIALIZED, the driver's answer once it has shut down, is
/// ErrorCode::DriverShutDown (TeardownTy decides what a teardown does
/// with it); every other failure is a BackendError.
template <typename... ArgsTy>
Error checkCU(const CUDAApiTy &Api, CUresult Result, const char *Call,
              const char *Fmt, ArgsTy &&...Args) {
  if (Result == CUDA_SUCCESS)
    return Error::success();
  bool ShutDown = Result == CUDA_ERROR_DEINITIALIZED;
  return makeError(ShutDown ? ErrorCode::DriverShutDown
                            : ErrorCode::BackendError,
                   "{0} failed with {1} ({2}{3}): {4}", Call,
                   Api.errorName(Result), Api.errorString(Result),
                   ShutDown ? ": the CUDA driver was shut down, as at the "
                              "process's exit"
                            : "",
                   llvm::formatv(Fmt, std::forward<ArgsTy>(Args)...).str());
}

} // namespace cuda
} // namespace offloadio

#endif // OFFLOADIO_CUDA_CUDAAPI_H

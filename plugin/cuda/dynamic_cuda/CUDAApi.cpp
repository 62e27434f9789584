// SPDX-License-Identifier: Apache-2.0
#include "CUDAApi.h"

#include <dlfcn.h>

using namespace offloadio;
using namespace offloadio::cuda;

// Two steps so that the argument is macro-expanded first: the name looked
// up is the versioned one cuda.h maps the function to.
#define OFFLOADIO_CUDA_STRINGIFY2(X) #X
#define OFFLOADIO_CUDA_STRINGIFY(X) OFFLOADIO_CUDA_STRINGIFY2(X)

namespace {

/// Resolve \p Name in \p Handle into \p Slot.
template <typename FnTy>
Error resolve(void *Handle, const char *Library, const char *Name, FnTy &Slot) {
  dlerror();
  void *Sym = dlsym(Handle, Name);
  if (!Sym)
    return makeError(ErrorCode::NotFound,
                     "{0} has no {1}: the driver is older than the CUDA "
                     "headers the plugin was built with",
                     Library, Name);
  Slot = reinterpret_cast<FnTy>(Sym);
  return Error::success();
}

/// Results the plugin names itself when the driver cannot (cuGetErrorName
/// and cuGetErrorString fail once the driver has shut down, which is when
/// CUDA_ERROR_DEINITIALIZED comes), each with the description
/// cuGetErrorString gives it.
#define OFFLOADIO_CUDA_KNOWN_RESULTS(X)                                        \
  X(CUDA_ERROR_INVALID_VALUE, "invalid argument")                              \
  X(CUDA_ERROR_OUT_OF_MEMORY, "out of memory")                                 \
  X(CUDA_ERROR_NOT_INITIALIZED, "initialization error")                        \
  X(CUDA_ERROR_DEINITIALIZED, "driver shutting down")                          \
  X(CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected")                \
  X(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal")                       \
  X(CUDA_ERROR_INVALID_CONTEXT, "invalid device context")                      \
  X(CUDA_ERROR_CONTEXT_IS_DESTROYED, "context is destroyed")                   \
  X(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle")                      \
  X(CUDA_ERROR_NOT_FOUND, "named symbol not found")                            \
  X(CUDA_ERROR_NOT_READY, "device not ready")                                  \
  X(CUDA_ERROR_ILLEGAL_ADDRESS, "an illegal memory access was encountered")    \
  X(CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure")                    \
  X(CUDA_ERROR_NOT_SUPPORTED, "operation not supported")                       \
  X(CUDA_ERROR_UNKNOWN, "unknown error")

struct KnownResultTy {
  const char *Name;
  const char *Description;
};

/// The plugin's own name and description of \p Result, or nulls.
KnownResultTy knownResult(CUresult Result) {
  switch (Result) {
#define OFFLOADIO_CUDA_KNOWN_RESULT(Name, Description)                         \
  case Name:                                                                   \
    return {#Name, Description};
    OFFLOADIO_CUDA_KNOWN_RESULTS(OFFLOADIO_CUDA_KNOWN_RESULT)
#undef OFFLOADIO_CUDA_KNOWN_RESULT
  default:
    return {nullptr, nullptr};
  }
}

} // namespace

Expected<std::unique_ptr<CUDAApiTy>> CUDAApiTy::load(const char *Library) {
  // RTLD_LOCAL: the driver's symbols are ours to look up, not to interpose
  // on anyone else; a program that links libcuda itself shares the instance.
  void *Handle = dlopen(Library, RTLD_NOW | RTLD_LOCAL);
  if (!Handle) {
    const char *Why = dlerror();
    return makeError(ErrorCode::NotFound, "dlopen: {0}",
                     Why ? Why : "unknown error loading the CUDA driver");
  }
  auto Api = std::make_unique<CUDAApiTy>();
  Api->Handle = Handle;
#define OFFLOADIO_CUDA_RESOLVE(Fn)                                             \
  if (auto Err =                                                               \
          resolve(Handle, Library, OFFLOADIO_CUDA_STRINGIFY(Fn), Api->Fn))     \
    return std::move(Err);
  OFFLOADIO_CUDA_FUNCTIONS(OFFLOADIO_CUDA_RESOLVE)
#undef OFFLOADIO_CUDA_RESOLVE
#define OFFLOADIO_CUDA_RESOLVE_OPTIONAL(Fn)                                    \
  Api->Fn = reinterpret_cast<decltype(Api->Fn)>(                              \
      dlsym(Handle, OFFLOADIO_CUDA_STRINGIFY(Fn)));
  OFFLOADIO_CUDA_OPTIONAL_FUNCTIONS(OFFLOADIO_CUDA_RESOLVE_OPTIONAL)
#undef OFFLOADIO_CUDA_RESOLVE_OPTIONAL
  return std::move(Api);
}

std::string CUDAApiTy::errorName(CUresult Result) const {
  const char *Name = nullptr;
  if (cuGetErrorName && cuGetErrorName(Result, &Name) == CUDA_SUCCESS && Name)
    return Name;
  if (const char *Known = knownResult(Result).Name)
    return Known;
  return "CUresult " + std::to_string(int(Result));
}

std::string CUDAApiTy::errorString(CUresult Result) const {
  const char *Text = nullptr;
  if (cuGetErrorString && cuGetErrorString(Result, &Text) == CUDA_SUCCESS &&
      Text)
    return Text;
  if (const char *Known = knownResult(Result).Description)
    return Known;
  return "unknown error";
}

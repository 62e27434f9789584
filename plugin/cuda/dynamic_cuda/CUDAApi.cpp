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
  return "CUresult " + std::to_string(int(Result));
}

std::string CUDAApiTy::errorString(CUresult Result) const {
  const char *Text = nullptr;
  if (cuGetErrorString && cuGetErrorString(Result, &Text) == CUDA_SUCCESS &&
      Text)
    return Text;
  return "unknown error";
}

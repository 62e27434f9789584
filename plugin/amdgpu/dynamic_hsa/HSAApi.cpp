// SPDX-License-Identifier: Apache-2.0
#include "HSAApi.h"

#include "llvm/Support/Format.h"

#include <dlfcn.h>
#include <link.h>

using namespace offloadio;
using namespace offloadio::amdgpu;

namespace {

/// The file the handle was loaded from, for diagnostics.
std::string pathOf(void *Handle, const char *Fallback) {
  struct link_map *Map = nullptr;
  if (dlinfo(Handle, RTLD_DI_LINKMAP, &Map) == 0 && Map && Map->l_name &&
      *Map->l_name)
    return Map->l_name;
  return Fallback;
}

} // namespace

Expected<std::unique_ptr<HSAApiTy>> HSAApiTy::load(const char *LibraryName) {
  // RTLD_LOCAL: the runtime's symbols must not interpose anyone else's.
  void *Handle = dlopen(LibraryName, RTLD_NOW | RTLD_LOCAL);
  if (!Handle)
    return makeError(ErrorCode::NotFound,
                     "cannot load the HSA runtime {0}: {1}", LibraryName,
                     dlerror());
  auto Api = std::make_unique<HSAApiTy>();
  Api->LibraryPath = pathOf(Handle, LibraryName);

#define OFFLOADIO_HSA_RESOLVE(Name)                                            \
  Api->Name = reinterpret_cast<decltype(Api->Name)>(dlsym(Handle, #Name));     \
  if (!Api->Name)                                                              \
    return makeError(ErrorCode::BackendError,                                  \
                     "the HSA runtime {0} lacks the required call " #Name,     \
                     Api->LibraryPath);
  OFFLOADIO_HSA_REQUIRED_CALLS(OFFLOADIO_HSA_RESOLVE)
#undef OFFLOADIO_HSA_RESOLVE

#define OFFLOADIO_HSA_RESOLVE_OPTIONAL(Name)                                   \
  Api->Name = reinterpret_cast<decltype(Api->Name)>(dlsym(Handle, #Name));
  OFFLOADIO_HSA_RESOLVE_OPTIONAL(hsa_amd_memory_async_copy_on_engine)
  OFFLOADIO_HSA_RESOLVE_OPTIONAL(hsa_amd_memory_copy_engine_status)
  OFFLOADIO_HSA_RESOLVE_OPTIONAL(hsa_amd_ais_file_read)
  OFFLOADIO_HSA_RESOLVE_OPTIONAL(hsa_amd_ais_file_write)
#undef OFFLOADIO_HSA_RESOLVE_OPTIONAL
  return std::move(Api);
}

std::string HSAApiTy::describe(hsa_status_t Status) const {
  const char *Text = nullptr;
  std::string Code =
      llvm::formatv("{0:x}", static_cast<unsigned>(Status)).str();
  if (hsa_status_string &&
      hsa_status_string(Status, &Text) == HSA_STATUS_SUCCESS && Text)
    return std::string(Text) + " (" + Code + ")";
  return "unknown HSA status " + Code;
}

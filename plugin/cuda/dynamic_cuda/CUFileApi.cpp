// SPDX-License-Identifier: Apache-2.0
#include "CUFileApi.h"
#include "CUDAApi.h"

#include <cerrno>
#include <cstring>
#include <dlfcn.h>

using namespace offloadio;
using namespace offloadio::cuda;

namespace {

/// Look \p Name up in \p Handle; null when absent.
template <typename FnTy> FnTy lookup(void *Handle, const char *Name) {
  dlerror();
  return reinterpret_cast<FnTy>(dlsym(Handle, Name));
}

/// Resolve required function \p Name into \p Slot.
template <typename FnTy>
Error resolve(void *Handle, const char *Library, const char *Name, FnTy &Slot) {
  Slot = lookup<FnTy>(Handle, Name);
  if (!Slot)
    return makeError(ErrorCode::NotFound, "{0} has no {1}", Library, Name);
  return Error::success();
}

} // namespace

Expected<std::unique_ptr<CUFileApiTy>> CUFileApiTy::load(const char *Library) {
  // RTLD_LOCAL: the symbols are ours to look up; a program that links
  // libcufile itself shares the same instance and driver state.
  void *Handle = dlopen(Library, RTLD_NOW | RTLD_LOCAL);
  if (!Handle) {
    const char *Why = dlerror();
    // The usual case (no GPUDirect Storage installed) gets a short reason;
    // a library that is there but does not load gets the loader's.
    if (!Why || std::strstr(Why, "No such file"))
      return makeError(ErrorCode::NotFound, "{0} not found", Library);
    return makeError(ErrorCode::NotFound, "cannot load {0}: {1}", Library, Why);
  }
  auto Api = std::make_unique<CUFileApiTy>();
  Api->Handle = Handle;
  if (auto Err = resolve(Handle, Library, "cuFileDriverOpen", Api->DriverOpen))
    return std::move(Err);
  if (auto Err =
          resolve(Handle, Library, "cuFileHandleRegister", Api->HandleRegister))
    return std::move(Err);
  if (auto Err = resolve(Handle, Library, "cuFileHandleDeregister",
                         Api->HandleDeregister))
    return std::move(Err);
  if (auto Err = resolve(Handle, Library, "cuFileRead", Api->Read))
    return std::move(Err);
  if (auto Err = resolve(Handle, Library, "cuFileWrite", Api->Write))
    return std::move(Err);
  // cuFileDriverClose_v2 is the reference-counted close (GDS 1.x, CUDA
  // 12); the old name closed the driver for the whole process.
  Api->DriverClose =
      lookup<CUFileErrorTy (*)()>(Handle, "cuFileDriverClose_v2");
  if (!Api->DriverClose)
    Api->DriverClose = lookup<CUFileErrorTy (*)()>(Handle, "cuFileDriverClose");
  return std::move(Api);
}

const char *offloadio::cuda::cuFileOpErrorName(int Code) {
  switch (Code) {
  case 0:
    return "CU_FILE_SUCCESS";
  case 5001:
    return "CU_FILE_DRIVER_NOT_INITIALIZED";
  case 5002:
    return "CU_FILE_DRIVER_INVALID_PROPS";
  case 5003:
    return "CU_FILE_DRIVER_UNSUPPORTED_LIMIT";
  case 5004:
    return "CU_FILE_DRIVER_VERSION_MISMATCH";
  case 5005:
    return "CU_FILE_DRIVER_VERSION_READ_ERROR";
  case 5006:
    return "CU_FILE_DRIVER_CLOSING";
  case 5007:
    return "CU_FILE_PLATFORM_NOT_SUPPORTED";
  case 5008:
    return "CU_FILE_IO_NOT_SUPPORTED";
  case 5009:
    return "CU_FILE_DEVICE_NOT_SUPPORTED";
  case 5010:
    return "CU_FILE_NVFS_DRIVER_ERROR";
  case 5011:
    return "CU_FILE_CUDA_DRIVER_ERROR";
  case 5012:
    return "CU_FILE_CUDA_POINTER_INVALID";
  case 5013:
    return "CU_FILE_CUDA_MEMORY_TYPE_INVALID";
  case 5014:
    return "CU_FILE_CUDA_POINTER_RANGE_ERROR";
  case 5015:
    return "CU_FILE_CUDA_CONTEXT_MISMATCH";
  case 5016:
    return "CU_FILE_INVALID_MAPPING_SIZE";
  case 5017:
    return "CU_FILE_INVALID_MAPPING_RANGE";
  case 5018:
    return "CU_FILE_INVALID_FILE_TYPE";
  case 5019:
    return "CU_FILE_INVALID_FILE_OPEN_FLAG";
  case 5020:
    return "CU_FILE_DIO_NOT_SET";
  case 5022:
    return "CU_FILE_INVALID_VALUE";
  case 5023:
    return "CU_FILE_MEMORY_ALREADY_REGISTERED";
  case 5024:
    return "CU_FILE_MEMORY_NOT_REGISTERED";
  case 5025:
    return "CU_FILE_PERMISSION_DENIED";
  case 5026:
    return "CU_FILE_DRIVER_ALREADY_OPEN";
  case 5027:
    return "CU_FILE_HANDLE_NOT_REGISTERED";
  case 5028:
    return "CU_FILE_HANDLE_ALREADY_REGISTERED";
  case 5029:
    return "CU_FILE_DEVICE_NOT_FOUND";
  case 5030:
    return "CU_FILE_INTERNAL_ERROR";
  case 5031:
    return "CU_FILE_GETNEWFD_FAILED";
  case 5033:
    return "CU_FILE_NVFS_SETUP_ERROR";
  case 5034:
    return "CU_FILE_IO_DISABLED";
  case 5035:
    return "CU_FILE_BATCH_SUBMIT_FAILED";
  case 5036:
    return "CU_FILE_GPU_MEMORY_PINNING_FAILED";
  case 5037:
    return "CU_FILE_BATCH_FULL";
  case 5038:
    return "CU_FILE_ASYNC_NOT_SUPPORTED";
  case 5043:
    return "CU_FILE_NOMEM_ERROR";
  default:
    return nullptr;
  }
}

std::string offloadio::cuda::describeCUFileError(CUFileErrorTy Err,
                                                 const CUDAApiTy *Api) {
  // Values below cuFile's base are errno values (IS_CUFILE_ERR is false).
  if (Err.Err > 0 && Err.Err < CUFileErrorBase)
    return "errno " + std::to_string(Err.Err) + " (" + std::strerror(Err.Err) +
           ")";
  const char *Name = cuFileOpErrorName(Err.Err);
  std::string S = Name
                      ? std::string(Name) + " (" + std::to_string(Err.Err) + ")"
                      : "CUfileOpError " + std::to_string(Err.Err);
  if (Err.Err == CUFileCUDADriverError)
    S += ", " + (Api ? Api->errorName(Err.CuErr)
                     : "CUresult " + std::to_string(int(Err.CuErr)));
  return S;
}

int offloadio::cuda::cuFileOpErrorErrno(int Code) {
  switch (Code) {
  // The platform, driver, file, descriptor or buffer is one cuFile cannot
  // serve (or no longer can): the staged path can.
  case 5001: // DRIVER_NOT_INITIALIZED
  case 5006: // DRIVER_CLOSING
  case 5007: // PLATFORM_NOT_SUPPORTED
  case 5008: // IO_NOT_SUPPORTED
  case 5009: // DEVICE_NOT_SUPPORTED
  case 5010: // NVFS_DRIVER_ERROR
  case 5012: // CUDA_POINTER_INVALID
  case 5013: // CUDA_MEMORY_TYPE_INVALID
  case 5014: // CUDA_POINTER_RANGE_ERROR
  case 5015: // CUDA_CONTEXT_MISMATCH
  case 5018: // INVALID_FILE_TYPE
  case 5019: // INVALID_FILE_OPEN_FLAG
  case 5020: // DIO_NOT_SET
  case 5027: // HANDLE_NOT_REGISTERED
  case 5029: // DEVICE_NOT_FOUND
  case 5033: // NVFS_SETUP_ERROR
  case 5034: // IO_DISABLED
  case 5036: // GPU_MEMORY_PINNING_FAILED
  case 5038: // ASYNC_NOT_SUPPORTED
    return ENOTSUP;
  case 5022: // INVALID_VALUE
    return EINVAL;
  case 5025: // PERMISSION_DENIED
    return EACCES;
  case 5043: // NOMEM_ERROR
    return ENOMEM;
  default:
    return EIO;
  }
}

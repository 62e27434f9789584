// SPDX-License-Identifier: Apache-2.0
#include "CUDAHostRegistry.h"

using namespace offloadio;
using namespace offloadio::cuda;

Expected<bool> CUDAHostRegistryTy::lockPages(void *Ptr, size_t Size) {
  CUresult Result = Api.cuMemHostRegister(
      Ptr, Size, CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP);
  if (Result == CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED)
    return true;
  if (auto Err =
          checkCU(Api, Result, "cuMemHostRegister",
                  "{0} bytes at {1} (pages of a pinned range)", Size, Ptr))
    return std::move(Err);
  return false;
}

Error CUDAHostRegistryTy::unlockPages(void *Ptr, size_t Size) {
  return checkCU(Api, Api.cuMemHostUnregister(Ptr), "cuMemHostUnregister",
                 "{0} bytes at {1}", Size, Ptr);
}

Expected<void *> CUDAHostRegistryTy::pin(void *HstPtr, size_t Size) {
  if (auto Err = Pages.pin(HstPtr, Size))
    return std::move(Err);
  auto Fail = [&](Error Err) -> Error {
    llvm::consumeError(Pages.unpin(HstPtr, Size));
    return Err;
  };
  // The device address of the first byte; with unified addressing (every
  // 64-bit system current drivers support) it is the host address itself.
  // A range over several registrations is usable as one only if the device
  // sees it contiguously, so check the last byte too.
  CUdeviceptr First = 0, Last = 0;
  if (auto Err = checkCU(Api, Api.cuMemHostGetDevicePointer(&First, HstPtr, 0),
                         "cuMemHostGetDevicePointer", "{0} ({1} bytes pinned)",
                         HstPtr, Size))
    return Fail(std::move(Err));
  void *LastByte = static_cast<char *>(HstPtr) + Size - 1;
  if (auto Err = checkCU(Api, Api.cuMemHostGetDevicePointer(&Last, LastByte, 0),
                         "cuMemHostGetDevicePointer",
                         "{0} (last byte of {1} bytes pinned at {2})", LastByte,
                         Size, HstPtr))
    return Fail(std::move(Err));
  if (Last - First != Size - 1)
    return Fail(makeError(ErrorCode::Unsupported,
                          "pinned range {0} ({1} bytes) is not contiguous in "
                          "the device address space ({2:x} .. {3:x})",
                          HstPtr, Size, First, Last));
  return reinterpret_cast<void *>(First);
}

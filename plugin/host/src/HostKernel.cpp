// SPDX-License-Identifier: Apache-2.0
#include "HostKernel.h"

#include "llvm/ADT/SmallVector.h"

using namespace offloadio;
using namespace offloadio::host;

Error HostKernelTy::prepare(uint32_t NumArgs) {
  std::lock_guard<std::mutex> Guard(PrepareLock);
  if (Prepared) {
    if (NumArgs != PreparedArgs)
      return makeError(ErrorCode::InvalidArgument,
                       "kernel {0} takes {1} arguments, launched with {2}",
                       getName(), PreparedArgs, NumArgs);
    return Error::success();
  }
  // Every argument of an outlined x86_64 target region is pointer-sized:
  // pointers, or scalars passed by value in a pointer slot.
  ArgTypes.assign(NumArgs, &ffi_type_pointer);
  ffi_status Status = ffi_prep_cif(&Cif, FFI_DEFAULT_ABI, NumArgs,
                                   &ffi_type_void, ArgTypes.data());
  if (Status != FFI_OK)
    return makeError(ErrorCode::BackendError,
                     "ffi_prep_cif for kernel {0} with {1} arguments failed "
                     "with status {2}",
                     getName(), NumArgs, int(Status));
  PreparedArgs = NumArgs;
  Prepared = true;
  return Error::success();
}

Error HostKernelTy::launchImpl(GenericDeviceTy &Device, void **Args,
                               uint32_t NumArgs, const LaunchDimsTy &Dims,
                               const KernelArgsTy &KernelArgs,
                               StreamTy &Stream) {
  if (auto Err = prepare(NumArgs))
    return Err;
  // Teams and threads of the region are created by libomp inside the
  // image's code, so the launch itself is one call.
  return static_cast<HostStreamTy &>(Stream).launchAsync(*this, Args, NumArgs);
}

Error HostKernelTy::run(void *const *Args, uint32_t NumArgs) const {
  // ffi_call wants a pointer to each argument value.
  llvm::SmallVector<void *, 32> Values(NumArgs);
  for (uint32_t I = 0; I < NumArgs; ++I)
    Values[I] = const_cast<void **>(&Args[I]);
  ffi_call(const_cast<ffi_cif *>(&Cif), FFI_FN(Fn), nullptr, Values.data());
  return Error::success();
}

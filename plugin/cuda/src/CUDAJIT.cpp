// SPDX-License-Identifier: Apache-2.0
#include "CUDAJIT.h"
#include "CUDADevice.h"

#include <array>

using namespace offloadio;
using namespace offloadio::cuda;

namespace {

/// Destroys a link state when it goes.
struct LinkStateTy {
  const CUDAApiTy &Api;
  CUlinkState State = nullptr;
  ~LinkStateTy() {
    // The cubin is copied (or the error made) before; a failed destroy
    // leaks only the driver's link state.
    if (State)
      (void)Api.cuLinkDestroy(State);
  }
};

} // namespace

Expected<std::unique_ptr<llvm::MemoryBuffer>>
cuda::assemblePTX(const CUDAApiTy &Api, llvm::StringRef PTX, int32_t DeviceId,
                  llvm::StringRef Arch) {
  if (!Api.cuLinkCreate || !Api.cuLinkAddData || !Api.cuLinkComplete ||
      !Api.cuLinkDestroy)
    return makeError(ErrorCode::Unsupported,
                     "the CUDA driver has no cuLink* functions to assemble "
                     "the JIT-compiled PTX for {0} on device {1}",
                     Arch, DeviceId);
  // The driver's log says why PTX does not assemble (a PTX version newer
  // than the driver knows, an unknown instruction).
  std::array<char, 4096> Log;
  Log[0] = '\0';
  CUjit_option Options[] = {CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *Values[] = {Log.data(), reinterpret_cast<void *>(Log.size())};
  LinkStateTy Link{Api};
  auto Failed = [&](CUresult Result, const char *Call) {
    Log.back() = '\0';
    return checkCU(Api, Result, Call,
                   "JIT-compiled PTX of {0} bytes for {1} on device {2}{3}{4}",
                   PTX.size(), Arch, DeviceId, Log[0] ? ": " : "", Log.data());
  };
  CUresult Result = Api.cuLinkCreate(unsigned(std::size(Options)), Options,
                                     Values, &Link.State);
  if (Result != CUDA_SUCCESS)
    return Failed(Result, "cuLinkCreate");
  // The driver reads PTX as a C string: the terminating NUL is included.
  Result = Api.cuLinkAddData(Link.State, CU_JIT_INPUT_PTX,
                             const_cast<char *>(PTX.data()), PTX.size() + 1,
                             "offloadio-jit.ptx", 0, nullptr, nullptr);
  if (Result != CUDA_SUCCESS)
    return Failed(Result, "cuLinkAddData");
  void *Cubin = nullptr;
  size_t Size = 0;
  Result = Api.cuLinkComplete(Link.State, &Cubin, &Size);
  if (Result != CUDA_SUCCESS)
    return Failed(Result, "cuLinkComplete");
  // The cubin belongs to the link state, which goes at return.
  return llvm::MemoryBuffer::getMemBufferCopy(
      llvm::StringRef(static_cast<const char *>(Cubin), Size),
      "jit-" + Arch.str() + ".cubin");
}

std::string CUDAJITTargetTy::getCPU() const { return Device.getArchName(); }

Expected<std::unique_ptr<llvm::MemoryBuffer>>
CUDAJITTargetTy::finishImage(std::unique_ptr<llvm::MemoryBuffer> Output) {
  if (auto Err = Device.setContext())
    return std::move(Err);
  return assemblePTX(Api, Output->getBuffer(), Device.getDeviceId(), getCPU());
}

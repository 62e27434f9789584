// SPDX-License-Identifier: Apache-2.0
#include "offloadio/Kernel.h"
#include "offloadio/Device.h"
#include "offloadio/ImageSymbols.h"
#include "offloadio/Stream.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"

using namespace offloadio;

const char *offloadio::execModeName(ExecModeTy Mode) {
  switch (Mode) {
  case ExecModeTy::Generic:
    return "generic";
  case ExecModeTy::SPMD:
    return "SPMD";
  case ExecModeTy::GenericSPMD:
    return "generic-SPMD";
  }
  return "unknown";
}

Expected<ExecModeTy> offloadio::readExecMode(llvm::StringRef ImageBytes,
                                             llvm::StringRef KernelName) {
  llvm::SmallString<128> Global(KernelName);
  Global += "_exec_mode";
  auto Bytes = readImageGlobal(ImageBytes, Global);
  if (!Bytes)
    return Bytes.takeError();
  // Kernels that clang's OpenMP code generation did not make have none.
  if (!*Bytes)
    return ExecModeTy::SPMD;
  if ((*Bytes)->size() != 1)
    return makeError(ErrorCode::InvalidImage,
                     "global '{0}' has {1} bytes, expected 1", Global,
                     (*Bytes)->size());
  int8_t Mode = int8_t((**Bytes)[0]);
  if (Mode < int8_t(ExecModeTy::Generic) ||
      Mode > int8_t(ExecModeTy::GenericSPMD))
    return makeError(ErrorCode::InvalidImage,
                     "kernel '{0}' has unknown execution mode {1}", KernelName,
                     int(Mode));
  return ExecModeTy(Mode);
}

GenericKernelTy::~GenericKernelTy() = default;

uint32_t GenericKernelTy::getMaxThreads(const GenericDeviceTy &Device) const {
  return Device.getLimits().MaxThreads;
}

LaunchDimsTy
GenericKernelTy::computeLaunchDims(const GenericDeviceTy &Device,
                                   const KernelArgsTy &KernelArgs) const {
  return offloadio::computeLaunchDims(Device.getLimits(), getMaxThreads(Device),
                                      ExecMode, KernelArgs);
}

Error GenericKernelTy::launch(GenericDeviceTy &Device, void **TgtArgs,
                              ptrdiff_t *TgtOffsets,
                              const KernelArgsTy &KernelArgs,
                              StreamTy &Stream) {
  // NumArgs is the TgtArgs count (libomptarget overwrites it); inline
  // storage keeps ordinary launches free of allocation.
  uint32_t NumArgs = KernelArgs.NumArgs;
  llvm::SmallVector<void *, 32> Args(NumArgs);
  for (uint32_t I = 0; I < NumArgs; ++I)
    Args[I] = static_cast<char *>(TgtArgs[I]) + TgtOffsets[I];
  LaunchDimsTy Dims = computeLaunchDims(Device, KernelArgs);
  Device.getServices().Info.print(
      InfoPluginKernel, Device.getDeviceId(),
      "launch kernel {0} with {1} args, {2} teams x {3} threads in {4} mode",
      Name, NumArgs, Dims.NumTeams, Dims.NumThreads, execModeName(ExecMode));
  if (auto Err =
          launchImpl(Device, Args.data(), NumArgs, Dims, KernelArgs, Stream))
    return Err;
  if (WritesDeviceOutput)
    Stream.noteDeviceOutput();
  return Error::success();
}

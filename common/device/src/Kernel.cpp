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

LaunchDimsTy offloadio::computeLaunchDims(const DeviceLimitsTy &Limits,
                                          uint32_t KernelMaxThreads,
                                          ExecModeTy Mode,
                                          const KernelArgsTy &KernelArgs) {
  LaunchDimsTy Dims;
  uint32_t MaxThreads =
      std::max(1u, std::min(KernelMaxThreads, Limits.MaxThreads));
  uint64_t Threads = Limits.DefaultThreads;
  if (KernelArgs.ThreadLimit[0] > 0) {
    // The device runtime gives a generic-mode team's parallel regions all
    // threads but one warp's, so the clause's count comes on top of it.
    Threads = KernelArgs.ThreadLimit[0];
    if (Mode == ExecModeTy::Generic)
      Threads += Limits.WarpSize;
  }
  Dims.NumThreads =
      uint32_t(std::max<uint64_t>(1, std::min<uint64_t>(Threads, MaxThreads)));

  uint64_t Teams;
  if (KernelArgs.NumTeams[0] > 0) {
    Teams = std::min(KernelArgs.NumTeams[0], Limits.MaxTeams);
  } else {
    Teams = Limits.DefaultTeams;
    if (uint64_t Trip = KernelArgs.Tripcount) {
      // SPMD: every thread takes one iteration. Generic and generic-SPMD:
      // the trip count is the distribute loop's alone (the nested parallel
      // loop is inside each iteration), so one team per iteration. Long
      // loops are capped at the default so that teams are reused. Rounded
      // up without the sum that wraps near 2^64.
      uint64_t TripTeams =
          Mode == ExecModeTy::SPMD
              ? Trip / Dims.NumThreads + (Trip % Dims.NumThreads != 0)
              : Trip;
      Teams = std::min<uint64_t>(TripTeams, Limits.DefaultTeams);
    }
    Teams = std::min<uint64_t>(Teams, Limits.MaxTeams);
  }
  Dims.NumTeams = uint32_t(std::max<uint64_t>(1, Teams));
  return Dims;
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

// SPDX-License-Identifier: Apache-2.0
#include "offloadio/Kernel.h"
#include "offloadio/Device.h"
#include "offloadio/DeviceRuntimeABI.h"
#include "offloadio/ImageSymbols.h"
#include "offloadio/Stream.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/SmallVector.h"

using namespace offloadio;

const char *offloadio::execModeName(ExecModeTy Mode) {
  switch (Mode) {
  case ExecModeTy::Generic:
    return "Generic";
  case ExecModeTy::SPMD:
    return "SPMD";
  case ExecModeTy::GenericSPMD:
    return "Generic-SPMD";
  }
  return "unknown";
}

GenericKernelTy::~GenericKernelTy() = default;

uint32_t GenericKernelTy::getMaxThreads(const GenericDeviceTy &Device) const {
  return Device.getLimits().MaxThreads;
}

LaunchDimsTy
GenericKernelTy::computeLaunchDims(const GenericDeviceTy &Device,
                                   const KernelArgsTy &KernelArgs) const {
  return offloadio::computeLaunchDims(
      Device.getLimits(), getMaxThreads(Device), Config,
      Device.getServices().RuntimeABI.getGeometryRules(),
      Device.getMinThreadsForLowTripCount(), KernelArgs);
}

Error GenericKernelTy::launch(GenericDeviceTy &Device, void **TgtArgs,
                              ptrdiff_t *TgtOffsets,
                              const KernelArgsTy &KernelArgs,
                              StreamTy &Stream) {
  // NumArgs is the TgtArgs count (libomptarget overwrites it); inline
  // storage keeps ordinary launches free of allocation. Where the device
  // runtime expects it, the launch environment comes first.
  const DeviceRuntimeABITy &RuntimeABI = Device.getServices().RuntimeABI;
  const uint32_t Implicit =
      RuntimeABI.passesLaunchEnvironment() && !IsGlobalCtorDtor;
  uint32_t NumArgs = KernelArgs.NumArgs + Implicit;
  llvm::SmallVector<void *, 32> Args(NumArgs);
  if (Implicit) {
    auto LaunchEnv = Device.prepareLaunchEnvironment(Config, Stream);
    if (!LaunchEnv)
      return LaunchEnv.takeError();
    Args[0] = *LaunchEnv;
  }
  for (uint32_t I = 0; I < KernelArgs.NumArgs; ++I)
    Args[Implicit + I] = static_cast<char *>(TgtArgs[I]) + TgtOffsets[I];
  LaunchDimsTy Dims = computeLaunchDims(Device, KernelArgs);
  // The stock plugins' line, word for word: programs and LLVM's tests
  // check it. The geometry is the one the stock plugin would launch (for
  // the host plugin: would report), the mode the kernel's.
  const InfoTy &Info = Device.getServices().Info;
  Info.printStock(InfoPluginKernel, Device.getDeviceId(),
                  "Launching kernel {0} with {1} blocks and {2} threads in {3} "
                  "mode",
                  Name, Dims.NumTeams, Dims.NumThreads,
                  execModeName(Config.ExecMode));
  // Ours adds the argument count, implicit ones included.
  Info.print(
      InfoPluginKernel, Device.getDeviceId(),
      "launch kernel {0} with {1} args, {2} teams x {3} threads in {4} mode",
      Name, NumArgs, Dims.NumTeams, Dims.NumThreads,
      execModeName(Config.ExecMode));
  if (auto Err =
          launchImpl(Device, Args.data(), NumArgs, Dims, KernelArgs, Stream))
    return Err;
  if (WritesDeviceOutput)
    Stream.noteDeviceOutput();
  return Error::success();
}

Error GenericKernelTy::launchAlone(GenericDeviceTy &Device, StreamTy &Stream) {
  KernelArgsTy KernelArgs = {};
  KernelArgs.Version = 2;
  LaunchDimsTy Dims;
  Device.getServices().Info.print(InfoPluginKernel, Device.getDeviceId(),
                                  "launch kernel {0} with no args, 1 team x "
                                  "1 thread",
                                  Name);
  if (auto Err = launchImpl(Device, nullptr, 0, Dims, KernelArgs, Stream))
    return Err;
  if (WritesDeviceOutput)
    Stream.noteDeviceOutput();
  return Error::success();
}

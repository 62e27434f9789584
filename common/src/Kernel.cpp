// SPDX-License-Identifier: Apache-2.0
#include "offloadio/Kernel.h"
#include "offloadio/Device.h"
#include "offloadio/Plugin.h"

#include "llvm/ADT/SmallVector.h"

using namespace offloadio;

GenericKernelTy::~GenericKernelTy() = default;

uint32_t GenericKernelTy::getMaxThreads(const GenericDeviceTy &Device) const {
  return Device.getLimits().MaxThreads;
}

LaunchDimsTy
GenericKernelTy::computeLaunchDims(const GenericDeviceTy &Device,
                                   const KernelArgsTy &KernelArgs) const {
  const DeviceLimitsTy &Limits = Device.getLimits();
  LaunchDimsTy Dims;
  uint32_t MaxThreads = std::max(1u, std::min(getMaxThreads(Device),
                                              Limits.MaxThreads));
  Dims.NumThreads = KernelArgs.ThreadLimit[0]
                        ? std::min(KernelArgs.ThreadLimit[0], MaxThreads)
                        : std::min(Limits.DefaultThreads, MaxThreads);
  Dims.NumThreads = std::max(1u, Dims.NumThreads);
  if (KernelArgs.NumTeams[0]) {
    Dims.NumTeams = std::min(KernelArgs.NumTeams[0], Limits.MaxTeams);
  } else if (KernelArgs.Tripcount) {
    // Enough teams to give each thread one iteration, within the limits.
    // Rounded-up division that cannot wrap for trip counts near 2^64.
    uint64_t Teams = KernelArgs.Tripcount / Dims.NumThreads +
                     (KernelArgs.Tripcount % Dims.NumThreads != 0);
    Dims.NumTeams = uint32_t(std::min<uint64_t>(Teams, Limits.MaxTeams));
  } else {
    Dims.NumTeams = Limits.DefaultTeams;
  }
  Dims.NumTeams = std::max(1u, Dims.NumTeams);
  return Dims;
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
  Device.getPlugin().getInfo().print(
      InfoPluginKernel, Device.getDeviceId(),
      "launch kernel {0} with {1} args, {2} teams x {3} threads", Name,
      NumArgs, Dims.NumTeams, Dims.NumThreads);
  return launchImpl(Device, Args.data(), NumArgs, Dims, KernelArgs, Stream);
}

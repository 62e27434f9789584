// SPDX-License-Identifier: Apache-2.0
#include "CUDAKernel.h"
#include "CUDADevice.h"
#include "CUDAImage.h"
#include "CUDAStream.h"

#include "offloadio/Plugin.h"

#include "llvm/ADT/SmallString.h"

using namespace offloadio;
using namespace offloadio::cuda;

const char *cuda::execModeName(ExecModeTy Mode) {
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

CUDAKernelTy::CUDAKernelTy(CUDAImageTy &Image, std::string Name,
                           CUfunction Function, ExecModeTy ExecMode,
                           uint32_t MaxThreads)
    : GenericKernelTy(Image, std::move(Name)), Function(Function),
      ExecMode(ExecMode), MaxThreads(MaxThreads) {}

Expected<std::unique_ptr<CUDAKernelTy>>
CUDAKernelTy::create(const CUDAApiTy &Api, CUDAImageTy &Image,
                     llvm::StringRef Name, int32_t DeviceId) {
  auto Function = Image.getFunction(Name);
  if (!Function)
    return Function.takeError();

  // clang records the mode in "<kernel>_exec_mode"; kernels without one
  // (not produced by clang's OpenMP code generation) are SPMD.
  ExecModeTy ExecMode = ExecModeTy::SPMD;
  llvm::SmallString<128> ModeName(Name);
  ModeName += "_exec_mode";
  auto ModeGlobal = Image.findGlobal(ModeName);
  if (!ModeGlobal)
    return ModeGlobal.takeError();
  if (*ModeGlobal) {
    auto [Ptr, Size] = **ModeGlobal;
    int8_t Mode = 0;
    if (Size != sizeof(Mode))
      return makeError(ErrorCode::InvalidImage,
                       "global '{0}' in image {1} on device {2} has {3} "
                       "bytes, expected {4}",
                       ModeName, Image.getId(), DeviceId, Size, sizeof(Mode));
    if (auto Err = checkCU(Api, Api.cuMemcpyDtoH(&Mode, Ptr, sizeof(Mode)),
                           "cuMemcpyDtoH",
                           "{0} byte of '{1}' at {2:x} on "
                           "device {3}",
                           sizeof(Mode), ModeName, Ptr, DeviceId))
      return std::move(Err);
    if (Mode < int8_t(ExecModeTy::Generic) ||
        Mode > int8_t(ExecModeTy::GenericSPMD))
      return makeError(ErrorCode::InvalidImage,
                       "kernel '{0}' in image {1} has unknown execution mode "
                       "{2}",
                       Name, Image.getId(), int(Mode));
    ExecMode = ExecModeTy(Mode);
  }

  int Threads = 0;
  if (auto Err = checkCU(
          Api,
          Api.cuFuncGetAttribute(
              &Threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, *Function),
          "cuFuncGetAttribute",
          "MAX_THREADS_PER_BLOCK of kernel '{0}' on device {1}", Name,
          DeviceId))
    return std::move(Err);
  return std::unique_ptr<CUDAKernelTy>(
      new CUDAKernelTy(Image, Name.str(), *Function, ExecMode,
                       uint32_t(std::max(Threads, 1))));
}

uint32_t CUDAKernelTy::getMaxThreads(const GenericDeviceTy &Device) const {
  // In generic mode one extra warp is added at launch (see launchImpl), so
  // leave room for it: the team's worker count stays what was computed.
  uint32_t WarpSize = static_cast<const CUDADeviceTy &>(Device).getWarpSize();
  if (ExecMode == ExecModeTy::Generic && MaxThreads > WarpSize)
    return MaxThreads - WarpSize;
  return MaxThreads;
}

Error CUDAKernelTy::launchImpl(GenericDeviceTy &GenericDevice, void **Args,
                               uint32_t NumArgs, const LaunchDimsTy &Dims,
                               const KernelArgsTy &KernelArgs,
                               StreamTy &GenericStream) {
  auto &Device = static_cast<CUDADeviceTy &>(GenericDevice);
  auto &Stream = static_cast<CUDAStreamTy &>(GenericStream);

  // The LLVM 16 device runtime runs a generic-mode team's sequential code on
  // the first thread of the block's last warp and gives the other
  // blockDim.x - warpSize threads to parallel regions
  // (mapping::getBlockSize and isMainThreadInGenericMode in DeviceRTL), so
  // that warp comes on top of the threads the team should have.
  uint32_t Threads = Dims.NumThreads;
  if (ExecMode == ExecModeTy::Generic)
    Threads = std::min(Threads + Device.getWarpSize(), MaxThreads);

  // Dynamic shared memory: what the device environment announced to the
  // runtime, plus the launch's own request (version 2 arguments on).
  uint32_t SharedMem = Device.getDynamicSharedMemory();
  if (KernelArgs.Version >= 2)
    SharedMem += KernelArgs.DynCGroupMem;

  CUDALaunchTy Launch;
  Launch.Function = Function;
  Launch.Blocks = Dims.NumTeams;
  Launch.Threads = Threads;
  Launch.SharedMem = SharedMem;
  Launch.Args = Args;
  Launch.NumArgs = NumArgs;
  auto Route = Stream.launchKernel(Launch, getName().c_str());
  if (!Route)
    return Route.takeError();
  if (*Route == LaunchRouteTy::GraphFailed)
    Device.getPlugin().getInfo().print(
        InfoPluginKernel, Device.getDeviceId(),
        "kernel {0}: launched with cuLaunchKernel from now on, on stream {1}, "
        "because its graph failed: {2}",
        getName(), Stream.getHandle(), Stream.getLauncher().lastFailure());
  return Error::success();
}

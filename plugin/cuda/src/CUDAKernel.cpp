// SPDX-License-Identifier: Apache-2.0
#include "CUDAKernel.h"
#include "CUDADevice.h"
#include "CUDAImage.h"
#include "CUDAStream.h"


#include "llvm/ADT/SmallString.h"

using namespace offloadio;
using namespace offloadio::cuda;

CUDAKernelTy::CUDAKernelTy(CUDAImageTy &Image, std::string Name,
                           CUfunction Function, const KernelConfigTy &Config,
                           uint32_t MaxThreads)
    : GenericKernelTy(Image, std::move(Name), Config, Image.callsPrintf()),
      Function(Function), MaxThreads(MaxThreads) {}

Expected<std::unique_ptr<CUDAKernelTy>>
CUDAKernelTy::create(const CUDAApiTy &Api, CUDAImageTy &Image,
                     llvm::StringRef Name, const KernelConfigTy &Config,
                     int32_t DeviceId) {
  auto Function = Image.getFunction(Name);
  if (!Function)
    return Function.takeError();


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
      new CUDAKernelTy(Image, Name.str(), *Function, Config,
                       uint32_t(std::max(Threads, 1))));
}

uint32_t CUDAKernelTy::getMaxThreads(const GenericDeviceTy &) const {
  return MaxThreads;
}

Error CUDAKernelTy::launchImpl(GenericDeviceTy &GenericDevice, void **Args,
                               uint32_t NumArgs, const LaunchDimsTy &Dims,
                               const KernelArgsTy &KernelArgs,
                               StreamTy &GenericStream) {
  auto &Device = static_cast<CUDADeviceTy &>(GenericDevice);
  auto &Stream = static_cast<CUDAStreamTy &>(GenericStream);

  // Dynamic shared memory: what the device environment announced to the
  // runtime, plus the launch's own request (version 2 arguments on).
  uint32_t SharedMem = Device.getDynamicSharedMemory();
  if (KernelArgs.Version >= 2)
    SharedMem += KernelArgs.DynCGroupMem;

  CUDALaunchTy Launch;
  Launch.Function = Function;
  Launch.Blocks = Dims.NumTeams;
  Launch.Threads = Dims.NumThreads;
  Launch.SharedMem = SharedMem;
  Launch.Args = Args;
  Launch.NumArgs = NumArgs;
  auto Route = Stream.launchKernel(Launch, getName().c_str());
  if (!Route)
    return Route.takeError();
  if (*Route == LaunchRouteTy::GraphFailed)
    Device.getServices().Info.print(
        InfoPluginKernel, Device.getDeviceId(),
        "kernel {0}: launched with cuLaunchKernel from now on, on stream {1}, "
        "because its graph failed: {2}",
        getName(), Stream.getHandle(), Stream.getLauncher().lastFailure());
  return Error::success();
}

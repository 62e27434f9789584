// SPDX-License-Identifier: Apache-2.0
#include "CUDAGraphLauncher.h"

#include <algorithm>

using namespace offloadio;
using namespace offloadio::cuda;

CUDAGraphLauncherTy::CUDAGraphLauncherTy(const CUDAApiTy &Api,
                                         int32_t DeviceId, bool Enabled,
                                         unsigned Capacity)
    : Api(Api), DeviceId(DeviceId),
      Enabled(Enabled && Capacity > 0 && driverSupportsGraphs(Api)),
      Capacity(Capacity) {}

CUDAGraphLauncherTy::~CUDAGraphLauncherTy() {
  // A graph still executing is freed by the driver once it completes.
  for (EntryTy &E : Entries)
    release(E);
}

bool CUDAGraphLauncherTy::driverSupportsGraphs(const CUDAApiTy &Api) {
  return Api.cuGraphCreate && Api.cuGraphAddKernelNode &&
         Api.cuGraphInstantiateWithFlags && Api.cuGraphExecKernelNodeSetParams &&
         Api.cuGraphLaunch && Api.cuGraphExecDestroy && Api.cuGraphDestroy;
}

unsigned CUDAGraphLauncherTy::liveGraphs() const {
  return unsigned(llvm::count_if(
      Entries, [](const EntryTy &E) { return E.Exec != nullptr; }));
}

CUDA_KERNEL_NODE_PARAMS
CUDAGraphLauncherTy::nodeParams(const CUDALaunchTy &Launch,
                                llvm::SmallVectorImpl<void *> &Params) {
  Params.resize(Launch.NumArgs);
  for (uint32_t I = 0; I < Launch.NumArgs; ++I)
    Params[I] = const_cast<void **>(&Launch.Args[I]);
  CUDA_KERNEL_NODE_PARAMS P{};
  P.func = Launch.Function;
  P.gridDimX = Launch.Blocks;
  P.gridDimY = P.gridDimZ = 1;
  P.blockDimX = Launch.Threads;
  P.blockDimY = P.blockDimZ = 1;
  P.sharedMemBytes = Launch.SharedMem;
  P.kernelParams = Params.data();
  return P;
}

bool CUDAGraphLauncherTy::matches(const EntryTy &E,
                                  const CUDALaunchTy &Launch) {
  return E.Blocks == Launch.Blocks && E.Threads == Launch.Threads &&
         E.SharedMem == Launch.SharedMem && E.Args.size() == Launch.NumArgs &&
         std::equal(E.Args.begin(), E.Args.end(), Launch.Args);
}

void CUDAGraphLauncherTy::remember(EntryTy &E, const CUDALaunchTy &Launch) {
  E.Blocks = Launch.Blocks;
  E.Threads = Launch.Threads;
  E.SharedMem = Launch.SharedMem;
  // Same size as last time (the usual case): no allocation.
  E.Args.assign(Launch.Args, Launch.Args + Launch.NumArgs);
}

void CUDAGraphLauncherTy::release(EntryTy &E) {
  // Teardown or eviction: nothing could act on a failure here.
  if (E.Exec)
    Api.cuGraphExecDestroy(E.Exec);
  if (E.Graph)
    Api.cuGraphDestroy(E.Graph);
  E.Exec = nullptr;
  E.Graph = nullptr;
  E.Node = nullptr;
}

CUDAGraphLauncherTy::EntryTy &
CUDAGraphLauncherTy::findOrInsert(CUfunction Function, bool &Created) {
  for (EntryTy &E : Entries)
    if (E.Function == Function) {
      Created = false;
      return E;
    }
  Created = true;
  if (Entries.size() < Capacity) {
    Entries.emplace_back();
    Entries.back().Function = Function;
    return Entries.back();
  }
  EntryTy &Victim = *std::min_element(
      Entries.begin(), Entries.end(),
      [](const EntryTy &A, const EntryTy &B) { return A.LastUse < B.LastUse; });
  if (Victim.Exec)
    ++Stats.Evicted;
  release(Victim);
  Victim.Function = Function;
  Victim.Failed = false;
  Victim.Args.clear();
  return Victim;
}

Error CUDAGraphLauncherTy::launchDirect(const CUDALaunchTy &Launch,
                                        CUstream Stream,
                                        const char *KernelName) {
  llvm::SmallVector<void *, 32> Params;
  CUDA_KERNEL_NODE_PARAMS P = nodeParams(Launch, Params);
  ++Stats.Direct;
  return checkCU(Api,
                 Api.cuLaunchKernel(P.func, P.gridDimX, 1, 1, P.blockDimX, 1,
                                    1, P.sharedMemBytes, Stream,
                                    P.kernelParams, nullptr),
                 "cuLaunchKernel",
                 "kernel '{0}' with {1} blocks x {2} threads, {3} bytes of "
                 "dynamic shared memory and {4} arguments on stream {5} of "
                 "device {6}",
                 KernelName, Launch.Blocks, Launch.Threads, Launch.SharedMem,
                 Launch.NumArgs, Stream, DeviceId);
}

Error CUDAGraphLauncherTy::build(EntryTy &E, const CUDALaunchTy &Launch,
                                 const char *KernelName) {
  llvm::SmallVector<void *, 32> Params;
  CUDA_KERNEL_NODE_PARAMS P = nodeParams(Launch, Params);
  CUgraph Graph = nullptr;
  CUgraphNode Node = nullptr;
  CUgraphExec Exec = nullptr;
  if (auto Err = checkCU(Api, Api.cuGraphCreate(&Graph, 0), "cuGraphCreate",
                         "graph for kernel '{0}' on device {1}", KernelName,
                         DeviceId))
    return Err;
  Error Err = checkCU(
      Api, Api.cuGraphAddKernelNode(&Node, Graph, nullptr, 0, &P),
      "cuGraphAddKernelNode",
      "kernel '{0}' with {1} blocks x {2} threads, {3} bytes of dynamic "
      "shared memory and {4} arguments into graph {5} on device {6}",
      KernelName, Launch.Blocks, Launch.Threads, Launch.SharedMem,
      Launch.NumArgs, Graph, DeviceId);
  if (!Err)
    Err = checkCU(Api, Api.cuGraphInstantiateWithFlags(&Exec, Graph, 0),
                  "cuGraphInstantiateWithFlags",
                  "graph {0} of kernel '{1}' on device {2}", Graph, KernelName,
                  DeviceId);
  if (Err) {
    Api.cuGraphDestroy(Graph);
    return Err;
  }
  // The node handle stays valid while its graph lives; updates of the
  // executable graph name it, so the graph is kept with it.
  E.Graph = Graph;
  E.Node = Node;
  E.Exec = Exec;
  remember(E, Launch);
  return Error::success();
}

Expected<LaunchRouteTy> CUDAGraphLauncherTy::launch(const CUDALaunchTy &Launch,
                                                    CUstream Stream,
                                                    const char *KernelName) {
  if (!Enabled) {
    if (auto Err = launchDirect(Launch, Stream, KernelName))
      return std::move(Err);
    return LaunchRouteTy::Direct;
  }
  bool Created = false;
  EntryTy &E = findOrInsert(Launch.Function, Created);
  E.LastUse = ++Clock;
  if (Created || E.Failed) {
    if (auto Err = launchDirect(Launch, Stream, KernelName))
      return std::move(Err);
    return LaunchRouteTy::Direct;
  }

  LaunchRouteTy Route = LaunchRouteTy::GraphReplayed;
  Error GraphErr = Error::success();
  if (!E.Exec) {
    Route = LaunchRouteTy::GraphBuilt;
    GraphErr = build(E, Launch, KernelName);
  } else if (!matches(E, Launch)) {
    Route = LaunchRouteTy::GraphUpdated;
    llvm::SmallVector<void *, 32> Params;
    CUDA_KERNEL_NODE_PARAMS P = nodeParams(Launch, Params);
    GraphErr = checkCU(
        Api, Api.cuGraphExecKernelNodeSetParams(E.Exec, E.Node, &P),
        "cuGraphExecKernelNodeSetParams",
        "kernel '{0}' with {1} blocks x {2} threads and {3} arguments in "
        "graph {4} on device {5}",
        KernelName, Launch.Blocks, Launch.Threads, Launch.NumArgs, E.Exec,
        DeviceId);
    if (!GraphErr)
      remember(E, Launch);
  }
  if (!GraphErr)
    GraphErr = checkCU(Api, Api.cuGraphLaunch(E.Exec, Stream), "cuGraphLaunch",
                       "graph {0} of kernel '{1}' on stream {2} of device {3}",
                       E.Exec, KernelName, Stream, DeviceId);
  if (!GraphErr) {
    switch (Route) {
    case LaunchRouteTy::GraphBuilt:
      ++Stats.Built;
      break;
    case LaunchRouteTy::GraphUpdated:
      ++Stats.Updated;
      break;
    default:
      ++Stats.Replayed;
      break;
    }
    return Route;
  }

  // The graph path is an optimisation: whatever refused it (a launch the
  // graph cannot take, a driver without the feature), the kernel still runs
  // by cuLaunchKernel, which reports any error that is the launch's own.
  LastFailure = llvm::toString(std::move(GraphErr));
  ++Stats.Failed;
  E.Failed = true;
  release(E);
  if (auto Err = launchDirect(Launch, Stream, KernelName))
    return std::move(Err);
  return LaunchRouteTy::GraphFailed;
}

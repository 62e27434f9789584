// SPDX-License-Identifier: Apache-2.0
//
// CUDAGraphLauncherTy against a fake driver: a table of functions that keep
// graphs and executable graphs as the driver would (node parameters copied
// at each call, executable graphs independent of later node changes) and
// record every kernel that actually ran, with the arguments it ran with.
// Each test checks what ran, not only which calls were made; the randomised
// test checks a long mixed sequence, failures included, against the plain
// rule that every launch runs exactly once with exactly its own arguments.
#include "CUDAGraphLauncher.h"

#include "gtest/gtest.h"

#include <map>
#include <random>
#include <set>
#include <vector>

using namespace offloadio;
using namespace offloadio::cuda;

namespace {

/// One kernel execution as the fake GPU saw it.
struct RunTy {
  CUfunction Function;
  uint32_t Blocks, Threads, SharedMem;
  std::vector<uintptr_t> Args;
  bool FromGraph;
  bool operator==(const RunTy &O) const {
    return Function == O.Function && Blocks == O.Blocks &&
           Threads == O.Threads && SharedMem == O.SharedMem && Args == O.Args;
  }
};

/// The fake driver's state. The API table holds plain function pointers,
/// so the fakes reach it through one pointer set by each test.
struct FakeDriverTy {
  /// Arguments each fake kernel takes (the driver knows it from the image).
  std::map<CUfunction, unsigned> Arity;
  struct GraphTy {
    bool HasNode = false;
    RunTy Node{};
  };
  struct ExecTy {
    RunTy Node{};
  };
  std::map<CUgraph, GraphTy> Graphs;
  std::map<CUgraphExec, ExecTy> Execs;
  uintptr_t NextHandle = 0x1000;
  std::vector<RunTy> Runs;
  unsigned GraphsCreated = 0, GraphsDestroyed = 0;
  unsigned ExecsCreated = 0, ExecsDestroyed = 0;
  unsigned SetParamsCalls = 0;
  /// Injected failures: the call of that name fails with this result.
  CUresult FailCreate = CUDA_SUCCESS, FailAddNode = CUDA_SUCCESS,
           FailInstantiate = CUDA_SUCCESS, FailSetParams = CUDA_SUCCESS,
           FailGraphLaunch = CUDA_SUCCESS, FailLaunchKernel = CUDA_SUCCESS;

  RunTy capture(const CUDA_KERNEL_NODE_PARAMS &P, bool FromGraph) const {
    RunTy R{P.func, P.gridDimX, P.blockDimX, P.sharedMemBytes, {}, FromGraph};
    unsigned N = Arity.at(P.func);
    for (unsigned I = 0; I < N; ++I)
      R.Args.push_back(*static_cast<uintptr_t *>(P.kernelParams[I]));
    return R;
  }
};

FakeDriverTy *Driver = nullptr;

CUresult fakeLaunchKernel(CUfunction F, unsigned GX, unsigned GY, unsigned GZ,
                          unsigned BX, unsigned BY, unsigned BZ, unsigned Shared,
                          CUstream, void **Params, void **Extra) {
  if (Driver->FailLaunchKernel != CUDA_SUCCESS)
    return Driver->FailLaunchKernel;
  EXPECT_EQ(GY * GZ * BY * BZ, 1u);
  EXPECT_EQ(Extra, nullptr);
  CUDA_KERNEL_NODE_PARAMS P{};
  P.func = F;
  P.gridDimX = GX;
  P.blockDimX = BX;
  P.sharedMemBytes = Shared;
  P.kernelParams = Params;
  Driver->Runs.push_back(Driver->capture(P, false));
  return CUDA_SUCCESS;
}

CUresult fakeGraphCreate(CUgraph *G, unsigned Flags) {
  EXPECT_EQ(Flags, 0u);
  if (Driver->FailCreate != CUDA_SUCCESS)
    return Driver->FailCreate;
  *G = reinterpret_cast<CUgraph>(Driver->NextHandle++);
  Driver->Graphs[*G];
  ++Driver->GraphsCreated;
  return CUDA_SUCCESS;
}

CUresult fakeGraphDestroy(CUgraph G) {
  EXPECT_EQ(Driver->Graphs.erase(G), 1u) << "graph destroyed twice or unknown";
  ++Driver->GraphsDestroyed;
  return CUDA_SUCCESS;
}

CUresult fakeGraphAddKernelNode(CUgraphNode *Node, CUgraph G,
                                const CUgraphNode *Deps, size_t NumDeps,
                                const CUDA_KERNEL_NODE_PARAMS *P) {
  EXPECT_EQ(Deps, nullptr);
  EXPECT_EQ(NumDeps, 0u);
  if (Driver->FailAddNode != CUDA_SUCCESS)
    return Driver->FailAddNode;
  auto &Graph = Driver->Graphs.at(G);
  Graph.HasNode = true;
  Graph.Node = Driver->capture(*P, true);
  // The node handle names its graph, so updates can be checked against it.
  *Node = reinterpret_cast<CUgraphNode>(G);
  return CUDA_SUCCESS;
}

CUresult fakeGraphInstantiate(CUgraphExec *E, CUgraph G,
                              unsigned long long Flags) {
  EXPECT_EQ(Flags, 0u);
  if (Driver->FailInstantiate != CUDA_SUCCESS)
    return Driver->FailInstantiate;
  auto &Graph = Driver->Graphs.at(G);
  EXPECT_TRUE(Graph.HasNode);
  *E = reinterpret_cast<CUgraphExec>(Driver->NextHandle++);
  Driver->Execs[*E].Node = Graph.Node;
  ++Driver->ExecsCreated;
  return CUDA_SUCCESS;
}

CUresult fakeGraphExecSetParams(CUgraphExec E, CUgraphNode Node,
                                const CUDA_KERNEL_NODE_PARAMS *P) {
  ++Driver->SetParamsCalls;
  if (Driver->FailSetParams != CUDA_SUCCESS)
    return Driver->FailSetParams;
  // The node must still exist, in a live graph.
  EXPECT_TRUE(Driver->Graphs.count(reinterpret_cast<CUgraph>(Node)));
  auto &Exec = Driver->Execs.at(E);
  // The driver refuses a different function for an instantiated node.
  if (Exec.Node.Function != P->func)
    return CUDA_ERROR_INVALID_VALUE;
  Exec.Node = Driver->capture(*P, true);
  return CUDA_SUCCESS;
}

CUresult fakeGraphExecDestroy(CUgraphExec E) {
  EXPECT_EQ(Driver->Execs.erase(E), 1u) << "exec destroyed twice or unknown";
  ++Driver->ExecsDestroyed;
  return CUDA_SUCCESS;
}

CUresult fakeGraphLaunch(CUgraphExec E, CUstream) {
  if (Driver->FailGraphLaunch != CUDA_SUCCESS)
    return Driver->FailGraphLaunch;
  Driver->Runs.push_back(Driver->Execs.at(E).Node);
  return CUDA_SUCCESS;
}

class CUDAGraphLauncherTest : public ::testing::Test {
protected:
  void SetUp() override {
    Driver = &Fake;
    Api.cuLaunchKernel = fakeLaunchKernel;
    Api.cuGraphCreate = fakeGraphCreate;
    Api.cuGraphDestroy = fakeGraphDestroy;
    Api.cuGraphAddKernelNode = fakeGraphAddKernelNode;
    Api.cuGraphInstantiateWithFlags = fakeGraphInstantiate;
    Api.cuGraphExecKernelNodeSetParams = fakeGraphExecSetParams;
    Api.cuGraphExecDestroy = fakeGraphExecDestroy;
    Api.cuGraphLaunch = fakeGraphLaunch;
    for (unsigned I = 0; I < 8; ++I)
      Fake.Arity[kernel(I)] = I % 4; // 0 to 3 arguments.
  }
  void TearDown() override { Driver = nullptr; }

  static CUfunction kernel(unsigned I) {
    return reinterpret_cast<CUfunction>(uintptr_t(0x100 + I));
  }

  /// Launch kernel \p K with \p Blocks blocks and arguments \p Args (as
  /// many as it takes are used) and check that exactly that ran.
  LaunchRouteTy launchAndCheck(CUDAGraphLauncherTy &L, unsigned K,
                               uint32_t Blocks,
                               std::vector<uintptr_t> Args = {7, 8, 9}) {
    Args.resize(Fake.Arity[kernel(K)]);
    std::vector<void *> Values;
    for (uintptr_t A : Args)
      Values.push_back(reinterpret_cast<void *>(A));
    CUDALaunchTy Launch;
    Launch.Function = kernel(K);
    Launch.Blocks = Blocks;
    Launch.Threads = 128;
    Launch.SharedMem = 0;
    Launch.Args = Values.data();
    Launch.NumArgs = unsigned(Values.size());
    size_t Before = Fake.Runs.size();
    auto Route = L.launch(Launch, Stream, "k");
    EXPECT_TRUE(bool(Route)) << llvm::toString(Route.takeError());
    EXPECT_EQ(Fake.Runs.size(), Before + 1) << "one launch, one run";
    RunTy Want{kernel(K), Blocks, 128, 0, Args, false};
    if (Fake.Runs.size() == Before + 1) {
      EXPECT_EQ(Fake.Runs.back(), Want);
      bool Graph = *Route != LaunchRouteTy::Direct &&
                   *Route != LaunchRouteTy::GraphFailed;
      EXPECT_EQ(Fake.Runs.back().FromGraph, Graph);
    }
    return Route ? *Route : LaunchRouteTy::Direct;
  }

  FakeDriverTy Fake;
  CUDAApiTy Api;
  CUstream Stream = reinterpret_cast<CUstream>(0x77);
};

TEST_F(CUDAGraphLauncherTest, SecondLaunchBuildsAGraphAndLaterOnesReplayIt) {
  CUDAGraphLauncherTy L(Api, 0, true);
  EXPECT_TRUE(L.graphsEnabled());
  EXPECT_EQ(launchAndCheck(L, 1, 4), LaunchRouteTy::Direct);
  EXPECT_EQ(L.liveGraphs(), 0u) << "a kernel launched once costs no graph";
  EXPECT_EQ(launchAndCheck(L, 1, 4), LaunchRouteTy::GraphBuilt);
  EXPECT_EQ(launchAndCheck(L, 1, 4), LaunchRouteTy::GraphReplayed);
  EXPECT_EQ(launchAndCheck(L, 1, 4), LaunchRouteTy::GraphReplayed);
  EXPECT_EQ(Fake.SetParamsCalls, 0u) << "an unchanged launch is not updated";
  EXPECT_EQ(L.liveGraphs(), 1u);
  const GraphLaunchStatsTy &S = L.getStats();
  EXPECT_EQ(S.Direct, 1u);
  EXPECT_EQ(S.Built, 1u);
  EXPECT_EQ(S.Replayed, 2u);
}

TEST_F(CUDAGraphLauncherTest, ChangedArgumentsOrGeometryUpdateTheNode) {
  CUDAGraphLauncherTy L(Api, 0, true);
  launchAndCheck(L, 3, 1, {1, 2, 3});
  launchAndCheck(L, 3, 1, {1, 2, 3});
  EXPECT_EQ(launchAndCheck(L, 3, 1, {1, 2, 4}), LaunchRouteTy::GraphUpdated);
  EXPECT_EQ(launchAndCheck(L, 3, 9, {1, 2, 4}), LaunchRouteTy::GraphUpdated);
  EXPECT_EQ(launchAndCheck(L, 3, 9, {1, 2, 4}), LaunchRouteTy::GraphReplayed);
  EXPECT_EQ(launchAndCheck(L, 3, 1, {1, 2, 3}), LaunchRouteTy::GraphUpdated);
  EXPECT_EQ(Fake.SetParamsCalls, 3u);
  EXPECT_EQ(Fake.ExecsCreated, 1u) << "updates reuse the executable graph";
}

TEST_F(CUDAGraphLauncherTest, DisabledOrWithoutDriverSupportEveryLaunchIsDirect) {
  {
    CUDAGraphLauncherTy L(Api, 0, false);
    EXPECT_FALSE(L.graphsEnabled());
    for (int I = 0; I < 4; ++I)
      EXPECT_EQ(launchAndCheck(L, 2, 3), LaunchRouteTy::Direct);
  }
  Api.cuGraphExecKernelNodeSetParams = nullptr; // An older driver.
  EXPECT_FALSE(CUDAGraphLauncherTy::driverSupportsGraphs(Api));
  CUDAGraphLauncherTy L(Api, 0, true);
  EXPECT_FALSE(L.graphsEnabled());
  for (int I = 0; I < 4; ++I)
    EXPECT_EQ(launchAndCheck(L, 2, 3), LaunchRouteTy::Direct);
  EXPECT_EQ(Fake.GraphsCreated, 0u);
}

TEST_F(CUDAGraphLauncherTest, LeastRecentlyUsedGraphIsEvictedAndDestroyed) {
  CUDAGraphLauncherTy L(Api, 0, true, /*Capacity=*/2);
  launchAndCheck(L, 1, 1);
  launchAndCheck(L, 1, 1); // Graph of kernel 1.
  launchAndCheck(L, 2, 1);
  launchAndCheck(L, 2, 1); // Graph of kernel 2.
  launchAndCheck(L, 1, 1); // Kernel 1 used last; kernel 2 is the oldest.
  EXPECT_EQ(L.liveGraphs(), 2u);
  EXPECT_EQ(launchAndCheck(L, 3, 1), LaunchRouteTy::Direct);
  EXPECT_EQ(L.getStats().Evicted, 1u);
  EXPECT_EQ(Fake.ExecsDestroyed, 1u);
  EXPECT_EQ(L.liveGraphs(), 1u);
  EXPECT_EQ(launchAndCheck(L, 1, 1), LaunchRouteTy::GraphReplayed)
      << "kernel 1 kept its graph";
  EXPECT_EQ(launchAndCheck(L, 2, 1), LaunchRouteTy::Direct)
      << "kernel 2 starts over";
}

TEST_F(CUDAGraphLauncherTest, EveryGraphFailureFallsBackToADirectLaunch) {
  struct {
    CUresult FakeDriverTy::*Which;
    const char *Call;
  } Steps[] = {
      {&FakeDriverTy::FailCreate, "cuGraphCreate"},
      {&FakeDriverTy::FailAddNode, "cuGraphAddKernelNode"},
      {&FakeDriverTy::FailInstantiate, "cuGraphInstantiateWithFlags"},
      {&FakeDriverTy::FailSetParams, "cuGraphExecKernelNodeSetParams"},
      {&FakeDriverTy::FailGraphLaunch, "cuGraphLaunch"},
  };
  for (auto &Step : Steps) {
    SCOPED_TRACE(Step.Call);
    {
      CUDAGraphLauncherTy L(Api, 5, true);
      launchAndCheck(L, 1, 1, {1});
      // The node is updated only when the launch differs.
      bool Update = Step.Which == &FakeDriverTy::FailSetParams;
      if (Update)
        launchAndCheck(L, 1, 1, {1}); // Builds the graph.
      Fake.*Step.Which = CUDA_ERROR_NOT_SUPPORTED;
      EXPECT_EQ(launchAndCheck(L, 1, 1, {Update ? 2u : 1u}),
                LaunchRouteTy::GraphFailed);
      EXPECT_NE(L.lastFailure().find(Step.Call), std::string::npos)
          << L.lastFailure();
      EXPECT_NE(L.lastFailure().find("device 5"), std::string::npos)
          << L.lastFailure();
      EXPECT_EQ(L.getStats().Failed, 1u);
      EXPECT_EQ(L.liveGraphs(), 0u);
      Fake.*Step.Which = CUDA_SUCCESS;
      // The kernel stays direct on this stream; others still get graphs.
      EXPECT_EQ(launchAndCheck(L, 1, 1), LaunchRouteTy::Direct);
      launchAndCheck(L, 2, 1);
      EXPECT_EQ(launchAndCheck(L, 2, 1), LaunchRouteTy::GraphBuilt);
    }
    EXPECT_EQ(Fake.GraphsCreated, Fake.GraphsDestroyed) << "no graph leaked";
    EXPECT_EQ(Fake.ExecsCreated, Fake.ExecsDestroyed) << "no exec leaked";
  }
}

TEST_F(CUDAGraphLauncherTest, FailedDirectLaunchIsAnErrorNamingTheLaunch) {
  CUDAGraphLauncherTy L(Api, 3, true);
  Fake.FailLaunchKernel = CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  void *Arg = nullptr;
  CUDALaunchTy Launch;
  Launch.Function = kernel(1);
  Launch.Blocks = 2;
  Launch.Threads = 64;
  Launch.SharedMem = 16;
  Launch.Args = &Arg;
  Launch.NumArgs = 1;
  auto Route = L.launch(Launch, Stream, "my_kernel");
  ASSERT_FALSE(bool(Route));
  std::string Msg = llvm::toString(Route.takeError());
  for (const char *Part : {"cuLaunchKernel", "my_kernel", "2 blocks x 64",
                           "16 bytes", "1 arguments", "device 3"})
    EXPECT_NE(Msg.find(Part), std::string::npos) << Part << " in " << Msg;
  EXPECT_TRUE(Fake.Runs.empty());
}

TEST_F(CUDAGraphLauncherTest, RandomisedLaunchesRunExactlyAsAsked) {
  std::mt19937 Rng(20261123);
  for (int Round = 0; Round < 20; ++Round) {
    SCOPED_TRACE(Round);
    unsigned Capacity = 1 + Rng() % 4;
    {
      CUDAGraphLauncherTy L(Api, 0, true, Capacity);
      for (int I = 0; I < 500; ++I) {
        unsigned K = Rng() % 6;
        uint32_t Blocks = 1 + Rng() % 3;
        std::vector<uintptr_t> Args = {Rng() % 3, Rng() % 2, 40 + Rng() % 2};
        // Now and then one graph call fails for one launch.
        CUresult FakeDriverTy::*Fails[] = {
            &FakeDriverTy::FailCreate, &FakeDriverTy::FailAddNode,
            &FakeDriverTy::FailInstantiate, &FakeDriverTy::FailSetParams,
            &FakeDriverTy::FailGraphLaunch};
        CUresult FakeDriverTy::*Fail = nullptr;
        if (Rng() % 50 == 0) {
          Fail = Fails[Rng() % 5];
          Fake.*Fail = CUDA_ERROR_UNKNOWN;
        }
        launchAndCheck(L, K, Blocks, Args);
        if (Fail)
          Fake.*Fail = CUDA_SUCCESS;
        ASSERT_LE(L.liveGraphs(), Capacity);
        ASSERT_EQ(Fake.Execs.size(), L.liveGraphs());
      }
      const GraphLaunchStatsTy &S = L.getStats();
      EXPECT_EQ(S.Direct + S.Built + S.Replayed + S.Updated, 500u)
          << "fallbacks after a failure count as direct launches";
    }
    EXPECT_TRUE(Fake.Graphs.empty()) << "graphs left after the launcher";
    EXPECT_TRUE(Fake.Execs.empty()) << "executable graphs left";
  }
}

} // namespace

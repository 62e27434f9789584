// SPDX-License-Identifier: Apache-2.0
//
// Kernel launches on one stream, replayed from one-node executable graphs.
//
// Launching an instantiated graph costs the calling thread less than
// cuLaunchKernel of the same kernel, also when the graph's node is updated
// first (cuGraphExecKernelNodeSetParams); tools/gpu/cuda-latency.c measures
// both, and docs/results-h100.md has the figures. A kernel that a stream
// launches again is therefore given a graph of its own at its second
// launch, and every later launch of it on that stream updates the graph's
// node (only when the launch differs from the last) and replays it. The
// first launch of a kernel goes straight to cuLaunchKernel, so a kernel
// launched once costs no graph.
//
// Each stream has its own launcher: launches of one executable graph are
// ordered after its previous launches, so a graph shared by two streams
// would serialise them. A stream is used by one thread at a time, so the
// launcher needs no lock.
#ifndef OFFLOADIO_CUDA_CUDAGRAPHLAUNCHER_H
#define OFFLOADIO_CUDA_CUDAGRAPHLAUNCHER_H

#include "CUDAApi.h"

#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <string>

namespace offloadio {
namespace cuda {

/// One kernel launch: what cuLaunchKernel takes, with every argument a
/// pointer-sized value (the LLVM 16 OpenMP kernels' convention).
struct CUDALaunchTy {
  CUfunction Function = nullptr;
  uint32_t Blocks = 1;
  uint32_t Threads = 1;
  uint32_t SharedMem = 0;
  /// The argument values; the launch passes a pointer to each.
  void *const *Args = nullptr;
  uint32_t NumArgs = 0;
};

/// How a launch went to the driver.
enum class LaunchRouteTy {
  /// cuLaunchKernel: the kernel's first launch on the stream, graphs off
  /// or unavailable, or the kernel's graph failed before.
  Direct,
  /// A graph was built for the kernel and launched.
  GraphBuilt,
  /// The kernel's graph was launched again, its node unchanged.
  GraphReplayed,
  /// The kernel's graph node was updated to this launch, then launched.
  GraphUpdated,
  /// Building, updating or launching the kernel's graph failed (see
  /// lastFailure()); the launch went to cuLaunchKernel, and so will the
  /// kernel's later ones on this stream.
  GraphFailed,
};

/// Launch counters of one launcher.
struct GraphLaunchStatsTy {
  uint64_t Direct = 0;
  uint64_t Built = 0;
  uint64_t Replayed = 0;
  uint64_t Updated = 0;
  /// Graphs that could not be built or updated (the launch went direct).
  uint64_t Failed = 0;
  /// Graphs destroyed to make room for another kernel's.
  uint64_t Evicted = 0;
};

/// Launches kernels on one stream, through a small least-recently-used
/// table of one-kernel executable graphs.
class CUDAGraphLauncherTy {
public:
  /// Graphs kept per stream by default.
  static constexpr unsigned DefaultCapacity = 8;

  /// A launcher for streams of device \p DeviceId. With \p Enabled false,
  /// or without the driver's graph functions, every launch is direct.
  CUDAGraphLauncherTy(const CUDAApiTy &Api, int32_t DeviceId, bool Enabled,
                      unsigned Capacity = DefaultCapacity);
  ~CUDAGraphLauncherTy();
  CUDAGraphLauncherTy(const CUDAGraphLauncherTy &) = delete;
  CUDAGraphLauncherTy &operator=(const CUDAGraphLauncherTy &) = delete;

  /// Whether \p Api has every function the graph path needs.
  static bool driverSupportsGraphs(const CUDAApiTy &Api);

  /// Enqueue \p Launch on \p Stream (whose context must be current) and
  /// say how. A graph that cannot be built, updated or launched makes the
  /// launch, and later launches of that kernel, direct; only a failed
  /// direct launch is an error. \p KernelName is for messages.
  Expected<LaunchRouteTy> launch(const CUDALaunchTy &Launch, CUstream Stream,
                                 const char *KernelName);

  /// Whether launches may use graphs at all.
  bool graphsEnabled() const { return Enabled; }
  /// Counters since construction.
  const GraphLaunchStatsTy &getStats() const { return Stats; }
  /// Number of executable graphs currently held.
  unsigned liveGraphs() const;
  /// Why the graph path last failed (after LaunchRouteTy::GraphFailed).
  const std::string &lastFailure() const { return LastFailure; }

private:
  struct EntryTy {
    CUfunction Function = nullptr;
    /// Launch-clock value of the last use, for eviction.
    uint64_t LastUse = 0;
    CUgraph Graph = nullptr;
    CUgraphExec Exec = nullptr;
    CUgraphNode Node = nullptr;
    /// Building, updating or launching the graph failed: stay direct.
    bool Failed = false;
    /// The launch the graph node currently holds.
    uint32_t Blocks = 0, Threads = 0, SharedMem = 0;
    llvm::SmallVector<void *, 16> Args;
  };

  /// cuLaunchKernel.
  Error launchDirect(const CUDALaunchTy &Launch, CUstream Stream,
                     const char *KernelName);
  /// The entry of \p Function, or a new one (evicting the least recently
  /// used when full); \p Created tells which.
  EntryTy &findOrInsert(CUfunction Function, bool &Created);
  /// Create, fill and instantiate the one-node graph of \p E.
  Error build(EntryTy &E, const CUDALaunchTy &Launch,
              const char *KernelName);
  /// Destroy the graph of \p E, if any.
  void release(EntryTy &E);
  /// Whether the node of \p E holds exactly \p Launch.
  static bool matches(const EntryTy &E, const CUDALaunchTy &Launch);
  /// Remember \p Launch as what the node of \p E holds.
  static void remember(EntryTy &E, const CUDALaunchTy &Launch);
  /// The driver's node parameters for \p Launch; \p Params receives the
  /// pointers to the argument values.
  static CUDA_KERNEL_NODE_PARAMS
  nodeParams(const CUDALaunchTy &Launch,
             llvm::SmallVectorImpl<void *> &Params);

  const CUDAApiTy &Api;
  const int32_t DeviceId;
  const bool Enabled;
  const unsigned Capacity;
  uint64_t Clock = 0;
  llvm::SmallVector<EntryTy, DefaultCapacity> Entries;
  GraphLaunchStatsTy Stats;
  std::string LastFailure;
};

} // namespace cuda
} // namespace offloadio

#endif // OFFLOADIO_CUDA_CUDAGRAPHLAUNCHER_H

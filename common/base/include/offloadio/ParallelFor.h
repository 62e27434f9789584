// SPDX-License-Identifier: Apache-2.0
//
// A small pool of host threads for parallel memcpy into and out of bounce
// buffers: one thread copies pageable memory at about a fifth of what a GPU
// DMA engine moves, so large staged copies split their host side across
// threads. The calling thread always takes part, so a pool of 0 threads
// still works.
#ifndef OFFLOADIO_PARALLELFOR_H
#define OFFLOADIO_PARALLELFOR_H

#include "llvm/ADT/STLFunctionalExtras.h"

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace offloadio {

/// Runs the iterations of a loop on a fixed set of worker threads plus the
/// caller.
class ParallelForTy {
public:
  /// \p Threads helper threads, started on first use.
  explicit ParallelForTy(unsigned Threads) : NumThreads(Threads) {}
  ~ParallelForTy();
  ParallelForTy(const ParallelForTy &) = delete;
  ParallelForTy &operator=(const ParallelForTy &) = delete;

  /// Run \p Fn(I) for I in [0, N) and return when all are done. Iterations
  /// may run in any order and concurrently. No allocation after the first
  /// call.
  void run(size_t N, llvm::function_ref<void(size_t)> Fn);

  /// Number of helper threads.
  unsigned getNumThreads() const { return NumThreads; }

private:
  struct JobTy {
    size_t N;
    llvm::function_ref<void(size_t)> Fn;
    std::atomic<size_t> Next{0};
    std::atomic<size_t> Done{0};
    std::atomic<unsigned> Helpers{0};
  };

  void start();
  /// The loop of a helper thread (named oio-copy-<index> by start()).
  void workerLoop();
  static void work(JobTy &Job);

  unsigned NumThreads;
  std::mutex Lock;
  std::condition_variable WorkCV;
  std::condition_variable DoneCV;
  std::deque<JobTy *> Jobs;
  std::vector<std::thread> Workers;
  bool Started = false;
  bool Stopping = false;
};

} // namespace offloadio

#endif // OFFLOADIO_PARALLELFOR_H

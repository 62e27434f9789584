// SPDX-License-Identifier: Apache-2.0
//
// A pool of host threads for parallel memcpy into and out of bounce
// buffers: one thread copies pageable memory at about a fifth of what a GPU
// DMA engine moves, so large staged copies split their host side across
// threads. The calling thread always takes part, so a pool of 0 threads
// still works.
//
// One pool serves every device of a plugin. It grows with the devices that
// use it (a share of helpers per user, up to a cap), and its helpers go to
// the loop with the fewest helpers whenever one of them finishes an
// iteration, so that copies to several devices at once share the helpers
// evenly instead of the first loop taking them all. A helper runs on the
// CPUs of the device whose loop it serves (ThreadAffinity.h), near the
// device's memory and link, when the device has a placement.
#ifndef OFFLOADIO_PARALLELFOR_H
#define OFFLOADIO_PARALLELFOR_H

#include "offloadio/ThreadAffinity.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>
#include <vector>

namespace offloadio {

/// Runs the iterations of loops on a shared set of helper threads plus each
/// loop's caller.
class ParallelForTy {
public:
  /// \p PerUser helper threads for each distinct user of run(), at most
  /// \p MaxThreads in all; each user's are started by its first loop.
  /// Helpers move between devices' CPUs through \p Affinity (null: the
  /// system calls).
  ParallelForTy(unsigned PerUser, unsigned MaxThreads,
                AffinitySysTy *Affinity = nullptr)
      : PerUser(PerUser), MaxThreads(MaxThreads),
        Affinity(Affinity ? *Affinity : OwnAffinity) {}
  ~ParallelForTy();
  ParallelForTy(const ParallelForTy &) = delete;
  ParallelForTy &operator=(const ParallelForTy &) = delete;

  /// Run \p Fn(I) for I in [0, N) for user \p User (a device's number) and
  /// return when all are done. Iterations may run in any order and
  /// concurrently; the helpers run them on the CPUs of \p Placement (null:
  /// where they are), the caller where it is. No allocation after a user's
  /// first call.
  void run(unsigned User, size_t N, llvm::function_ref<void(size_t)> Fn,
           DevicePlacementTy *Placement = nullptr);

  /// Helper threads one user's loop can count on: its even share of the
  /// helpers among the distinct users of run() (at least one), at least 1
  /// when the pool has any.
  unsigned threadsPerUser();
  /// Helper threads for \p Users users: min(PerUser x Users, MaxThreads).
  unsigned threadsFor(size_t Users) const;
  /// Helper threads started.
  unsigned getNumStarted();
  /// Distinct users of run().
  size_t getNumUsers();

private:
  struct JobTy {
    size_t N;
    llvm::function_ref<void(size_t)> Fn;
    std::atomic<size_t> Next{0};
    std::atomic<size_t> Done{0};
    /// Helpers inside the job; guarded by Lock.
    unsigned Helpers = 0;
    /// Where the helpers run its iterations.
    DevicePlacementTy *Placement = nullptr;
  };

  /// Start helpers up to threadsFor(Users.size()); under Lock.
  void grow();
  /// The loop of a helper thread (named oio-copy-<index> by grow()).
  void workerLoop();
  /// The job with iterations left and the fewest helpers (the oldest of
  /// equals); exhausted jobs are dropped from Jobs. Under Lock.
  JobTy *pickJob();
  /// Run iterations of \p Job; a helper (\p Yield) returns after each one
  /// while other jobs wait, to be placed again.
  void work(JobTy &Job, bool Yield);

  const unsigned PerUser;
  const unsigned MaxThreads;
  AffinitySysTy OwnAffinity;
  AffinitySysTy &Affinity;
  std::mutex Lock;
  std::condition_variable WorkCV;
  std::condition_variable DoneCV;
  /// Jobs with iterations left to hand out, oldest first.
  std::vector<JobTy *> Jobs;
  /// Jobs.size(), read by helpers between iterations without Lock.
  std::atomic<size_t> NumJobs{0};
  /// The users seen, in order of their first loop.
  std::vector<unsigned> Users;
  std::vector<std::thread> Workers;
  bool Stopping = false;
};

} // namespace offloadio

#endif // OFFLOADIO_PARALLELFOR_H

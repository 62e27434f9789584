// SPDX-License-Identifier: Apache-2.0
//
// The file workers of a process: one pool per plugin, serving the request
// queues of all the plugin's engines. It grows with the engines attached
// (the devices in use): OMPX_IO_THREADS workers for each, up to a cap for
// the process (its CPUs), so that one device keeps its workers and several
// devices get theirs without more workers than CPUs. Each engine keeps
// a staging slot (a stream and a ring of pinned buffers on its device) per
// worker, made when that worker first stages a chunk of the engine's, so a
// worker's copies on one device stay ordered on one stream as before.
//
// An engine attaches its queue when it is created and detaches it before
// it is destroyed; detaching waits until no worker serves its requests.
#ifndef OFFLOADIO_IO_IOWORKERPOOL_H
#define OFFLOADIO_IO_IOWORKERPOOL_H

#include "offloadio/ThreadAffinity.h"
#include "offloadio/io/IOWorker.h"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

namespace offloadio {

class IODeviceTy;
class IORequestQueueTy;
class IORequestTy;

/// One engine as the pool's workers see it.
struct IOPoolEngineTy {
  IOPoolEngineTy(IORequestQueueTy &Queue, IOPathTableTy &Paths,
                 IODeviceTy &Device, unsigned RingDepth)
      : Queue(Queue), Paths(Paths), Device(Device), RingDepth(RingDepth) {}

  /// The staging slot of worker \p Worker on this engine's device, made
  /// on first use; only that worker calls this.
  IOWorkerStagingTy &stagingOf(unsigned Worker);

  IORequestQueueTy &Queue;
  IOPathTableTy &Paths;
  IODeviceTy &Device;
  unsigned RingDepth;
  /// A slot per worker of the pool, sized by attach(); slot I is touched
  /// only by worker I while it serves this engine, and by the engine's
  /// destruction after detach().
  std::vector<std::unique_ptr<IOWorkerStagingTy>> Staging;
  /// Workers serving a request of this engine now; guarded by the pool.
  unsigned Serving = 0;
};

/// The workers of the process's file engines, for one plugin.
class IOWorkerPoolTy {
public:
  /// \p PerEngine workers (at least 1) for each engine attached, at most
  /// \p MaxThreads in all (at least PerEngine; 0: PerEngine), started by
  /// the first start() and as engines attach after it. Workers move to the
  /// CPUs of each engine's device through \p Affinity (null: the system
  /// calls themselves).
  explicit IOWorkerPoolTy(unsigned PerEngine, unsigned MaxThreads = 0,
                          AffinitySysTy *Affinity = nullptr);
  /// Stops and joins the workers; every engine must be detached.
  ~IOWorkerPoolTy();
  IOWorkerPoolTy(const IOWorkerPoolTy &) = delete;
  IOWorkerPoolTy &operator=(const IOWorkerPoolTy &) = delete;

  /// Serve \p Engine's queue from now on; once started, the pool grows to
  /// the engines' share.
  void attach(IOPoolEngineTy &Engine);
  /// Stop serving \p Engine once its queue is idle and no worker holds one
  /// of its requests; waits for that.
  void detach(IOPoolEngineTy &Engine);
  /// Start the workers if they are not running. Never blocks beyond
  /// starting them once.
  void start();

  /// Workers for \p Engines engines: min(PerEngine x Engines, MaxThreads),
  /// at least PerEngine.
  unsigned threadsFor(size_t Engines) const;
  /// Workers one engine gets.
  unsigned getThreadsPerEngine() const { return PerEngine; }
  /// Workers started so far.
  unsigned getNumStarted();
  /// Whether the workers run.
  bool started();

private:
  friend class IOWorkerTy;
  /// A worker's next request from any engine, with a chunk claimed into
  /// \p Chunk and its engine in \p Engine; blocks; null once stopping.
  IORequestTy *nextRequest(size_t &Chunk, IOPoolEngineTy *&Engine);
  /// The next request of \p Engine, whose request the worker serves
  /// already, with a chunk claimed into \p Chunk; null if none is ready.
  /// Never blocks.
  IORequestTy *tryNextRequestOf(IOPoolEngineTy &Engine, size_t &Chunk);
  /// The worker is done with the request nextRequest gave it, and with the
  /// ones tryNextRequestOf gave it after that.
  void finishedWith(IOPoolEngineTy &Engine);
  /// An engine's queue has a request ready.
  void wake();
  /// Start workers up to threadsFor(Engines.size()); under Lock.
  void grow();

  const unsigned PerEngine;
  const unsigned MaxThreads;
  /// The system calls, unless the pool was given others.
  AffinitySysTy OwnAffinity;
  AffinitySysTy &Affinity;
  std::mutex Lock;
  /// Workers wait here for a ready request.
  std::condition_variable WorkCV;
  /// detach() waits here for an engine's last request to be served.
  std::condition_variable IdleCV;
  /// Engines served, in attach order; guarded by Lock.
  std::vector<IOPoolEngineTy *> Engines;
  /// Where the next scan starts, so that one busy engine does not starve
  /// the others; guarded by Lock.
  size_t NextEngine = 0;
  bool Stopping = false;
  /// Declared last: they use everything above until they are joined.
  std::vector<std::unique_ptr<IOWorkerTy>> Workers;
};

} // namespace offloadio

#endif // OFFLOADIO_IO_IOWORKERPOOL_H

// SPDX-License-Identifier: Apache-2.0
//
// A worker of the file engines: a thread of the process's pool
// (IOWorkerPool.h) that claims chunks from the engines' request queues and
// runs each on its request's path, with a stream and a ring of pinned
// buffers of its own on each device it serves, for the staged path.
#ifndef OFFLOADIO_IO_IOWORKER_H
#define OFFLOADIO_IO_IOWORKER_H

#include "offloadio/io/IOPathBackend.h"
#include "offloadio/io/IOStagingRing.h"

#include <array>
#include <deque>
#include <memory>
#include <thread>

namespace offloadio {

class IODeviceTy;
class IORequestQueueTy;
class IORequestTy;
class IOWorkerPoolTy;
class TimeProfileTy;
struct IOPoolEngineTy;

/// The engine's backends, indexed by IOPathTy.
using IOPathTableTy =
    std::array<std::unique_ptr<IOPathBackendTy>, size_t(IOPathTy::Count)>;

/// A worker's stream and staging ring, created on first use, and the
/// first staged chunk of the request it serves.
class IOWorkerStagingTy {
public:
  IOWorkerStagingTy(IODeviceTy &Device, unsigned RingDepth)
      : Device(Device), Ring(Device, RingDepth) {}
  /// Frees the ring, then gives the stream back.
  ~IOWorkerStagingTy();
  IOWorkerStagingTy(const IOWorkerStagingTy &) = delete;
  IOWorkerStagingTy &operator=(const IOWorkerStagingTy &) = delete;

  /// The stream, for chunk \p Chunk of the request served; the ring gives
  /// buffers as they are needed (IOStagingRingTy::next).
  Error prepare(size_t Chunk);
  /// After prepare().
  StreamTy &stream() { return *Stream; }
  IOStagingRingTy &ring() { return Ring; }
  /// Where the stages of this worker's chunks are timed, or null.
  TimeProfileTy *profile();
  /// This worker is done with \p R, of which it ran \p Processed chunks.
  /// A read whose copies may still run is finished once they have landed
  /// (completeFinished), so that the worker can go on to another request
  /// meanwhile; any other request waits for its copies now. A failure of
  /// the copies is the error of the request's first staged chunk.
  void finishRequest(IORequestTy &R, size_t Processed);
  /// Finish the reads whose copies have landed; with \p Wait, wait for all.
  void completeFinished(bool Wait);
  /// Whether reads wait for their copies (completeFinished).
  bool hasUnfinished() const { return !Unfinished.empty(); }
  /// The worker leaves this device for now, every copy landed
  /// (completeFinished(true)): the pinned budget may take the ring's
  /// buffers back for another holder until the worker returns.
  void markIdle() { Ring.markIdle(); }

private:
  /// A read done on the host whose last copy \p Landed marks.
  struct UnfinishedReadTy {
    IORequestTy *R;
    size_t Processed;
    size_t FirstStaged;
    EventTy *Landed;
  };
  /// Wait for the stream's copies, then finish \p R.
  void finishNow(IORequestTy &R, size_t Processed);
  /// Most reads waiting for their copies before the oldest is waited for.
  static constexpr size_t MaxUnfinished = 64;

  IODeviceTy &Device;
  StreamTy *Stream = nullptr;
  IOStagingRingTy Ring;
  size_t FirstStaged = SIZE_MAX;
  /// Reads finished on the host, in stream order.
  std::deque<UnfinishedReadTy> Unfinished;
};

/// One worker thread of a pool, named oio-io-<Index>.
class IOWorkerTy {
public:
  IOWorkerTy(IOWorkerPoolTy &Pool, unsigned Index)
      : Pool(Pool), Index(Index) {}
  /// Joins the thread; the pool must be stopping.
  ~IOWorkerTy();
  IOWorkerTy(const IOWorkerTy &) = delete;
  IOWorkerTy &operator=(const IOWorkerTy &) = delete;

  /// Start the thread.
  void start();

private:
  /// Serve requests until the pool stops.
  void run();
  /// Serve \p R, of engine \p Engine, from its claimed chunk \p Chunk on,
  /// with \p Staging, the worker's staging on that engine.
  void serve(IOPoolEngineTy &Engine, IOWorkerStagingTy &Staging,
             IORequestTy &R, size_t Chunk);
  /// Run chunk \p Chunk of \p R on its path.
  void processChunk(IOPathTableTy &Paths, IOWorkerStagingTy &Staging,
                    IORequestTy &R, size_t Chunk);

  /// Most requests of one engine served in a row while reads wait for
  /// their copies.
  static constexpr unsigned MaxInARow = 16;

  IOWorkerPoolTy &Pool;
  /// This worker's number in the pool: its staging slot in each engine.
  unsigned Index;
  std::thread Thread;
};

} // namespace offloadio

#endif // OFFLOADIO_IO_IOWORKER_H

// SPDX-License-Identifier: Apache-2.0
#include "offloadio/io/IOWorker.h"
#include "offloadio/ThreadName.h"
#include "offloadio/io/IODevice.h"
#include "offloadio/io/IORequest.h"
#include "offloadio/io/IORequestQueue.h"
#include "offloadio/io/IOWorkerPool.h"

using namespace offloadio;

IOWorkerStagingTy::~IOWorkerStagingTy() {
  llvm::consumeError(Ring.clear());
  if (Stream)
    Device.releaseStream(Stream);
}

TimeProfileTy *IOWorkerStagingTy::profile() { return Device.getProfile(); }

Error IOWorkerStagingTy::prepare(size_t Chunk) {
  if (!Stream) {
    auto S = Device.acquireStream();
    if (!S)
      return S.takeError();
    Stream = *S;
  }
  if (FirstStaged == SIZE_MAX)
    FirstStaged = Chunk;
  return Error::success();
}

void IOWorkerStagingTy::finishRequest(IORequestTy &R, size_t Processed) {
  if (FirstStaged == SIZE_MAX || R.isWrite()) {
    // Nothing in flight (a write waited for its copies before pwrite), or
    // a write whose order against later appends must hold.
    finishNow(R, Processed);
    return;
  }
  // Finished by completeFinished once an event behind its copies has
  // completed; without an event, now.
  auto Landed = Device.acquireEvent();
  if (!Landed) {
    llvm::consumeError(Landed.takeError());
    finishNow(R, Processed);
    return;
  }
  if (auto Err = Stream->recordEvent(**Landed)) {
    llvm::consumeError(std::move(Err));
    Device.releaseEvent(*Landed);
    finishNow(R, Processed);
    return;
  }
  Unfinished.push_back({&R, Processed, FirstStaged, *Landed});
  FirstStaged = SIZE_MAX;
  // Reads that moved nothing take an event too: bound what waits.
  if (Unfinished.size() > MaxUnfinished)
    completeFinished(/*Wait=*/true);
}

void IOWorkerStagingTy::finishNow(IORequestTy &R, size_t Processed) {
  // Earlier reads' copies come before this request's on the stream.
  completeFinished(/*Wait=*/true);
  if (FirstStaged != SIZE_MAX) {
    if (auto Err = Stream->synchronize())
      R.recordError(FirstStaged, std::move(Err));
    Ring.retireAll();
    FirstStaged = SIZE_MAX;
  }
  // Nothing of this worker's is in flight: its buffers may serve another
  // holder from now on, before the request's completion wakes a program
  // that may need them at once (the ring is the worker's again at its
  // next use).
  Ring.markIdle();
  R.finishChunks(Processed);
}

void IOWorkerStagingTy::completeFinished(bool Wait) {
  while (!Unfinished.empty()) {
    UnfinishedReadTy &U = Unfinished.front();
    if (!Wait) {
      auto Done = U.Landed->query();
      // An error is the synchronize's to report, below.
      if (Done && !*Done)
        return;
      if (!Done)
        llvm::consumeError(Done.takeError());
    }
    if (auto Err = U.Landed->synchronize())
      U.R->recordError(U.FirstStaged, std::move(Err));
    // Some streams keep a failed copy's error for their next synchronize
    // rather than in the events behind it. With nothing else in flight
    // that synchronize returns at once: give any such error to the last
    // read, as the synchronize at its end did before reads were deferred.
    bool Last = Unfinished.size() == 1 && FirstStaged == SIZE_MAX;
    if (Last)
      if (auto Err = Stream->synchronize())
        U.R->recordError(U.FirstStaged, std::move(Err));
    Device.releaseEvent(U.Landed);
    if (Last) {
      // Every copy that the ring's buffers fed has landed: idle, as in
      // finishNow().
      Ring.retireAll();
      Ring.markIdle();
    }
    // The request may complete and go away here.
    U.R->finishChunks(U.Processed);
    Unfinished.pop_front();
  }
  // Every copy that the ring's buffers fed has landed.
  if (Wait && FirstStaged == SIZE_MAX)
    Ring.retireAll();
}

IOWorkerTy::~IOWorkerTy() {
  if (Thread.joinable())
    Thread.join();
}

void IOWorkerTy::start() {
  Thread = std::thread([this] { run(); });
  nameStartedThreadOrWarn(Thread, "oio-io", Index);
}

void IOWorkerTy::run() {
  size_t I;
  IOPoolEngineTy *Engine;
  ThreadPlacementTy Placement(Pool.Affinity);
  while (IORequestTy *R = Pool.nextRequest(I, Engine)) {
    // On the CPUs near the engine's device, before its staging is made:
    // the slot's pinned buffers are allocated by this thread on its first
    // chunk, and pages go to the node of the CPU that first touches them
    // (the default memory policy), so they land on the device's node.
    Placement.enter(Engine->Device.getHostPlacement());
    IOWorkerStagingTy &Staging = Engine->stagingOf(Index);
    // While reads served wait for their copies, go on with the engine's
    // next request rather than wait: a worker that waited at the end of
    // each request would never overlap its pread with its copies when
    // requests (a batch's operations) are a few chunks each.
    // At most MaxInARow requests, so that the pool's turns between
    // engines (devices) still come round.
    unsigned Served = 0;
    do {
      serve(*Engine, Staging, *R, I);
      Staging.completeFinished(/*Wait=*/false);
    } while (++Served < MaxInARow && Staging.hasUnfinished() &&
             (R = Pool.tryNextRequestOf(*Engine, I)));
    Staging.completeFinished(/*Wait=*/true);
    // Idle rings hold their buffers for the worker's next request (pinning
    // is slow), unless another holder needs the memory first.
    Staging.markIdle();
    // The engine may be destroyed from here on.
    Pool.finishedWith(*Engine);
  }
}

void IOWorkerTy::serve(IOPoolEngineTy &Engine, IOWorkerStagingTy &Staging,
                       IORequestTy &R, size_t I) {
  // A request stays alive while this worker holds one of its chunks
  // unfinished: it cannot complete, so wait() cannot release it. Chunks are
  // therefore claimed only through the queue, under its lock, and R is not
  // touched after finishRequest().
  size_t Processed = 0;
  do {
    // An append goes no further than its first failure: later chunks
    // would land where the failed one belongs.
    if (!R.isAppend() || !R.failed())
      processChunk(Engine.Paths, Staging, R, I);
    ++Processed;
    // Earlier reads complete as soon as their copies land, not after this
    // request.
    Staging.completeFinished(/*Wait=*/false);
  } while (Engine.Queue.nextChunk(R, I));
  bool Append = R.isAppend();
  Staging.finishRequest(R, Processed);
  if (Append)
    Engine.Queue.endAppend();
}

void IOWorkerTy::processChunk(IOPathTableTy &Paths, IOWorkerStagingTy &Staging,
                              IORequestTy &R, size_t I) {
  IOPathBackendTy &Path = *Paths[unsigned(R.path())];
  if (!Path.runChunk(R, I, Staging))
    Paths[unsigned(IOPathTy::Staged)]->runChunk(R, I, Staging);
}

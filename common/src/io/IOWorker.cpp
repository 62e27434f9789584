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

Error IOWorkerStagingTy::prepare(size_t SlotSize, size_t Chunk) {
  if (!Stream) {
    auto S = Device.acquireStream();
    if (!S)
      return S.takeError();
    Stream = *S;
  }
  if (auto Err = Ring.reserve(SlotSize, *Stream))
    return Err;
  if (FirstStaged == SIZE_MAX)
    FirstStaged = Chunk;
  return Error::success();
}

void IOWorkerStagingTy::finishRequest(IORequestTy &R) {
  if (FirstStaged == SIZE_MAX)
    return;
  // All this worker's copies for the request must land before the request
  // can complete.
  if (auto Err = Stream->synchronize())
    R.recordError(FirstStaged, std::move(Err));
  Ring.retireAll();
  FirstStaged = SIZE_MAX;
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
  while (IORequestTy *R = Pool.nextRequest(I, Engine)) {
    serve(*Engine, *R, I);
    // The engine may be destroyed from here on.
    Pool.finishedWith(*Engine);
  }
}

void IOWorkerTy::serve(IOPoolEngineTy &Engine, IORequestTy &R, size_t I) {
  IOWorkerStagingTy &Staging = Engine.stagingOf(Index);
  // A request stays alive while this worker holds one of its chunks
  // unfinished: it cannot complete, so wait() cannot release it. Chunks are
  // therefore claimed only through the queue, under its lock, and R is not
  // touched after finishChunks().
  size_t Processed = 0;
  do {
    // An append goes no further than its first failure: later chunks
    // would land where the failed one belongs.
    if (!R.isAppend() || !R.failed())
      processChunk(Engine.Paths, Staging, R, I);
    ++Processed;
  } while (Engine.Queue.nextChunk(R, I));
  Staging.finishRequest(R);
  bool Append = R.isAppend();
  R.finishChunks(Processed);
  if (Append)
    Engine.Queue.endAppend();
}

void IOWorkerTy::processChunk(IOPathTableTy &Paths, IOWorkerStagingTy &Staging,
                              IORequestTy &R, size_t I) {
  IOPathBackendTy &Path = *Paths[unsigned(R.path())];
  if (!Path.runChunk(R, I, Staging))
    Paths[unsigned(IOPathTy::Staged)]->runChunk(R, I, Staging);
}

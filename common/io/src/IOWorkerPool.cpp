// SPDX-License-Identifier: Apache-2.0
#include "offloadio/io/IOWorkerPool.h"
#include "offloadio/io/IORequestQueue.h"

#include <algorithm>
#include <cassert>

using namespace offloadio;

IOWorkerStagingTy &IOPoolEngineTy::stagingOf(unsigned Worker) {
  std::unique_ptr<IOWorkerStagingTy> &Slot = Staging[Worker];
  if (!Slot)
    Slot = std::make_unique<IOWorkerStagingTy>(Device, RingDepth);
  return *Slot;
}

IOWorkerPoolTy::IOWorkerPoolTy(unsigned PerEngine, unsigned MaxThreads,
                               AffinitySysTy *Affinity)
    : PerEngine(std::max(1u, PerEngine)),
      MaxThreads(std::max(this->PerEngine, MaxThreads)),
      Affinity(Affinity ? *Affinity : OwnAffinity) {}

unsigned IOWorkerPoolTy::threadsFor(size_t Engines) const {
  size_t Wanted = size_t(PerEngine) * std::max<size_t>(1, Engines);
  return unsigned(std::min<size_t>(Wanted, MaxThreads));
}

unsigned IOWorkerPoolTy::getNumStarted() {
  std::lock_guard<std::mutex> Guard(Lock);
  return unsigned(Workers.size());
}

IOWorkerPoolTy::~IOWorkerPoolTy() {
  {
    std::lock_guard<std::mutex> Guard(Lock);
    assert(Engines.empty() && "an engine outlives its workers");
    Stopping = true;
  }
  WorkCV.notify_all();
  Workers.clear();
}

void IOWorkerPoolTy::attach(IOPoolEngineTy &Engine) {
  // A slot for every worker the pool may ever run: workers started later
  // find theirs without the vector moving under the others.
  Engine.Staging.resize(MaxThreads);
  // Before the engine is visible: no push can happen earlier anyway, but a
  // wakeup must never find the queue unattached.
  Engine.Queue.setWakeup([this] { wake(); });
  std::lock_guard<std::mutex> Guard(Lock);
  Engines.push_back(&Engine);
  if (!Workers.empty())
    grow();
}

void IOWorkerPoolTy::detach(IOPoolEngineTy &Engine) {
  std::unique_lock<std::mutex> Guard(Lock);
  // Queued requests are served first, as a lone engine's workers did before
  // they stopped.
  IdleCV.wait(Guard,
              [&] { return Engine.Serving == 0 && Engine.Queue.idle(); });
  Engines.erase(std::find(Engines.begin(), Engines.end(), &Engine));
  NextEngine = 0;
}

void IOWorkerPoolTy::start() {
  std::lock_guard<std::mutex> Guard(Lock);
  if (Workers.empty())
    grow();
}

void IOWorkerPoolTy::grow() {
  // Detached engines leave their workers running: they serve the others.
  for (unsigned I = unsigned(Workers.size()), N = threadsFor(Engines.size());
       I < N; ++I) {
    Workers.push_back(std::make_unique<IOWorkerTy>(*this, I));
    Workers.back()->start();
  }
}

bool IOWorkerPoolTy::started() {
  std::lock_guard<std::mutex> Guard(Lock);
  return !Workers.empty();
}

void IOWorkerPoolTy::wake() {
  // Taking the lock orders this wakeup after any scan that missed the new
  // request: that worker is waiting by the time notify_all runs.
  { std::lock_guard<std::mutex> Guard(Lock); }
  WorkCV.notify_all();
}

IORequestTy *IOWorkerPoolTy::nextRequest(size_t &Chunk,
                                         IOPoolEngineTy *&Engine) {
  std::unique_lock<std::mutex> Guard(Lock);
  while (true) {
    // The scan and the wait below happen under Lock, and wake() takes Lock
    // after its queue push: a request pushed during the scan is either seen
    // by it or wakes this worker.
    size_t N = Engines.size();
    for (size_t K = 0; K < N; ++K) {
      size_t At = (NextEngine + K) % N;
      if (IORequestTy *R = Engines[At]->Queue.tryNextRequest(Chunk)) {
        Engine = Engines[At];
        ++Engine->Serving;
        NextEngine = (At + 1) % N;
        return R;
      }
    }
    if (Stopping)
      return nullptr;
    WorkCV.wait(Guard);
  }
}

IORequestTy *IOWorkerPoolTy::tryNextRequestOf(IOPoolEngineTy &Engine,
                                              size_t &Chunk) {
  // The engine stays alive: the caller counts in its Serving.
  std::lock_guard<std::mutex> Guard(Lock);
  return Engine.Queue.tryNextRequest(Chunk);
}

void IOWorkerPoolTy::finishedWith(IOPoolEngineTy &Engine) {
  {
    std::lock_guard<std::mutex> Guard(Lock);
    --Engine.Serving;
  }
  // An append's end may have made the next append of the lane ready, and
  // detach() may wait for this engine.
  IdleCV.notify_all();
}

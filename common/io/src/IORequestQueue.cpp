// SPDX-License-Identifier: Apache-2.0
#include "offloadio/io/IORequestQueue.h"
#include "offloadio/io/IORequest.h"

#include <algorithm>

using namespace offloadio;

void IORequestQueueTy::pushAll(IORequestTy *const *Rs, size_t N) {
  if (!N)
    return;
  {
    std::lock_guard<std::mutex> Guard(Lock);
    for (size_t I = 0; I < N; ++I)
      (Rs[I]->isAppend() ? AppendQueue : Queue).push_back(Rs[I]);
  }
  CV.notify_all();
  wake();
}

void IORequestQueueTy::stop() {
  {
    std::lock_guard<std::mutex> Guard(Lock);
    Stopping = true;
  }
  CV.notify_all();
}

size_t IORequestQueueTy::claimLocked(IORequestTy &R) {
  size_t I = R.claimChunk();
  if (!R.hasUnclaimedChunk() && !R.isAppend()) {
    // Fully claimed: off the queue now, while the claimed chunks keep it
    // alive. It is the front: requests leave only here, in order.
    if (!Queue.empty() && Queue.front() == &R)
      Queue.pop_front();
    else
      Queue.erase(std::find(Queue.begin(), Queue.end(), &R));
  }
  return I;
}

IORequestTy *IORequestQueueTy::nextRequest(size_t &Chunk) {
  std::unique_lock<std::mutex> Guard(Lock);
  // Queued requests are served before the workers stop.
  CV.wait(Guard,
          [&] { return !Queue.empty() || appendReadyLocked() || Stopping; });
  return claimNextLocked(Chunk);
}

IORequestTy *IORequestQueueTy::tryNextRequest(size_t &Chunk) {
  std::lock_guard<std::mutex> Guard(Lock);
  return claimNextLocked(Chunk);
}

bool IORequestQueueTy::idle() {
  std::lock_guard<std::mutex> Guard(Lock);
  return Queue.empty() && AppendQueue.empty() && !AppendActive;
}

IORequestTy *IORequestQueueTy::claimNextLocked(size_t &Chunk) {
  if (appendReadyLocked()) {
    // Off the lane's queue: no other worker sees it, so this one claims its
    // chunks in order.
    IORequestTy *R = AppendQueue.front();
    AppendQueue.pop_front();
    AppendActive = true;
    Chunk = claimLocked(*R);
    return R;
  }
  if (Queue.empty())
    return nullptr;
  IORequestTy *R = Queue.front();
  Chunk = claimLocked(*R);
  return R;
}

bool IORequestQueueTy::nextChunk(IORequestTy &R, size_t &Chunk) {
  std::lock_guard<std::mutex> Guard(Lock);
  if (!R.hasUnclaimedChunk())
    return false;
  Chunk = claimLocked(R);
  return true;
}

void IORequestQueueTy::endAppend() {
  {
    std::lock_guard<std::mutex> Guard(Lock);
    AppendActive = false;
  }
  CV.notify_all();
  wake();
}

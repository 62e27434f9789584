// SPDX-License-Identifier: Apache-2.0
#include "offloadio/ParallelFor.h"
#include "offloadio/ThreadName.h"

using namespace offloadio;

ParallelForTy::~ParallelForTy() {
  {
    std::lock_guard<std::mutex> Guard(Lock);
    Stopping = true;
  }
  WorkCV.notify_all();
  for (std::thread &T : Workers)
    T.join();
}

void ParallelForTy::start() {
  Started = true;
  Workers.reserve(NumThreads);
  for (unsigned I = 0; I < NumThreads; ++I) {
    Workers.emplace_back([this] { workerLoop(); });
    nameStartedThreadOrWarn(Workers.back(), "oio-copy", I);
  }
}

void ParallelForTy::work(JobTy &Job) {
  size_t I;
  while ((I = Job.Next.fetch_add(1, std::memory_order_relaxed)) < Job.N) {
    Job.Fn(I);
    Job.Done.fetch_add(1, std::memory_order_acq_rel);
  }
}

void ParallelForTy::workerLoop() {
  std::unique_lock<std::mutex> Guard(Lock);
  while (true) {
    WorkCV.wait(Guard, [&] { return Stopping || !Jobs.empty(); });
    if (Jobs.empty())
      return;
    JobTy *Job = Jobs.front();
    // Leave exhausted jobs to their callers; help with the rest.
    if (Job->Next.load(std::memory_order_relaxed) >= Job->N) {
      Jobs.pop_front();
      continue;
    }
    Job->Helpers.fetch_add(1, std::memory_order_relaxed);
    Guard.unlock();
    work(*Job);
    Guard.lock();
    // The caller may only return (and destroy the job) once no helper
    // touches it any more.
    Job->Helpers.fetch_sub(1, std::memory_order_relaxed);
    DoneCV.notify_all();
  }
}

void ParallelForTy::run(size_t N, llvm::function_ref<void(size_t)> Fn) {
  if (N == 0)
    return;
  JobTy Job;
  Job.N = N;
  Job.Fn = Fn;
  bool Shared = NumThreads > 0 && N > 1;
  if (Shared) {
    std::lock_guard<std::mutex> Guard(Lock);
    if (!Started)
      start();
    Jobs.push_back(&Job);
  }
  if (Shared)
    WorkCV.notify_all();
  work(Job);
  if (!Shared)
    return;
  std::unique_lock<std::mutex> Guard(Lock);
  for (auto It = Jobs.begin(); It != Jobs.end(); ++It)
    if (*It == &Job) {
      Jobs.erase(It);
      break;
    }
  DoneCV.wait(Guard, [&] {
    return Job.Done.load(std::memory_order_acquire) >= N &&
           Job.Helpers.load(std::memory_order_relaxed) == 0;
  });
}

// SPDX-License-Identifier: Apache-2.0
#include "offloadio/ParallelFor.h"
#include "offloadio/ThreadName.h"

#include <algorithm>

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

unsigned ParallelForTy::threadsFor(size_t Users) const {
  size_t Wanted = size_t(PerUser) * Users;
  return unsigned(std::min<size_t>(Wanted, MaxThreads));
}

unsigned ParallelForTy::threadsPerUser() {
  std::lock_guard<std::mutex> Guard(Lock);
  size_t Seen = std::max<size_t>(1, Users.size());
  unsigned Share = unsigned(threadsFor(Seen) / Seen);
  return threadsFor(1) ? std::max(1u, Share) : 0;
}

unsigned ParallelForTy::getNumStarted() {
  std::lock_guard<std::mutex> Guard(Lock);
  return unsigned(Workers.size());
}

size_t ParallelForTy::getNumUsers() {
  std::lock_guard<std::mutex> Guard(Lock);
  return Users.size();
}

void ParallelForTy::grow() {
  unsigned Target = threadsFor(Users.size());
  Workers.reserve(Target);
  for (unsigned I = unsigned(Workers.size()); I < Target; ++I) {
    Workers.emplace_back([this] { workerLoop(); });
    nameStartedThreadOrWarn(Workers.back(), "oio-copy", I);
  }
}

ParallelForTy::JobTy *ParallelForTy::pickJob() {
  JobTy *Best = nullptr;
  for (size_t K = 0; K < Jobs.size();) {
    JobTy *Job = Jobs[K];
    // Exhausted jobs are left to their callers.
    if (Job->Next.load(std::memory_order_relaxed) >= Job->N) {
      Jobs.erase(Jobs.begin() + K);
      continue;
    }
    if (!Best || Job->Helpers < Best->Helpers)
      Best = Job;
    ++K;
  }
  NumJobs.store(Jobs.size(), std::memory_order_relaxed);
  return Best;
}

void ParallelForTy::work(JobTy &Job, bool Yield) {
  size_t I;
  while ((I = Job.Next.fetch_add(1, std::memory_order_relaxed)) < Job.N) {
    Job.Fn(I);
    Job.Done.fetch_add(1, std::memory_order_acq_rel);
    if (Yield && NumJobs.load(std::memory_order_relaxed) > 1)
      return;
  }
}

void ParallelForTy::workerLoop() {
  ThreadPlacementTy Placement(Affinity);
  std::unique_lock<std::mutex> Guard(Lock);
  while (true) {
    JobTy *Job = nullptr;
    WorkCV.wait(Guard, [&] { return Stopping || (Job = pickJob()); });
    if (!Job)
      return;
    ++Job->Helpers;
    Guard.unlock();
    Placement.enter(Job->Placement);
    work(*Job, /*Yield=*/true);
    Guard.lock();
    // The caller may only return (and destroy the job) once no helper
    // touches it any more.
    --Job->Helpers;
    DoneCV.notify_all();
  }
}

void ParallelForTy::run(unsigned User, size_t N,
                        llvm::function_ref<void(size_t)> Fn,
                        DevicePlacementTy *Placement) {
  if (N == 0)
    return;
  JobTy Job;
  Job.N = N;
  Job.Fn = Fn;
  Job.Placement = Placement;
  bool Shared = MaxThreads > 0 && PerUser > 0 && N > 1;
  if (Shared) {
    std::lock_guard<std::mutex> Guard(Lock);
    if (std::find(Users.begin(), Users.end(), User) == Users.end()) {
      Users.push_back(User);
      grow();
    }
    Jobs.push_back(&Job);
    NumJobs.store(Jobs.size(), std::memory_order_relaxed);
  }
  if (Shared)
    WorkCV.notify_all();
  work(Job, /*Yield=*/false);
  if (!Shared)
    return;
  std::unique_lock<std::mutex> Guard(Lock);
  auto It = std::find(Jobs.begin(), Jobs.end(), &Job);
  if (It != Jobs.end()) {
    Jobs.erase(It);
    NumJobs.store(Jobs.size(), std::memory_order_relaxed);
  }
  DoneCV.wait(Guard, [&] {
    return Job.Done.load(std::memory_order_acquire) >= N && Job.Helpers == 0;
  });
}

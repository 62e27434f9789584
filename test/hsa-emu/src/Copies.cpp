// SPDX-License-Identifier: Apache-2.0
//
// hsa-emu: the asynchronous copy engine (copies that wait for their
// dependency signals, run by worker threads) and the copies and fills of
// the runtime.
//
// Checks on callers (misuse): (HSA_EMU_STRICT, the default) copying memory
// the engine agent cannot access, or filling memory that is neither
// allocated nor locked; signals destroyed before the copy that uses them is
// done.
#include "MemoryRegistry.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>

using namespace hsaemu;

namespace {

/// Copy jobs waiting for their dependencies, then run by worker threads.
struct JobTy {
  std::vector<SignalTy *> Deps;
  SignalTy *Completion = nullptr;
  std::function<bool()> Fn;
  /// The call that made the job and what it does, for misuse reports.
  const char *Call = "";
  std::string What;
};

/// Signal \p Job's completion: decremented, or -1 when it failed. A
/// completion signal destroyed before then is a misuse: ROCr's engine would
/// write into a freed (or reused) signal.
void finish(JobTy &Job, bool Ok) {
  if (Job.Completion->isDestroyed()) {
    misuse(Job.Call,
           "completion signal 0x%" PRIx64 " was destroyed (%s) before the %s "
           "completed",
           Job.Completion->handle().handle, Job.Completion->destroyedBy(),
           Job.What.c_str());
    return;
  }
  // ROCr decrements the completion signal when the copy is done and makes
  // it negative on failure.
  Job.Completion->update([Ok](hsa_signal_value_t Old) {
    return Ok ? Old - 1 : hsa_signal_value_t(-1);
  });
}

/// Report a dependency of \p Job destroyed before the job started (ROCr's
/// engine would wait on freed memory), and fail the job.
void depDestroyed(JobTy &Job, SignalTy *Dep, hsa_signal_value_t Value) {
  misuse(Job.Call,
         "dependency signal 0x%" PRIx64 " was destroyed (%s) at value %" PRId64
         " before the %s started",
         Dep->handle().handle, Dep->destroyedBy(), int64_t(Value),
         Job.What.c_str());
  finish(Job, false);
}

class CopyEngineTy {
public:
  CopyEngineTy() {
    for (unsigned I = 0; I < std::max(1u, config().CopyWorkers); ++I)
      std::thread([this] { work(); }).detach();
  }

  void submit(std::shared_ptr<JobTy> Job) {
    for (SignalTy *Dep : Job->Deps) {
      if (Dep->isDestroyed())
        return depDestroyed(*Job, Dep, Dep->load());
      if (Dep->load() >= 1) {
        // Re-examine all dependencies when this one is satisfied.
        DepWatcher.watch(
            Dep, HSA_SIGNAL_CONDITION_LT, 1,
            [this, Job](hsa_signal_value_t) {
              submit(Job);
              return false;
            },
            [Job, Dep](hsa_signal_value_t V) { depDestroyed(*Job, Dep, V); });
        return;
      }
    }
    {
      std::lock_guard<std::mutex> Guard(Lock);
      Ready.push_back(std::move(Job));
    }
    ReadyCV.notify_one();
  }

private:
  void work() {
    while (true) {
      std::shared_ptr<JobTy> Job;
      {
        std::unique_lock<std::mutex> Guard(Lock);
        ReadyCV.wait(Guard, [&] { return !Ready.empty(); });
        Job = std::move(Ready.front());
        Ready.pop_front();
      }
      finish(*Job, Job->Fn());
    }
  }

  WatcherTy DepWatcher;
  std::mutex Lock;
  std::condition_variable ReadyCV;
  std::deque<std::shared_ptr<JobTy>> Ready;
};

CopyEngineTy &copyEngine() {
  // Leaked on purpose: workers may be blocked when the process exits.
  static CopyEngineTy *Engine = new CopyEngineTy();
  return *Engine;
}

/// Whether a copy engine may touch \p R: a GPU engine (DMA) only memory
/// its agent may access; host-to-host copies (\p Engine null, the CPU) any
/// host memory but device memory the CPU was not granted. Without
/// HSA_EMU_STRICT, anything the CPU can touch.
bool engineReaches(const ResolvedRangeTy &R, AgentTy *Engine) {
  if (!R.Usable)
    return false;
  if (!config().Strict || R.Accessible)
    return true;
  return !Engine && !R.Known;
}

} // namespace

void hsaemu::submitAsync(std::vector<SignalTy *> Deps, SignalTy *Completion,
                         std::function<bool()> Fn, const char *Call,
                         std::string What) {
  auto Job = std::make_shared<JobTy>();
  Job->Deps = std::move(Deps);
  Job->Completion = Completion;
  Job->Fn = std::move(Fn);
  Job->Call = Call;
  Job->What = std::move(What);
  copyEngine().submit(std::move(Job));
}

extern "C" {

hsa_status_t hsa_amd_memory_async_copy(void *Dst, hsa_agent_t DstAgent,
                                       const void *Src, hsa_agent_t SrcAgent,
                                       size_t Size, uint32_t NumDeps,
                                       const hsa_signal_t *Deps,
                                       hsa_signal_t Completion) {
  CHECK_INIT();
  AgentTy *DA = lookupAgent(DstAgent);
  AgentTy *SA = lookupAgent(SrcAgent);
  if (!DA || !SA)
    return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!Dst || !Src || (NumDeps && !Deps))
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  // ROCr checks the dependencies, then the completion signal: the null
  // handle is an invalid argument there, another bad one an invalid signal.
  std::vector<SignalTy *> DepList;
  for (uint32_t I = 0; I < NumDeps; ++I) {
    SignalTy *Dep = checkSignal(Deps[I], __func__);
    if (!Dep)
      return Deps[I].handle ? HSA_STATUS_ERROR_INVALID_SIGNAL
                            : HSA_STATUS_ERROR_INVALID_ARGUMENT;
    DepList.push_back(Dep);
  }
  SignalTy *Done = checkSignal(Completion, __func__);
  if (!Done)
    return Completion.handle ? HSA_STATUS_ERROR_INVALID_SIGNAL
                             : HSA_STATUS_ERROR_INVALID_ARGUMENT;
  // The engine is the source GPU's, else the destination GPU's (host to
  // host copies have none). It must reach both buffers.
  AgentTy *Engine = SA->isGpu() ? SA : (DA->isGpu() ? DA : nullptr);
  char What[128];
  std::snprintf(What, sizeof(What), "copy of %zu bytes from %p to %p", Size,
                Src, Dst);
  // Checked when the copy runs, as ROCr's engine faults only then.
  auto Copy = [=]() -> bool {
    ResolvedRangeTy D = resolveRange(Dst, Size, Engine);
    ResolvedRangeTy S = resolveRange(Src, Size, Engine);
    for (auto *R : {&D, &S}) {
      if (engineReaches(*R, Engine))
        continue;
      // A copy engine that runs off the end of a mapping page-faults on a
      // GPU, and ROCr hands the fault to the system event handlers (LLVM's
      // own plugin aborts in its handler); unhandled, it is a misuse.
      if (!R->Usable && Engine &&
          raiseMemoryFault(Engine, R->FaultAddress,
                           std::string("hsa_amd_memory_async_copy: ") + What +
                               " by " + describeAgent(Engine) + ": " +
                               (R == &D ? "destination " : "source ") +
                               R->Why))
        return false;
      misuse("hsa_amd_memory_async_copy", "%s by %s: %s %s", What,
             describeAgent(Engine).c_str(), R == &D ? "destination" : "source",
             R->Why.c_str());
      return false;
    }
    if (Size)
      std::memmove(D.HostPtr, S.HostPtr, Size);
    return true;
  };
  submitAsync(std::move(DepList), Done, Copy, "hsa_amd_memory_async_copy",
              What);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_memory_fill(void *Ptr, uint32_t Value, size_t Count) {
  CHECK_INIT();
  if (!Ptr || reinterpret_cast<uintptr_t>(Ptr) % 4)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (Count > SIZE_MAX / 4)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  // ROCr fills an allocation or a locked range (agent or host address) and
  // returns INVALID_ALLOCATION for anything else, a range that runs past
  // the end of one included.
  ResolvedRangeTy R = resolveRange(Ptr, Count * 4, nullptr);
  bool Fillable = R.Known || R.LockedHost;
  if (!R.Usable || (config().Strict && !Fillable)) {
    misuse(__func__, "%zu words at %p: %s", Count, Ptr, R.Why.c_str());
    return HSA_STATUS_ERROR_INVALID_ALLOCATION;
  }
  auto *Words = reinterpret_cast<uint32_t *>(R.HostPtr);
  for (size_t I = 0; I < Count; ++I)
    Words[I] = Value;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_memory_copy(void *Dst, const void *Src, size_t Size) {
  CHECK_INIT();
  if (!Dst || !Src)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  // A synchronous copy by the runtime on behalf of the host, which ROCr
  // makes with whatever engine reaches both sides (locking plain host
  // memory for it): agent aliases of locked memory are translated, and only
  // a range that runs past the end of an allocation or alias is a misuse.
  ResolvedRangeTy D = resolveRange(Dst, Size, nullptr);
  ResolvedRangeTy S = resolveRange(Src, Size, nullptr);
  for (auto *R : {&D, &S}) {
    if (!R->Usable) {
      misuse("hsa_memory_copy", "copy of %zu bytes from %p to %p: %s %s", Size,
             Src, Dst, R == &D ? "destination" : "source", R->Why.c_str());
      return HSA_STATUS_ERROR_INVALID_ALLOCATION;
    }
  }
  if (Size)
    std::memmove(D.HostPtr, S.HostPtr, Size);
  return HSA_STATUS_SUCCESS;
}

} // extern "C"

// SPDX-License-Identifier: Apache-2.0
#include "DetachedTask.h"
#include "BatchDone.h"
#include "Diagnostics.h"

#include <cerrno>
#include <cstdio>
#include <dlfcn.h>
#include <unistd.h>
#include <utility>
#include <vector>

using namespace ompxio;

namespace {
/// A task of DetachedTasksTy::spawn as libomp allocates it: libomp's head,
/// then the private data that its body reads.
struct OperationTaskTy {
  libomp::TaskTy Head;
  DetachedTasksTy *Tasks;
  DetachedOperationTy *Op; ///< Owned until the body takes it.
  omp_event_handle_t Event;
};
} // namespace

TaskEventTy::TaskEventTy(TaskEventTy &&Other) noexcept
    : Tasks(std::exchange(Other.Tasks, nullptr)), Event(Other.Event) {}

TaskEventTy::~TaskEventTy() { fulfill(); }

void TaskEventTy::fulfill() {
  if (DetachedTasksTy *T = std::exchange(Tasks, nullptr))
    T->endTask(Event);
}

bool LibompTaskEntriesTy::resolve(LibompTaskEntriesTy &Out,
                                  std::string &Missing) {
  Missing.clear();
  auto Get = [&](auto &Slot, const char *Name) {
    Slot = reinterpret_cast<std::remove_reference_t<decltype(Slot)>>(
        dlsym(RTLD_DEFAULT, Name));
    if (!Slot)
      Missing += std::string(Missing.empty() ? "" : ", ") + Name;
  };
  Get(Out.GlobalThreadNum, "__kmpc_global_thread_num");
  Get(Out.TaskAlloc, "__kmpc_omp_task_alloc");
  Get(Out.AllowCompletionEvent, "__kmpc_task_allow_completion_event");
  Get(Out.TaskWithDeps, "__kmpc_omp_task_with_deps");
  Get(Out.FulfillEvent, "omp_fulfill_event");
  return Missing.empty();
}

DetachedTasksTy::DetachedTasksTy(const LibompTaskEntriesTy &Entries)
    : Entries(Entries), CreatorPid(::getpid()) {
  Loc.Flags = libomp::IdentKmpc;
  Loc.Source = ";libompx_io;ompx_io_depend;0;0;;";
  // libomp initialises itself on this first call, so its exit handlers are
  // registered before this object's destructor, which therefore runs
  // while libomp is still there to take the last fulfillments.
  (void)this->Entries.GlobalThreadNum(&Loc);
}

DetachedTasksTy::~DetachedTasksTy() {
  // A forked child's copy counts the parent's operations, which never
  // complete here.
  if (::getpid() != CreatorPid)
    return;
  std::unique_lock<std::mutex> Guard(Lock);
  if (Running && infoEnabled())
    std::fprintf(stderr,
                 "%s: %zu OpenMP-depend transfer(s) still running at exit: "
                 "finishing them\n",
                 linePrefix().c_str(), Running);
  Idle.wait(Guard, [&] { return Running == 0; });
}

size_t DetachedTasksTy::running() const {
  std::lock_guard<std::mutex> Guard(Lock);
  return Running;
}

int DetachedTasksTy::spawn(std::unique_ptr<DetachedOperationTy> Op,
                           int DepobjCount, const omp_depend_t *DepobjList,
                           std::string &Why) {
  std::vector<libomp::DependInfoTy> Deps;
  for (int I = 0; I < DepobjCount; ++I) {
    const auto *Records =
        static_cast<const libomp::DependInfoTy *>(DepobjList[I]);
    if (!Records) {
      Why = "depend object " + std::to_string(I) +
            " is NULL (not initialised with #pragma omp depobj)";
      return EINVAL;
    }
    intptr_t Count = Records[-1].BaseAddr;
    Deps.insert(Deps.end(), Records, Records + Count);
  }
  int32_t Gtid = Entries.GlobalThreadNum(&Loc);
  auto *Task = reinterpret_cast<OperationTaskTy *>(
      Entries.TaskAlloc(&Loc, Gtid, libomp::TaskTied | libomp::TaskDetachable,
                        sizeof(OperationTaskTy), 0, runTask));
  if (!Task) {
    Why = "__kmpc_omp_task_alloc of " + std::to_string(sizeof(OperationTaskTy)) +
          " bytes failed";
    return ENOMEM;
  }
  void *Event = Entries.AllowCompletionEvent(&Loc, Gtid, &Task->Head);
  Task->Tasks = this;
  Task->Op = Op.release();
  Task->Event = omp_event_handle_t(reinterpret_cast<uintptr_t>(Event));
  // The task may run in this call (an undeferred task, or a serial team).
  (void)Entries.TaskWithDeps(&Loc, Gtid, &Task->Head, int32_t(Deps.size()),
                             Deps.data(), 0, nullptr);
  return 0;
}

int32_t DetachedTasksTy::runTask(int32_t, void *Task) {
  auto *T = static_cast<OperationTaskTy *>(Task);
  std::unique_ptr<DetachedOperationTy> Op(std::exchange(T->Op, nullptr));
  DetachedTasksTy &Tasks = *T->Tasks;
  Tasks.beginTask();
  Op->start(TaskEventTy(Tasks, T->Event));
  return 0;
}

void DetachedTasksTy::beginTask() {
  std::lock_guard<std::mutex> Guard(Lock);
  ++Running;
}

void DetachedTasksTy::endTask(omp_event_handle_t Event) {
  Entries.FulfillEvent(Event);
  // Notified under the lock: the destructor, waiting at exit, cannot
  // destroy Idle while it is being notified.
  std::lock_guard<std::mutex> Guard(Lock);
  if (--Running == 0)
    Idle.notify_all();
}

DetachedTasksTy *ompxio::detachedTasks(std::string &Why) {
  struct InstanceTy {
    std::unique_ptr<DetachedTasksTy> Tasks;
    std::string Missing;
  };
  static InstanceTy Instance = [] {
    // Destroyed after the tasks, which wait at exit for their batches.
    createBatchRegistry();
    InstanceTy I;
    LibompTaskEntriesTy Entries;
    if (LibompTaskEntriesTy::resolve(Entries, I.Missing))
      I.Tasks = std::make_unique<DetachedTasksTy>(Entries);
    return I;
  }();
  if (!Instance.Tasks)
    Why = "libomp's task entry points are not in the process (missing: " +
          Instance.Missing + "); link the program with -fopenmp";
  return Instance.Tasks.get();
}

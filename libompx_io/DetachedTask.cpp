// SPDX-License-Identifier: Apache-2.0
#include "DetachedTask.h"
#include "BatchDone.h"
#include "Diagnostics.h"
#include "PluginDirectory.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
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
  std::thread::id Creator; ///< The thread that created the task.
};
} // namespace

TaskEventTy::TaskEventTy(TaskEventTy &&Other) noexcept
    : Tasks(std::exchange(Other.Tasks, nullptr)), Event(Other.Event),
      Creator(Other.Creator) {}

TaskEventTy::~TaskEventTy() { fulfill(); }

void TaskEventTy::fulfill() {
  if (DetachedTasksTy *T = std::exchange(Tasks, nullptr))
    T->endTask(Event, Creator, /*Started=*/true);
}

bool LibompTaskEntriesTy::resolve(LibompTaskEntriesTy &Out,
                                  std::string &Missing) {
  Missing.clear();
  auto Get = [&](auto &Slot, const char *Name) {
    Slot = reinterpret_cast<std::remove_reference_t<decltype(Slot)>>(
        processSymbol(Name));
    if (!Slot)
      Missing += std::string(Missing.empty() ? "" : ", ") + Name;
  };
  Get(Out.GlobalThreadNum, "__kmpc_global_thread_num");
  Get(Out.TaskAlloc, "__kmpc_omp_task_alloc");
  Get(Out.AllowCompletionEvent, "__kmpc_task_allow_completion_event");
  Get(Out.TaskWithDeps, "__kmpc_omp_task_with_deps");
  Get(Out.FulfillEvent, "omp_fulfill_event");
  Get(Out.Taskwait, "__kmpc_omp_taskwait");
  return Missing.empty();
}

DetachedTasksTy::DetachedTasksTy(const LibompTaskEntriesTy &Entries)
    : Entries(Entries) {
  Loc.Flags = libomp::IdentKmpc;
  Loc.Source = ";libompx_io;ompx_io_depend;0;0;;";
  // libomp initialises itself on this first call: its exit handlers (its
  // library destructor; atexit where it is linked statically) run after
  // the one detachedTasks registers next, so finishAtExit runs tasks while
  // libomp is still there.
  (void)this->Entries.GlobalThreadNum(&Loc);
}

void DetachedTasksTy::finishAtExit() {
  // A forked child's copy counts the parent's tasks, which never complete
  // here.
  if (!Creator.isCurrent())
    return;
  size_t Mine = 0;
  {
    std::lock_guard<std::mutex> Guard(Lock);
    auto It = Unfinished.find(std::this_thread::get_id());
    if (It != Unfinished.end())
      Mine = It->second;
  }
  if (Mine) {
    if (infoEnabled())
      std::fprintf(stderr,
                   "%s: %zu OpenMP-depend task(s) not complete at exit: "
                   "finishing them\n",
                   linePrefix().c_str(), Mine);
    // Waits for, and runs, the tasks this thread created in its current
    // task, those whose dependences are not met yet included, as a
    // taskwait at the end of main would. This thread created tasks, so
    // libomp knows it already: nothing is registered.
    (void)Entries.Taskwait(&Loc, Entries.GlobalThreadNum(&Loc));
  }
  std::unique_lock<std::mutex> Guard(Lock);
  if (Running && infoEnabled())
    std::fprintf(stderr,
                 "%s: %zu OpenMP-depend transfer(s) still running at exit: "
                 "finishing them\n",
                 linePrefix().c_str(), Running);
  Idle.wait(Guard, [&] { return Running == 0; });
  // Closed under the lock that beginTask takes: no operation starts after
  // the wait above.
  Closed = true;
  size_t Dropped = 0;
  for (const auto &[Thread, Count] : Unfinished)
    Dropped += Count;
  // Work the program was promised: said even without OMPX_IO_INFO.
  if (Dropped)
    std::fprintf(stderr,
                 "%s: warning: %zu OpenMP-depend task(s) never started before "
                 "exit (created by another thread, or inside a task that did "
                 "not wait for them): their transfers do not run\n",
                 linePrefix().c_str(), Dropped);
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
  // Untied, or threads waiting in taskwait may hang (DetachedTask.h).
  auto *Task = reinterpret_cast<OperationTaskTy *>(Entries.TaskAlloc(
      &Loc, Gtid, libomp::TaskDetachable, sizeof(OperationTaskTy), 0, runTask));
  if (!Task) {
    Why = "__kmpc_omp_task_alloc of " + std::to_string(sizeof(OperationTaskTy)) +
          " bytes failed";
    return ENOMEM;
  }
  void *Event = Entries.AllowCompletionEvent(&Loc, Gtid, &Task->Head);
  Task->Tasks = this;
  Task->Op = Op.release();
  Task->Event = omp_event_handle_t(reinterpret_cast<uintptr_t>(Event));
  Task->Creator = std::this_thread::get_id();
  {
    std::lock_guard<std::mutex> Guard(Lock);
    ++Unfinished[Task->Creator];
  }
  // The task may run in this call (an undeferred task, or a serial team).
  (void)Entries.TaskWithDeps(&Loc, Gtid, &Task->Head, int32_t(Deps.size()),
                             Deps.data(), 0, nullptr);
  return 0;
}

int32_t DetachedTasksTy::runTask(int32_t, void *Task) {
  auto *T = static_cast<OperationTaskTy *>(Task);
  std::unique_ptr<DetachedOperationTy> Op(std::exchange(T->Op, nullptr));
  DetachedTasksTy &Tasks = *T->Tasks;
  if (!Tasks.beginTask()) {
    // libomp's own shutdown runs the task after finishAtExit: the library
    // the operation would use may be gone.
    Op.reset();
    Tasks.endTask(T->Event, T->Creator, /*Started=*/false);
    return 0;
  }
  Op->start(TaskEventTy(Tasks, T->Event, T->Creator));
  return 0;
}

bool DetachedTasksTy::beginTask() {
  std::lock_guard<std::mutex> Guard(Lock);
  if (Closed)
    return false;
  ++Running;
  return true;
}

void DetachedTasksTy::endTask(omp_event_handle_t Event, std::thread::id Creator,
                              bool Started) {
  Entries.FulfillEvent(Event);
  // Notified under the lock: finishAtExit, waiting, sees the counts of a
  // task only once it is fulfilled.
  std::lock_guard<std::mutex> Guard(Lock);
  auto It = Unfinished.find(Creator);
  if (--It->second == 0)
    Unfinished.erase(It);
  if (Started && --Running == 0)
    Idle.notify_all();
}

DetachedTasksTy *ompxio::detachedTasks(std::string &Why) {
  struct InstanceTy {
    DetachedTasksTy *Tasks = nullptr;
    std::string Missing;
  };
  static InstanceTy Instance = [] {
    // Built first, so destroyed after the exit handler below, which runs
    // tasks that use the library's state and the batches.
    createBatchRegistry();
    InstanceTy I;
    LibompTaskEntriesTy Entries;
    if (LibompTaskEntriesTy::resolve(Entries, I.Missing)) {
      // Never destroyed: libomp may run a task of ours after every exit
      // handler, at its own shutdown, and that task must find the object
      // closed rather than freed. Reachable from here, so no leak report.
      I.Tasks = new DetachedTasksTy(Entries);
      std::atexit([] { Instance.Tasks->finishAtExit(); });
    }
    return I;
  }();
  if (!Instance.Tasks)
    Why = "libomp's task entry points are not in the process (missing: " +
          Instance.Missing + "); link the program with -fopenmp";
  return Instance.Tasks;
}

// SPDX-License-Identifier: Apache-2.0
//
// An asynchronous operation run as an OpenMP task: a detached task, ordered
// by the program's depobj objects, whose body starts the operation once the
// tasks it depends on completed, and which completes when the operation
// fulfills its event. Tasks that depend on the same objects run after it;
// taskwait and the barriers wait for it, as for any task of libomp's.
//
// The tasks are untied. libomp finishes a detached task fulfilled outside
// its team (by an engine thread) in a task it queues on the team's first
// thread, which releases the tasks that depend on it into that thread's
// queue. A thread in taskwait may run only descendants of the task it waits
// in (the scheduling constraint of tied tasks); it looks at the newest task
// of its own queue only, and at the oldest of another thread's only, unless
// the team has seen an untied task. With tied tasks, a queue holding a task
// of its own thread before one of another thread's is run by neither, and
// every thread spins in taskwait for ever (libomp 16; later versions
// schedule the same way). Untied, our tasks and their completions may run
// on any thread, and the threads look through every queue for the
// program's own tasks that our completions released.
//
// At exit, the thread that exits runs the tasks it created and that did not
// complete, as a taskwait would, then every operation started finishes
// (finishAtExit). libomp may still run a task of another thread after that,
// at its own shutdown: that task finds the tasks closed and completes
// without starting its operation.
//
// @code
//   class ReadTy final : public DetachedOperationTy {
//     void start(TaskEventTy Done) override {
//       // Hand Done to whatever finishes the work; it calls Done.fulfill().
//     }
//   };
//   DetachedTasksTy *Tasks = detachedTasks(Why);
//   int Errno = Tasks ? Tasks->spawn(std::make_unique<ReadTy>(), N, Objs, Why)
//                     : ENOSYS;
// @endcode
#ifndef OMPX_IO_DETACHEDTASK_H
#define OMPX_IO_DETACHEDTASK_H

#include "LibompTaskABI.h"
#include "offloadio/CreatorProcess.h"

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <sys/types.h>
#include <thread>
#include <unordered_map>

namespace ompxio {

class DetachedTasksTy;

/// The right to complete one detached task; move-only. Dropping it
/// unfulfilled fulfills it, so that no task is left waiting for ever.
class TaskEventTy {
public:
  TaskEventTy(TaskEventTy &&Other) noexcept;
  TaskEventTy &operator=(TaskEventTy &&) = delete;
  TaskEventTy(const TaskEventTy &) = delete;
  ~TaskEventTy();

  /// Complete the task, from any thread: the tasks that depend on it may
  /// run, here or elsewhere, and taskwait may return. What the task
  /// produced must be stored before: the task's memory is libomp's, and may
  /// be gone after.
  void fulfill();

private:
  friend class DetachedTasksTy;
  TaskEventTy(DetachedTasksTy &Tasks, omp_event_handle_t Event,
              std::thread::id Creator)
      : Tasks(&Tasks), Event(Event), Creator(Creator) {}

  DetachedTasksTy *Tasks; ///< Null once fulfilled or moved from.
  omp_event_handle_t Event;
  std::thread::id Creator; ///< The thread that created the task.
};

/// An asynchronous operation run as a detached task.
class DetachedOperationTy {
public:
  virtual ~DetachedOperationTy() = default;
  /// Start the operation, in the task, once its dependences are met; must
  /// not wait for it. \p Done goes to whatever completes the operation,
  /// which fulfills it then (at once when the operation fails to start).
  /// The operation object is destroyed when start returns, or without
  /// start when the task runs after finishAtExit.
  virtual void start(TaskEventTy Done) = 0;
};

/// libomp's task entry points.
struct LibompTaskEntriesTy {
  libomp::GlobalThreadNumFnTy GlobalThreadNum = nullptr;
  libomp::TaskAllocFnTy TaskAlloc = nullptr;
  libomp::AllowCompletionEventFnTy AllowCompletionEvent = nullptr;
  libomp::TaskWithDepsFnTy TaskWithDeps = nullptr;
  libomp::FulfillEventFnTy FulfillEvent = nullptr;
  libomp::TaskwaitFnTy Taskwait = nullptr;

  /// The entry points of the libomp loaded in the process (dlsym); false,
  /// with the missing names in \p Missing, when some are not there.
  static bool resolve(LibompTaskEntriesTy &Out, std::string &Missing);
};

/// Creates detached tasks through libomp, and finishes them at exit.
class DetachedTasksTy {
public:
  /// \p Entries must have every entry point.
  explicit DetachedTasksTy(const LibompTaskEntriesTy &Entries);
  DetachedTasksTy(const DetachedTasksTy &) = delete;
  DetachedTasksTy &operator=(const DetachedTasksTy &) = delete;

  /// Create a task ordered by the \p DepobjCount objects of \p DepobjList
  /// that starts \p Op when its dependences are met; it may start before
  /// this returns. 0, or an errno value with the reason in \p Why (EINVAL:
  /// a NULL depend object).
  int spawn(std::unique_ptr<DetachedOperationTy> Op, int DepobjCount,
            const omp_depend_t *DepobjList, std::string &Why);

  /// The process exits: the calling thread runs the tasks it created that
  /// did not complete (a taskwait), every operation started finishes, and
  /// the tasks close: a task that runs later does not start its operation.
  /// Tasks of other threads that never started are counted on stderr.
  /// Nothing in a forked child, whose tasks are the parent's.
  void finishAtExit();

private:
  friend class TaskEventTy;
  /// The body of every task of spawn().
  static int32_t runTask(int32_t Gtid, void *Task);
  /// A task's operation starts, fulfilled with endTask(); false when the
  /// tasks are closed, and the operation must not start.
  bool beginTask();
  /// Fulfill \p Event, of a task that \p Creator created, then stop
  /// counting the task, and its operation if \p Started.
  void endTask(omp_event_handle_t Event, std::thread::id Creator, bool Started);

  LibompTaskEntriesTy Entries;
  libomp::IdentTy Loc; ///< The location libomp's calls are given.
  mutable std::mutex Lock; ///< Guards the counts and Closed.
  std::condition_variable Idle;
  /// Operations started whose tasks are not fulfilled yet.
  size_t Running = 0;
  /// Tasks created and not fulfilled yet, by the thread that created them.
  std::unordered_map<std::thread::id, size_t> Unfinished;
  bool Closed = false; ///< Set by finishAtExit.
  /// The process that created this object: a forked child's copy does not
  /// wait for the parent's tasks.
  offloadio::CreatorProcessTy Creator;
};

/// The process's DetachedTasksTy, created on first use, when it registers
/// the exit handler that calls finishAtExit; null, with why in \p Why,
/// when libomp's task entry points are not in the process.
DetachedTasksTy *detachedTasks(std::string &Why);

} // namespace ompxio

#endif // OMPX_IO_DETACHEDTASK_H

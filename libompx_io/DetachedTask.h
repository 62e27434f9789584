// SPDX-License-Identifier: Apache-2.0
//
// An asynchronous operation run as an OpenMP task: a detached task, ordered
// by the program's depobj objects, whose body starts the operation once the
// tasks it depends on completed, and which completes when the operation
// fulfills its event. Tasks that depend on the same objects run after it;
// taskwait and the barriers wait for it, as for any task of libomp's.
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

#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <sys/types.h>

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
  /// run, and taskwait may return. What the task produced must be stored
  /// before: the task's memory is libomp's, and may be gone after.
  void fulfill();

private:
  friend class DetachedTasksTy;
  TaskEventTy(DetachedTasksTy &Tasks, omp_event_handle_t Event)
      : Tasks(&Tasks), Event(Event) {}

  DetachedTasksTy *Tasks; ///< Null once fulfilled or moved from.
  omp_event_handle_t Event;
};

/// An asynchronous operation run as a detached task.
class DetachedOperationTy {
public:
  virtual ~DetachedOperationTy() = default;
  /// Start the operation, in the task, once its dependences are met; must
  /// not wait for it. \p Done goes to whatever completes the operation,
  /// which fulfills it then (at once when the operation fails to start).
  /// The operation object is destroyed when start returns.
  virtual void start(TaskEventTy Done) = 0;
};

/// libomp's task entry points.
struct LibompTaskEntriesTy {
  libomp::GlobalThreadNumFnTy GlobalThreadNum = nullptr;
  libomp::TaskAllocFnTy TaskAlloc = nullptr;
  libomp::AllowCompletionEventFnTy AllowCompletionEvent = nullptr;
  libomp::TaskWithDepsFnTy TaskWithDeps = nullptr;
  libomp::FulfillEventFnTy FulfillEvent = nullptr;

  /// The entry points of the libomp loaded in the process (dlsym); false,
  /// with the missing names in \p Missing, when some are not there.
  static bool resolve(LibompTaskEntriesTy &Out, std::string &Missing);
};

/// Creates detached tasks through libomp, and waits at exit for those that
/// started their operation and were not fulfilled yet: their operations
/// finish and fulfill them while libomp is still there.
class DetachedTasksTy {
public:
  /// \p Entries must have every entry point.
  explicit DetachedTasksTy(const LibompTaskEntriesTy &Entries);
  ~DetachedTasksTy();
  DetachedTasksTy(const DetachedTasksTy &) = delete;
  DetachedTasksTy &operator=(const DetachedTasksTy &) = delete;

  /// Create a task ordered by the \p DepobjCount objects of \p DepobjList
  /// that starts \p Op when its dependences are met; it may start before
  /// this returns. 0, or an errno value with the reason in \p Why (EINVAL:
  /// a NULL depend object).
  int spawn(std::unique_ptr<DetachedOperationTy> Op, int DepobjCount,
            const omp_depend_t *DepobjList, std::string &Why);

  /// Tasks whose operation started and that are not fulfilled yet.
  size_t running() const;

private:
  friend class TaskEventTy;
  /// The body of every task of spawn().
  static int32_t runTask(int32_t Gtid, void *Task);
  /// A task's operation started; fulfilled with endTask().
  void beginTask();
  /// Fulfill \p Event, then stop counting its task.
  void endTask(omp_event_handle_t Event);

  LibompTaskEntriesTy Entries;
  libomp::IdentTy Loc; ///< The location libomp's calls are given.
  mutable std::mutex Lock; ///< Guards Running.
  std::condition_variable Idle;
  size_t Running = 0;
  /// The process that created this object: a forked child's copy does not
  /// wait for the parent's operations.
  pid_t CreatorPid;
};

/// The process's DetachedTasksTy, created on first use; null, with why in
/// \p Why, when libomp's task entry points are not in the process.
DetachedTasksTy *detachedTasks(std::string &Why);

} // namespace ompxio

#endif // OMPX_IO_DETACHEDTASK_H

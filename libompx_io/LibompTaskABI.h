// SPDX-License-Identifier: Apache-2.0
//
// The few types of libomp's task ABI that libompx_io needs to create a
// detached task with dependences, as clang 16 emits them for
// `#pragma omp task untied detach(Event) depend(depobj: Obj)`, and to wait
// for tasks as for `#pragma omp taskwait`. They mirror LLVM 16 libomp
// (Debian's libomp5-16, openmp/runtime/src/kmp.h): ident_t,
// kmp_task_t, kmp_depend_info_t, the compiler half of kmp_tasking_flags_t,
// and the exported __kmpc_* entry points' signatures. libomp's own header is
// not installed, hence these copies; the static_asserts pin the layouts
// that clang's code generation uses (x86_64 and every other LP64 target).
#ifndef OMPX_IO_LIBOMPTASKABI_H
#define OMPX_IO_LIBOMPTASKABI_H

#include <omp.h>

#include <cstddef>
#include <cstdint>

namespace ompxio::libomp {

/// ident_t: the source location libomp's entry points take.
struct IdentTy {
  int32_t Reserved1 = 0;
  int32_t Flags = 0;
  int32_t Reserved2 = 0;
  int32_t Reserved3 = 0;
  const char *Source = nullptr; ///< ";file;function;line;column;;"
};
/// ident_t flag KMP_IDENT_KMPC: the caller uses the __kmpc_* interface.
constexpr int32_t IdentKmpc = 0x02;

/// kmp_routine_entry_t: a task's body, called with the executing thread's
/// global id and the task.
using TaskRoutineTy = int32_t (*)(int32_t Gtid, void *Task);

/// kmp_cmplrdata_t.
union CompilerDataTy {
  int32_t Priority;
  TaskRoutineTy Destructors;
};

/// kmp_task_t: the head of a task allocation; the caller's private data
/// follows it (the sizeof_kmp_task_t given to __kmpc_omp_task_alloc
/// covers both).
struct TaskTy {
  void *Shareds;
  TaskRoutineTy Routine;
  int32_t PartId;
  CompilerDataTy Data1;
  CompilerDataTy Data2;
};

/// kmp_depend_info_t: one dependence record. An omp_depend_t made by
/// `#pragma omp depobj` points at its records; the record before them holds
/// their number in BaseAddr (clang's depobj layout).
struct DependInfoTy {
  intptr_t BaseAddr;
  size_t Len;
  uint8_t Flags; ///< in 1, out 2, mutexinoutset 4, inoutset 8, all 0x80.
};

/// kmp_tasking_flags_t, compiler bits: detachable (the task has an
/// allow-completion event). Without the tied bit (0x01) a task is untied.
constexpr int32_t TaskDetachable = 0x40;

/// __kmpc_global_thread_num.
using GlobalThreadNumFnTy = int32_t (*)(IdentTy *Loc);
/// __kmpc_omp_task_alloc.
using TaskAllocFnTy = TaskTy *(*)(IdentTy *Loc, int32_t Gtid, int32_t Flags,
                                  size_t SizeOfTask, size_t SizeOfShareds,
                                  TaskRoutineTy Routine);
/// __kmpc_task_allow_completion_event: the task's event, as
/// omp_event_handle_t's value.
using AllowCompletionEventFnTy = void *(*)(IdentTy *Loc, int32_t Gtid,
                                           TaskTy *Task);
/// __kmpc_omp_task_with_deps.
using TaskWithDepsFnTy = int32_t (*)(IdentTy *Loc, int32_t Gtid, TaskTy *Task,
                                     int32_t NumDeps, DependInfoTy *Deps,
                                     int32_t NumNoAliasDeps,
                                     DependInfoTy *NoAliasDeps);
/// omp_fulfill_event.
using FulfillEventFnTy = void (*)(omp_event_handle_t Event);
/// __kmpc_omp_taskwait: wait for the children of the calling thread's
/// current task, running tasks meanwhile.
using TaskwaitFnTy = int32_t (*)(IdentTy *Loc, int32_t Gtid);

static_assert(sizeof(void *) == 8, "the layouts below are LP64's");
static_assert(sizeof(IdentTy) == 24 && offsetof(IdentTy, Source) == 16,
              "ident_t layout");
static_assert(sizeof(TaskTy) == 40 && offsetof(TaskTy, PartId) == 16 &&
                  offsetof(TaskTy, Data1) == 24 &&
                  offsetof(TaskTy, Data2) == 32,
              "kmp_task_t layout");
static_assert(sizeof(DependInfoTy) == 24 && offsetof(DependInfoTy, Len) == 8 &&
                  offsetof(DependInfoTy, Flags) == 16,
              "kmp_depend_info_t layout");
static_assert(sizeof(omp_event_handle_t) == sizeof(void *),
              "omp_event_handle_t carries a kmp_event_t pointer");

} // namespace ompxio::libomp

#endif // OMPX_IO_LIBOMPTASKABI_H

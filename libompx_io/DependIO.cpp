// SPDX-License-Identifier: Apache-2.0
//
// include/ompx_io_depend.h: file transfers and batches run as detached
// OpenMP tasks (DetachedTask.h) whose body submits the work with a
// completion notification (NotifiedTransfer.h, BatchDone.h); the engine
// thread that completes it stores the result and fulfills the task. No
// thread waits for a transfer.
#include "BatchDone.h"
#include "DetachedTask.h"
#include "Diagnostics.h"
#include "NotifiedTransfer.h"
#include "ompx_io_depend.h"

#include <cerrno>
#include <cstdio>
#include <memory>
#include <string>

#define OMPX_API extern "C" __attribute__((visibility("default")))

using namespace ompxio;

namespace {

/// Where a depend call's task puts its outcome, and its task's event.
class DependResultTy final : public TransferWaiterTy {
public:
  DependResultTy(ssize_t *Result, int *Errno, TaskEventTy Done)
      : Result(Result), Errno(Errno), Done(std::move(Done)) {}

  void transferDone(TransferOutcomeTy Outcome) override {
    if (Result)
      *Result = Outcome.Result;
    if (Errno)
      *Errno = Outcome.Errno;
    // With nowhere to put the errno, the failure would go unseen.
    else if (Outcome.Result < 0)
      std::fprintf(stderr, "%s: %s\n", linePrefix().c_str(),
                   Outcome.Message.c_str());
    // Last: the program may read the results once the task completed.
    Done.fulfill();
  }

private:
  ssize_t *Result;
  int *Errno;
  TaskEventTy Done;
};

/// A transfer as a detached task's operation.
class DependTransferTy final : public DetachedOperationTy {
public:
  DependTransferTy(const TransferArgsTy &Args, ssize_t *Result, int *Errno)
      : Args(Args), Result(Result), Errno(Errno) {}

  void start(TaskEventTy Done) override {
    submitNotified(Args, std::make_unique<DependResultTy>(Result, Errno,
                                                          std::move(Done)));
  }

private:
  TransferArgsTy Args;
  ssize_t *Result;
  int *Errno;
};

/// A batch's completion: the task's event and where its failure count goes.
class BatchDoneTy {
public:
  BatchDoneTy(ompx_io_batch_t Batch, ssize_t *Failed, TaskEventTy Done)
      : Batch(Batch), Failed(Failed), Done(std::move(Done)) {}

  /// The batch's notification: collect it (every operation is done, so the
  /// wait does not wait), store the count, complete the task.
  static void run(void *Self) {
    std::unique_ptr<BatchDoneTy> This(static_cast<BatchDoneTy *>(Self));
    // This thread is a plugin's engine thread, or the program's thread that
    // runs the task: its errno and last error belong to no batch.
    int SavedErrno = errno;
    std::string SavedError = lastError();
    ssize_t N = ompx_io_batch_wait(This->Batch);
    if (This->Failed)
      *This->Failed = N;
    errno = SavedErrno;
    lastError() = std::move(SavedError);
    // Last: the program may read the results once the task completed.
    This->Done.fulfill();
  }

private:
  ompx_io_batch_t Batch;
  ssize_t *Failed;
  TaskEventTy Done;
};

/// A batch as a detached task's operation.
class DependBatchTy final : public DetachedOperationTy {
public:
  DependBatchTy(ompx_io_op_t *Ops, size_t Count, ssize_t *Failed)
      : Ops(Ops), Count(Count), Failed(Failed) {}

  void start(TaskEventTy Done) override {
    // The task runs on any thread of the program: it keeps its errno and
    // last error; the batch's outcome goes into the operations.
    int SavedErrno = errno;
    std::string SavedError = lastError();
    ompx_io_batch_t Batch;
    if (ompx_io_batch_submit(Ops, Count, &Batch)) {
      int Errno = errno;
      // With nowhere to put the count, the refusal would go unseen.
      if (!Failed)
        std::fprintf(stderr, "%s: %s\n", linePrefix().c_str(),
                     lastError().c_str());
      for (size_t I = 0; I < Count; ++I) {
        Ops[I].result = -1;
        Ops[I].error = Errno;
      }
      if (Failed)
        *Failed = -1;
      errno = SavedErrno;
      lastError() = std::move(SavedError);
      Done.fulfill();
      return;
    }
    errno = SavedErrno;
    lastError() = std::move(SavedError);
    auto *Pending = new BatchDoneTy(Batch, Failed, std::move(Done));
    // In flight since the submission above: the registration cannot fail.
    if (!notifyBatchDone(Batch, &BatchDoneTy::run, Pending))
      BatchDoneTy::run(Pending);
  }

private:
  ompx_io_op_t *Ops;
  size_t Count;
  ssize_t *Failed;
};

/// Check the depend list of \p Call and create the task that runs \p Op;
/// 0, or -1 with errno.
int spawnDependTask(const char *Call, std::unique_ptr<DetachedOperationTy> Op,
                    int DepobjCount, omp_depend_t *DepobjList) {
  if (DepobjCount < 0)
    return fail(EINVAL, std::string(Call) + ": depobj_count " +
                            std::to_string(DepobjCount) + " is negative");
  if (DepobjCount > 0 && !DepobjList)
    return fail(EINVAL, std::string(Call) + ": depobj_list is NULL and "
                                            "depobj_count is " +
                            std::to_string(DepobjCount));
  std::string Why;
  DetachedTasksTy *Tasks = detachedTasks(Why);
  if (!Tasks)
    return fail(ENOSYS, std::string(Call) + ": " + Why);
  if (int Errno = Tasks->spawn(std::move(Op), DepobjCount, DepobjList, Why))
    return fail(Errno, std::string(Call) + ": " + Why);
  return 0;
}

/// ompx_target_pread_depend and ompx_target_pwrite_depend.
int transferDepend(const char *Call, bool IsWrite, int Fd, void *Buf,
                   size_t Count, off_t Offset, int Device, ssize_t *Result,
                   int *Errno, int DepobjCount, omp_depend_t *DepobjList) {
  TransferArgsTy Args{Call, IsWrite, Fd, Buf, Count, Offset, Device};
  return spawnDependTask(
      Call, std::make_unique<DependTransferTy>(Args, Result, Errno),
      DepobjCount, DepobjList);
}

} // namespace

OMPX_API int ompx_io_batch_submit_depend(ompx_io_op_t *Ops, size_t Count,
                                         ssize_t *Failed, int DepobjCount,
                                         omp_depend_t *DepobjList) {
  const char *Call = "ompx_io_batch_submit_depend";
  if (!Ops)
    return fail(EINVAL, std::string(Call) + ": ops is NULL");
  if (!Count)
    return fail(EINVAL, std::string(Call) + ": nops is 0");
  return spawnDependTask(Call,
                         std::make_unique<DependBatchTy>(Ops, Count, Failed),
                         DepobjCount, DepobjList);
}

OMPX_API int ompx_target_pread_depend(int Fd, void *Buf, size_t Count,
                                      off_t Offset, int Device,
                                      ssize_t *Result, int *Errno,
                                      int DepobjCount,
                                      omp_depend_t *DepobjList) {
  return transferDepend("ompx_target_pread_depend", false, Fd, Buf, Count,
                        Offset, Device, Result, Errno, DepobjCount,
                        DepobjList);
}

OMPX_API int ompx_target_pwrite_depend(int Fd, const void *Buf, size_t Count,
                                       off_t Offset, int Device,
                                       ssize_t *Result, int *Errno,
                                       int DepobjCount,
                                       omp_depend_t *DepobjList) {
  return transferDepend("ompx_target_pwrite_depend", true, Fd,
                        const_cast<void *>(Buf), Count, Offset, Device, Result,
                        Errno, DepobjCount, DepobjList);
}

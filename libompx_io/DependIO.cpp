// SPDX-License-Identifier: Apache-2.0
//
// include/ompx_io_depend.h: file transfers and batches run as detached
// OpenMP tasks (DetachedTask.h) whose body submits the work with a
// completion notification (NotifiedTransfer.h, BatchDone.h); the engine
// thread that completes it stores the result and fulfills the task. No
// thread waits for a transfer.
//
// The calls duplicate the program's descriptors, as the async calls do at
// submission: the task transfers from the file a descriptor named at the
// call, whatever the program does with the number before the task starts.
// The task submits the transfer with the duplicate, which the plugin
// duplicates in turn, and closes it; the messages a failure prints name the
// program's numbers again.
#include "BatchDone.h"
#include "CapturedFd.h"
#include "DetachedTask.h"
#include "Diagnostics.h"
#include "Library.h"
#include "NotifiedTransfer.h"
#include "ompx_io_depend.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>


using namespace ompxio;

namespace {

/// The program's descriptors by their duplicates' numbers.
using FdNamesTy = std::map<int, int>;

/// \p Message, which names descriptors as "fd N" or "descriptor N", with
/// the numbers of the duplicates in \p Names replaced by the program's.
std::string nameProgramFds(const std::string &Message, const FdNamesTy &Names) {
  static const char *const Words[] = {"fd ", "descriptor "};
  std::string Out;
  size_t I = 0;
  while (I < Message.size()) {
    size_t NumBegin = I;
    for (const char *Word : Words)
      if (Message.compare(I, std::strlen(Word), Word) == 0 &&
          (I == 0 || !std::isalnum(static_cast<unsigned char>(Message[I - 1]))))
        NumBegin = I + std::strlen(Word);
    size_t NumEnd = NumBegin;
    while (NumEnd < Message.size() &&
           std::isdigit(static_cast<unsigned char>(Message[NumEnd])))
      ++NumEnd;
    if (NumBegin == I || NumEnd == NumBegin) {
      Out += Message[I++];
      continue;
    }
    auto It =
        Names.find(int(std::strtol(Message.c_str() + NumBegin, nullptr, 10)));
    Out.append(Message, I, NumBegin - I);
    if (It != Names.end())
      Out += std::to_string(It->second);
    else
      Out.append(Message, NumBegin, NumEnd - NumBegin);
    I = NumEnd;
  }
  return Out;
}

/// Print \p Message, a failure no one else will see, on stderr.
void printUnseen(const std::string &Message, const FdNamesTy &Names) {
  std::fprintf(stderr, "%s: %s\n", linePrefix().c_str(),
               nameProgramFds(Message, Names).c_str());
}

/// Where a depend call's task puts its outcome, and its task's event.
class DependResultTy final : public TransferWaiterTy {
public:
  DependResultTy(ssize_t *Result, int *Errno, FdNamesTy Names,
                 CapturedFdTy File, TaskEventTy Done)
      : Result(Result), Errno(Errno), Names(std::move(Names)),
        File(std::move(File)), Done(std::move(Done)) {}

  void transferDone(TransferOutcomeTy Outcome) override {
    if (Result)
      *Result = Outcome.Result;
    if (Errno)
      *Errno = Outcome.Errno;
    // With nowhere to put the errno, the failure would go unseen.
    else if (Outcome.Result < 0)
      printUnseen(Outcome.Message, Names);
    // Last: the program may read the results once the task completed.
    Done.fulfill();
  }

private:
  ssize_t *Result;
  int *Errno;
  FdNamesTy Names;
  /// The duplicate the transfer reads or writes: kept until it is done,
  /// since a transfer waiting for a request starts only later.
  CapturedFdTy File;
  TaskEventTy Done;
};

/// A transfer as a detached task's operation.
class DependTransferTy final : public DetachedOperationTy {
public:
  DependTransferTy(const TransferArgsTy &Args, int ProgramFd, CapturedFdTy File,
                   ssize_t *Result, int *Errno)
      : Args(Args), ProgramFd(ProgramFd), File(std::move(File)), Result(Result),
        Errno(Errno) {
    this->Args.Fd = this->File.get();
  }

  void start(TaskEventTy Done) override {
    FdNamesTy Names{{File.get(), ProgramFd}};
    submitNotified(Args, std::make_unique<DependResultTy>(
                             Result, Errno, std::move(Names), std::move(File),
                             std::move(Done)));
  }

private:
  TransferArgsTy Args; ///< With the duplicate's descriptor.
  int ProgramFd;
  CapturedFdTy File;
  ssize_t *Result;
  int *Errno;
};

/// A batch task's operations: the program's array, and the copy submitted
/// with the duplicates made at the call.
struct CapturedBatchTy {
  ompx_io_op_t *ProgramOps = nullptr;
  /// The operations whose descriptor was captured, with the duplicate's;
  /// Ops[J] is ProgramOps[Index[J]]. Their results are written here.
  std::vector<ompx_io_op_t> Ops;
  std::vector<size_t> Index;
  /// The operations whose descriptor could not be captured, and why
  /// (errno).
  std::vector<std::pair<size_t, int>> Refused;
  std::vector<CapturedFdTy> Files;
  FdNamesTy Names;

  /// Copy the results into the program's array: those of Ops, or, with
  /// \p BatchErrno, -1 and that errno for each; the refused operations'.
  /// The number of refused operations.
  size_t deliver(int BatchErrno) const {
    for (size_t J = 0; J < Ops.size(); ++J) {
      ompx_io_op_t &Out = ProgramOps[Index[J]];
      Out.result = BatchErrno ? -1 : Ops[J].result;
      Out.error = BatchErrno ? BatchErrno : Ops[J].error;
    }
    for (const auto &[I, Errno] : Refused) {
      ProgramOps[I].result = -1;
      ProgramOps[I].error = Errno;
    }
    return Refused.size();
  }
};

/// Capture the descriptors of the \p Count operations of \p Ops: one
/// duplicate per descriptor.
std::unique_ptr<CapturedBatchTy> captureBatch(ompx_io_op_t *Ops, size_t Count) {
  auto B = std::make_unique<CapturedBatchTy>();
  B->ProgramOps = Ops;
  std::map<int, int> DupOf; // program's fd: duplicate, or -errno
  for (size_t I = 0; I < Count; ++I) {
    auto It = DupOf.find(Ops[I].fd);
    if (It == DupOf.end()) {
      CapturedFdTy File;
      std::string Why;
      int Errno = captureFd(librarySys(), Ops[I].fd, File, Why);
      It = DupOf.emplace(Ops[I].fd, Errno ? -Errno : File.get()).first;
      if (!Errno) {
        B->Names.emplace(File.get(), Ops[I].fd);
        B->Files.push_back(std::move(File));
      }
    }
    if (It->second < 0) {
      B->Refused.emplace_back(I, -It->second);
      continue;
    }
    B->Ops.push_back(Ops[I]);
    B->Ops.back().fd = It->second;
    B->Index.push_back(I);
  }
  return B;
}

/// A batch's completion: the task's event and where its results go.
class BatchDoneTy {
public:
  BatchDoneTy(ompx_io_batch_t Batch, std::unique_ptr<CapturedBatchTy> Ops,
              ssize_t *Failed, TaskEventTy Done)
      : Batch(Batch), Ops(std::move(Ops)), Failed(Failed),
        Done(std::move(Done)) {}

  /// The batch's notification: collect it (every operation is done, so the
  /// wait does not wait), store the results and the count, complete the
  /// task.
  static void run(void *Self) {
    std::unique_ptr<BatchDoneTy> This(static_cast<BatchDoneTy *>(Self));
    ssize_t N;
    {
      // This thread is a plugin's engine thread, or the program's thread
      // that runs the task: its errno and last error belong to no batch.
      ErrorDiversionTy Diverted;
      N = ompx_io_batch_wait(This->Batch);
    }
    size_t Refused = This->Ops->deliver(0);
    if (This->Failed)
      *This->Failed = N < 0 ? N : N + ssize_t(Refused);
    // Last: the program may read the results once the task completed.
    This->Done.fulfill();
  }

private:
  ompx_io_batch_t Batch;
  std::unique_ptr<CapturedBatchTy> Ops;
  ssize_t *Failed;
  TaskEventTy Done;
};

/// A batch as a detached task's operation.
class DependBatchTy final : public DetachedOperationTy {
public:
  DependBatchTy(std::unique_ptr<CapturedBatchTy> Ops, ssize_t *Failed)
      : Ops(std::move(Ops)), Failed(Failed) {}

  void start(TaskEventTy Done) override {
    ompx_io_batch_t Batch = nullptr;
    int Errno = 0;
    std::string Why;
    if (!Ops->Ops.empty()) {
      // The task runs on any thread of the program: it keeps its errno and
      // last error; the batch's outcome goes into the operations.
      ErrorDiversionTy Diverted;
      if (ompx_io_batch_submit(Ops->Ops.data(), Ops->Ops.size(), &Batch)) {
        Errno = errno;
        Why = Diverted.message();
      }
    }
    // The plugins hold duplicates of their own from the submission on.
    Ops->Files.clear();
    if (Errno) {
      // With nowhere to put the count, the refusal would go unseen.
      if (!Failed)
        printUnseen(Why, Ops->Names);
      Ops->deliver(Errno);
      if (Failed)
        *Failed = -1;
      Done.fulfill();
      return;
    }
    if (!Batch) {
      // Every descriptor was refused at the call.
      size_t Refused = Ops->deliver(0);
      if (Failed)
        *Failed = ssize_t(Refused);
      Done.fulfill();
      return;
    }
    auto *Pending =
        new BatchDoneTy(Batch, std::move(Ops), Failed, std::move(Done));
    // In flight since the submission above: the registration cannot fail.
    if (!notifyBatchDone(Batch, &BatchDoneTy::run, Pending))
      BatchDoneTy::run(Pending);
  }

private:
  std::unique_ptr<CapturedBatchTy> Ops;
  ssize_t *Failed;
};

/// Check the depend list of \p Call; 0, or -1 with errno.
int checkDependList(const char *Call, int DepobjCount,
                    omp_depend_t *DepobjList) {
  if (DepobjCount < 0)
    return fail(EINVAL, std::string(Call) + ": depobj_count " +
                            std::to_string(DepobjCount) + " is negative");
  if (DepobjCount > 0 && !DepobjList)
    return fail(EINVAL, std::string(Call) + ": depobj_list is NULL and "
                                            "depobj_count is " +
                            std::to_string(DepobjCount));
  return 0;
}

/// Create the task of \p Call that runs \p Op; 0, or -1 with errno.
int spawnDependTask(const char *Call, std::unique_ptr<DetachedOperationTy> Op,
                    int DepobjCount, omp_depend_t *DepobjList) {
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
  if (checkDependList(Call, DepobjCount, DepobjList))
    return -1;
  CapturedFdTy File;
  std::string Why;
  if (int Refused = captureFd(librarySys(), Fd, File, Why))
    return fail(Refused, std::string(Call) + ": " + Why);
  TransferArgsTy Args{Call, IsWrite, Fd, Buf, Count, Offset, Device};
  return spawnDependTask(Call,
                         std::make_unique<DependTransferTy>(
                             Args, Fd, std::move(File), Result, Errno),
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
  if (checkDependList(Call, DepobjCount, DepobjList))
    return -1;
  return spawnDependTask(
      Call, std::make_unique<DependBatchTy>(captureBatch(Ops, Count), Failed),
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

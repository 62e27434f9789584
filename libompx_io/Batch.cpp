// SPDX-License-Identifier: Apache-2.0
//
// ompx_io_batch_submit, _test and _wait. A batch is split by device: the
// initial device's operations run here, as host transfers, and every other
// device's share goes to its plugin as one request of that device
// (__tgt_rtl_ompx_io_batch_*). Shares are created on every device before
// any operation runs, so that a device with no request left refuses the
// whole batch with nothing started.
//
// Batch handles are numbers, never reused, looked up in a registry of the
// same kind as the requests' (HandleRegistry.h): a batch waited for twice,
// or never submitted, is refused with EINVAL; batches never waited for are
// finished at exit.
#include "BatchDone.h"
#include "BatchPlan.h"
#include "CallFailure.h"
#include "Diagnostics.h"
#include "HandleRegistry.h"
#include "Library.h"
#include "ompx_io.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>


using namespace ompxio;

namespace {

using offloadio::ExtensionNames;

/// One device's share: its operations, copied, with their indices in the
/// caller's array.
struct ShareTy {
  const PluginTy *Plugin = nullptr;
  int32_t Local = -1;
  int Device = -1;
  void *Inner = nullptr; ///< The plugin's share; null once released.
  std::vector<size_t> Indices;
  std::vector<ompx_io_op_t> Ops;
};

/// The outcome of an operation known at submission: refused, or run on the
/// initial device.
struct EarlyTy {
  size_t Index;
  ssize_t Result;
  int Errno;
  std::string Reason;
};

/// A batch in flight.
struct BatchTy {
  ompx_io_op_t *Ops = nullptr; ///< The caller's array.
  size_t Count = 0;
  std::vector<ShareTy> Shares;
  std::vector<EarlyTy> Early;
};

/// Wait for \p S and release it; the results go into S.Ops. On a failure of
/// the wait itself every operation of the share gets its errno, and its
/// message into \p Reasons (by operation of the share).
void finishShare(ShareTy &S, std::vector<std::string> *Reasons) {
  if (!S.Inner)
    return;
  const offloadio::ExtensionTableTy &Fns = S.Plugin->Fns;
  if (int32_t Errno = Fns.IOBatchWait(S.Inner, S.Ops.data(), S.Ops.size())) {
    char Text[512] = "";
    if (!S.Plugin->takeLastError(Text, sizeof(Text)))
      std::snprintf(Text, sizeof(Text), "%s", std::strerror(Errno));
    for (ompx_io_op_t &Op : S.Ops) {
      Op.result = -1;
      Op.error = Errno;
    }
    if (Reasons)
      Reasons->assign(S.Ops.size(), Text);
  } else if (Reasons) {
    Reasons->assign(S.Ops.size(), "");
    for (size_t J = 0; J < S.Ops.size(); ++J) {
      if (!S.Ops[J].error)
        continue;
      std::string &Reason = (*Reasons)[J];
      if (Fns.IOBatchMessage) {
        uint64_t Len = Fns.IOBatchMessage(S.Inner, J, nullptr, 0);
        Reason.resize(Len + 1);
        Fns.IOBatchMessage(S.Inner, J, Reason.data(), Reason.size());
        Reason.resize(Len);
      }
      if (Reason.empty())
        Reason = std::strerror(S.Ops[J].error);
    }
  }
  Fns.IOBatchRelease(S.Inner);
  S.Inner = nullptr;
}

/// Finish \p B, left at exit: its transfers complete, their results are
/// dropped.
void finishLeftBatch(std::unique_ptr<BatchTy> &B) {
  for (ShareTy &S : B->Shares)
    finishShare(S, nullptr);
}

/// The batches in flight, by handle.
using BatchRegistryTy =
    HandleRegistryTy<ompx_io_batch_t, std::unique_ptr<BatchTy>>;

BatchRegistryTy &batches() {
  // After the library's state (initialDeviceNumber), so destroyed before it.
  (void)initialDeviceNumber();
  static BatchRegistryTy Registry("batch(es)", finishLeftBatch);
  return Registry;
}

/// ompx_io_batch_test on \p Handle: 1 done, 0 pending, -1 not in flight.
/// Under the registry's lock, so that no wait releases the shares
/// meanwhile.
int testBatch(ompx_io_batch_t Handle) {
  int Done = 1;
  if (!batches().withTracked(Handle, [&](std::unique_ptr<BatchTy> &B) {
        for (const ShareTy &S : B->Shares)
          if (S.Inner && !S.Plugin->Fns.IOBatchTest(S.Inner)) {
            Done = 0;
            return;
          }
      }))
    return -1;
  return Done;
}

/// Counts the shares of a batch down to its notification. Starts at one,
/// the registration's, so that no share that completes while the others
/// register runs it early.
class BatchCountdownTy {
public:
  BatchCountdownTy(void (*Fn)(void *), void *Arg) : Fn(Fn), Arg(Arg) {}
  void add() { Left.fetch_add(1, std::memory_order_relaxed); }
  /// One share (or the registration) is done; the last runs Fn and frees
  /// this.
  void done() {
    if (Left.fetch_sub(1, std::memory_order_acq_rel) != 1)
      return;
    void (*Run)(void *) = Fn;
    void *RunArg = Arg;
    delete this;
    Run(RunArg);
  }
  static void shareDone(void *Self) {
    static_cast<BatchCountdownTy *>(Self)->done();
  }

private:
  void (*Fn)(void *);
  void *Arg;
  std::atomic<size_t> Left{1};
};

/// Run \p Fn(\p Arg) once every operation of \p Handle is done (see
/// notifyBatchDone); false when \p Handle is not in flight.
bool notifyBatch(ompx_io_batch_t Handle, void (*Fn)(void *), void *Arg) {
  auto *Countdown = new BatchCountdownTy(Fn, Arg);
  bool InFlight =
      batches().withTracked(Handle, [&](std::unique_ptr<BatchTy> &B) {
        for (ShareTy &S : B->Shares) {
          if (!S.Inner)
            continue;
          Countdown->add();
          // A share that cannot notify (a forked child's, or one of a
          // plugin whose table lacks the call) is counted done: its wait
          // reports why, or waits.
          const offloadio::ExtensionTableTy &Fns = S.Plugin->Fns;
          if (!Fns.IOBatchNotify ||
              Fns.IOBatchNotify(S.Inner, &BatchCountdownTy::shareDone,
                                Countdown))
            Countdown->done();
        }
      });
  if (!InFlight) {
    delete Countdown;
    return false;
  }
  // The registration's own count, outside the lock: the notification may
  // wait for the batch, which takes it.
  Countdown->done();
  return true;
}

/// Report a handle that names no batch in flight, and fail with EINVAL.
int batchNotInFlight(const char *Call, ompx_io_batch_t Batch) {
  char Message[160];
  std::snprintf(Message, sizeof(Message),
                "%s: batch %p is not in flight (already waited for, or not "
                "returned by ompx_io_batch_submit)",
                Call, static_cast<void *>(Batch));
  if (infoEnabled())
    std::fprintf(stderr, "%s: %s\n", linePrefix().c_str(), Message);
  return fail(EINVAL, Message);
}

/// "read, fd 3, 4096 bytes at offset 0, device 1" for operation \p Op.
std::string describe(const ompx_io_op_t &Op) {
  const char *Name = Op.opcode == OMPX_IO_OP_READ    ? "read"
                     : Op.opcode == OMPX_IO_OP_WRITE ? "write"
                                                     : "opcode ?";
  char Text[160];
  std::snprintf(Text, sizeof(Text), "%s, fd %d, %zu bytes at offset %lld, "
                "device %d", Name, Op.fd, Op.count, (long long)Op.offset,
                Op.device_num);
  return Text;
}

/// The first of the extensions a share needs that the table of \p Plugin
/// lacks, or null: a share is created, started, tested, waited for and
/// released through one plugin. Its messages and notification are used
/// where the table has them.
const char *lackingShareCall(const PluginTy &Plugin) {
  const offloadio::ExtensionTableTy &F = Plugin.Fns;
  if (!F.IOBatchCreate)
    return ExtensionNames::IOBatchCreate;
  if (!F.IOBatchStart)
    return ExtensionNames::IOBatchStart;
  if (!F.IOBatchTest)
    return ExtensionNames::IOBatchTest;
  if (!F.IOBatchWait)
    return ExtensionNames::IOBatchWait;
  if (!F.IOBatchRelease)
    return ExtensionNames::IOBatchRelease;
  return nullptr;
}

/// Most failed operations ompx_io_last_error names one by one.
constexpr size_t MaxNamedFailures = 8;

} // namespace

OMPX_API int ompx_io_batch_submit(ompx_io_op_t *Ops, size_t Count,
                                  ompx_io_batch_t *Batch) {
  const char *Call = "ompx_io_batch_submit";
  if (!Batch)
    return invalidArgument(Call, "batch is NULL");
  *Batch = nullptr;
  if (!Ops)
    return invalidArgument(Call, "ops is NULL");
  if (!Count)
    return invalidArgument(Call, "nops is 0");

  auto B = std::make_unique<BatchTy>();
  B->Ops = Ops;
  B->Count = Count;
  // Every descriptor the batch names is looked at before anything runs,
  // once: the checks across operations compare the files they name, and
  // the plugins duplicate descriptors, where a duplicate takes the lowest
  // free number, which may be one that the program closed and a later
  // operation still names.
  BatchDescriptorsTy Fds;
  for (size_t I = 0; I < Count; ++I) {
    if (I && Ops[I].fd == Ops[I - 1].fd)
      continue; // A run of one descriptor is looked up once.
    auto [It, New] = Fds.try_emplace(Ops[I].fd);
    if (New)
      It->second = offloadio::inspectDescriptor(librarySys(), Ops[I].fd);
  }
  auto FactsOf = [&](int Fd) -> const offloadio::DescriptorFactsTy & {
    return Fds.find(Fd)->second;
  };
  std::vector<BatchRefusalTy> Refusals = planBatch(Ops, Count, Fds);
  int Initial = initialDeviceNumber();
  std::vector<size_t> HostOps;
  std::map<int, size_t> ShareOf; // device: index in B->Shares
  for (size_t I = 0; I < Count; ++I) {
    const ompx_io_op_t &Op = Ops[I];
    if (Refusals[I].Errno) {
      B->Early.push_back(
          {I, -1, Refusals[I].Errno, std::move(Refusals[I].Reason)});
      continue;
    }
    const offloadio::DescriptorFactsTy &Facts = FactsOf(Op.fd);
    if (Op.device_num == Initial) {
      HostOps.push_back(I);
      continue;
    }
    // The checks of the descriptor come before the device's, as on every
    // device (TransferCheck.h); the plugin makes the rest.
    if (offloadio::TransferVerdictTy V = offloadio::checkDescriptorUse(
            Facts, Op.opcode == OMPX_IO_OP_WRITE, Op.offset, Op.device_num)) {
      B->Early.push_back({I, -1, V.Errno, std::move(V.Why)});
      continue;
    }
    auto It = ShareOf.find(Op.device_num);
    if (It == ShareOf.end()) {
      ShareTy S;
      S.Device = Op.device_num;
      DeviceRefTy Ref;
      if (!resolveDevice(Op.device_num, Ref)) {
        B->Early.push_back(
            {I, -1, ENODEV, notServedMessage(Call, Op.device_num)});
        continue;
      }
      // A plugin too old for batches fails its own operations, as a device
      // that cannot serve; the others run.
      if (const char *Lacking = lackingShareCall(*Ref.Plugin)) {
        B->Early.push_back({I, -1, ENOSYS, Ref.Plugin->lacking(Lacking)});
        continue;
      }
      S.Plugin = Ref.Plugin;
      S.Local = Ref.Local;
      It = ShareOf.emplace(Op.device_num, B->Shares.size()).first;
      B->Shares.push_back(std::move(S));
    }
    ShareTy &S = B->Shares[It->second];
    S.Indices.push_back(I);
    S.Ops.push_back(Op);
  }

  // Every device's request first: nothing runs unless all have one. A
  // device that cannot serve at all (a forked child's) fails its own
  // operations; the others, the initial device's included, still run.
  for (ShareTy &S : B->Shares) {
    int32_t Errno = S.Plugin->Fns.IOBatchCreate(S.Local, &S.Inner);
    if (!Errno)
      continue;
    char Text[512] = "";
    if (!S.Plugin->takeLastError(Text, sizeof(Text)))
      std::snprintf(Text, sizeof(Text), "%s", std::strerror(Errno));
    S.Inner = nullptr;
    if (Errno != EAGAIN) {
      for (size_t I : S.Indices)
        B->Early.push_back({I, -1, int(Errno), Text});
      continue;
    }
    for (ShareTy &Other : B->Shares)
      if (Other.Inner)
        Other.Plugin->Fns.IOBatchRelease(Other.Inner);
    return fail(Errno, std::string(Call) + " on device " +
                           std::to_string(S.Device) + ": " + Text +
                           "; nothing was submitted");
  }
  // Host memory: done now, as ompx_target_pread_async does it.
  for (size_t I : HostOps) {
    const ompx_io_op_t &Op = Ops[I];
    HostOutcomeTy Host = countedHostTransfer(
        FactsOf(Op.fd), Op.opcode == OMPX_IO_OP_WRITE, Op.device_buf,
        Op.count, Op.offset, Op.device_num);
    B->Early.push_back({I, Host.Result, Host.Errno, std::move(Host.Why)});
  }
  for (ShareTy &S : B->Shares) {
    if (!S.Inner)
      continue;
    const offloadio::ExtensionTableTy &Fns = S.Plugin->Fns;
    if (int32_t Errno =
            Fns.IOBatchStart(S.Local, S.Inner, S.Ops.data(), S.Ops.size())) {
      char Text[512] = "";
      if (!S.Plugin->takeLastError(Text, sizeof(Text)))
        std::snprintf(Text, sizeof(Text), "%s", std::strerror(Errno));
      for (size_t I : S.Indices)
        B->Early.push_back({I, -1, int(Errno), Text});
      Fns.IOBatchRelease(S.Inner);
      S.Inner = nullptr;
    }
  }
  *Batch = batches().track(std::move(B));
  return 0;
}

void ompxio::createBatchRegistry() { (void)batches(); }

bool ompxio::notifyBatchDone(ompx_io_batch_t Batch, void (*Fn)(void *),
                             void *Arg) {
  return Batch && notifyBatch(Batch, Fn, Arg);
}

OMPX_API int ompx_io_batch_test(ompx_io_batch_t Batch) {
  if (!Batch)
    return invalidArgument("ompx_io_batch_test", "batch is NULL");
  int Done = testBatch(Batch);
  if (Done < 0)
    return batchNotInFlight("ompx_io_batch_test", Batch);
  return Done;
}

OMPX_API ssize_t ompx_io_batch_wait(ompx_io_batch_t Batch) {
  const char *Call = "ompx_io_batch_wait";
  if (!Batch)
    return invalidArgument(Call, "batch is NULL");
  // Claimed before waiting: a second wait finds nothing (as ompx_io_wait).
  std::unique_ptr<BatchTy> B;
  if (!batches().claim(Batch, B))
    return batchNotInFlight(Call, Batch);
  std::map<size_t, std::string> Failed; // index: reason
  for (const EarlyTy &E : B->Early) {
    B->Ops[E.Index].result = E.Result;
    B->Ops[E.Index].error = E.Errno;
    if (E.Errno)
      Failed.emplace(E.Index, E.Reason);
  }
  for (ShareTy &S : B->Shares) {
    if (!S.Inner)
      continue;
    std::vector<std::string> Reasons;
    finishShare(S, &Reasons);
    for (size_t J = 0; J < S.Ops.size(); ++J) {
      ompx_io_op_t &Out = B->Ops[S.Indices[J]];
      Out.result = S.Ops[J].result;
      Out.error = S.Ops[J].error;
      if (Out.error)
        Failed.emplace(S.Indices[J], Reasons[J]);
    }
  }
  if (Failed.empty())
    return 0;
  std::string Message = std::string(Call) + ": " +
                        std::to_string(Failed.size()) + " of " +
                        std::to_string(B->Count) + " operations failed: ";
  size_t Named = 0;
  for (const auto &[Index, Reason] : Failed) {
    if (Named == MaxNamedFailures)
      break;
    Message += (Named++ ? "; " : "") + std::string("operation ") +
               std::to_string(Index) + " (" + describe(B->Ops[Index]) +
               "): " + std::strerror(B->Ops[Index].error) + ": " + Reason;
  }
  if (Failed.size() > Named)
    Message += "; and " + std::to_string(Failed.size() - Named) + " more";
  LibraryErrorsTy::record(std::move(Message));
  return ssize_t(Failed.size());
}

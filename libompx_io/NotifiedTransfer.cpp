// SPDX-License-Identifier: Apache-2.0
//
// Transfers whose outcome goes to a waiter when they complete
// (NotifiedTransfer.h), started as the single-transfer calls start theirs
// (Requests.h), and those kept for later while their device's requests are
// all taken.
#include "NotifiedTransfer.h"
#include "CallFailure.h"
#include "Diagnostics.h"
#include "Requests.h"
#include "offloadio/ExtensionABI.h"
#include "offloadio/StaticTLS.h"

#include <cerrno>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

using namespace ompxio;
using offloadio::ExtensionNames;

namespace {
/// A plugin's request whose completion notification reports to a waiter.
struct NotifiedRequestTy {
  RequestTy Request;
  TransferArgsTy Args;
  std::unique_ptr<TransferWaiterTy> Waiter;
};

/// Notified transfers that found their device's requests all taken
/// (EAGAIN, OMPX_IO_MAX_REQUESTS) while other notified transfers were in
/// flight: each completion starts the oldest of them, so that many depend
/// tasks whose dependences are met at once all run, instead of failing
/// with EAGAIN. Where none is in flight, nothing would start them: the
/// refusal stands. Batches hold requests too but are not counted: a
/// transfer refused while only batches hold the device's requests fails.
///
/// Outcomes are handed to their waiters only after the bookkeeping: a
/// waiter completes an OpenMP task, which may run the program's dependent
/// tasks on this very thread, and those may wait for a kept transfer.
class WaitingTransfersTy {
public:
  /// An outcome to hand to its waiter once the bookkeeping is done.
  struct DeliveryTy {
    std::unique_ptr<TransferWaiterTy> Waiter;
    TransferOutcomeTy Outcome;
  };
  using DeliveriesTy = std::vector<DeliveryTy>;

  /// Start \p Args for \p Waiter: now, or once a transfer in flight
  /// completes. Never waits.
  void submit(const TransferArgsTy &Args,
              std::unique_ptr<TransferWaiterTy> Waiter) {
    DeliveriesTy Out;
    startOne(Args, Waiter, /*Kept=*/false, Out);
    startKept(Out);
    deliver(Out);
  }

  /// A notified transfer in flight completed with \p Outcome for
  /// \p Waiter: no longer counted, the kept ones started, then the outcome
  /// delivered (by the loop of startKept when this thread runs one).
  void completed(std::unique_ptr<TransferWaiterTy> Waiter,
                 TransferOutcomeTy Outcome) {
    retire();
    if (DeliveriesTy *Pending = pendingHere()) {
      Pending->push_back({std::move(Waiter), std::move(Outcome)});
      return;
    }
    DeliveriesTy Out;
    Out.push_back({std::move(Waiter), std::move(Outcome)});
    startKept(Out);
    deliver(Out);
  }

private:
  /// The deliveries of the startKept loop running on this thread, if any.
  static DeliveriesTy *&pendingHere() {
    OFFLOADIO_STATIC_TLS thread_local DeliveriesTy *Pending = nullptr;
    return Pending;
  }

  /// One more transfer in flight; the completions so far.
  uint64_t started() {
    std::lock_guard<std::mutex> Guard(Lock);
    ++InFlight;
    return Completions;
  }
  /// A transfer in flight is no longer.
  void retire() {
    std::lock_guard<std::mutex> Guard(Lock);
    --InFlight;
    ++Completions;
  }

  /// Start the kept transfers while their devices take them; outcomes go
  /// into \p Out. One loop per thread: a completion that runs inline here
  /// leaves its delivery to it.
  void startKept(DeliveriesTy &Out) {
    if (pendingHere())
      return;
    pendingHere() = &Out;
    for (;;) {
      std::pair<TransferArgsTy, std::unique_ptr<TransferWaiterTy>> Next;
      {
        std::lock_guard<std::mutex> Guard(Lock);
        if (Waiting.empty())
          break;
        Next = std::move(Waiting.front());
        Waiting.pop_front();
      }
      if (!startOne(Next.first, Next.second, /*Kept=*/true, Out))
        break;
    }
    pendingHere() = nullptr;
  }

  /// Hand every outcome of \p Out to its waiter.
  static void deliver(DeliveriesTy &Out) {
    for (DeliveryTy &D : Out) {
      D.Waiter->transferDone(std::move(D.Outcome));
      D.Waiter.reset();
    }
    Out.clear();
  }

  /// Start \p Args, kept or new, for \p Waiter; false when it was kept
  /// (again) for later. An outcome known now goes into \p Out.
  bool startOne(const TransferArgsTy &Args,
                std::unique_ptr<TransferWaiterTy> &Waiter, bool Kept,
                DeliveriesTy &Out);

  std::mutex Lock;
  size_t InFlight = 0;
  uint64_t Completions = 0; ///< Transfers retired so far.
  std::deque<std::pair<TransferArgsTy, std::unique_ptr<TransferWaiterTy>>>
      Waiting;
};

WaitingTransfersTy &waitingTransfers() {
  static WaitingTransfersTy Waiting;
  return Waiting;
}

/// The completion notification of a NotifiedRequestTy, run by the plugin
/// once its request is done: take the result (releasing the request), then
/// hand it to the waiter.
void reportNotified(void *Arg) {
  std::unique_ptr<NotifiedRequestTy> N(static_cast<NotifiedRequestTy *>(Arg));
  const PluginTy &Plugin = *N->Request.Plugin;
  TransferOutcomeTy Outcome;
  int64_t Bytes = 0;
  if (int32_t Errno = Plugin.Fns.IOWait(N->Request.Inner, &Bytes))
    Outcome = {-1, Errno,
               pluginMessage(Plugin, Errno, N->Args.Call, N->Args.Device)};
  else
    Outcome = {ssize_t(Bytes), 0, std::string()};
  std::unique_ptr<TransferWaiterTy> Waiter = std::move(N->Waiter);
  N.reset();
  waitingTransfers().completed(std::move(Waiter), std::move(Outcome));
}
} // namespace

void ompxio::submitNotified(const TransferArgsTy &Args,
                            std::unique_ptr<TransferWaiterTy> Waiter) {
  waitingTransfers().submit(Args, std::move(Waiter));
}

bool WaitingTransfersTy::startOne(const TransferArgsTy &Args,
                                  std::unique_ptr<TransferWaiterTy> &Waiter,
                                  bool Kept, DeliveriesTy &Out) {
  // In flight from before the request is taken: another transfer that
  // finds the requests all taken meanwhile must see that this one will
  // complete and start it.
  uint64_t Seen = started();
  // The outcome goes to the waiter; the calling thread (any OpenMP thread
  // running a task) keeps its errno and last error.
  std::optional<ErrorDiversionTy> Diverted(std::in_place);
  RequestTy R;
  TransferOutcomeTy Outcome;
  for (;;) {
    if (!startTransfer(Args.Call, Args.IsWrite, Args.Fd, Args.Buf, Args.Count,
                       Args.Offset, Args.Device, R))
      break;
    if (errno == EAGAIN) {
      std::lock_guard<std::mutex> Guard(Lock);
      // A transfer completed since this one was counted: its request may
      // be free now, and its completion found nothing kept to start.
      if (Completions != Seen) {
        Seen = Completions;
        continue;
      }
      // Others than this one are in flight: one of them starts it.
      if (InFlight > 1) {
        --InFlight;
        // Kept ones go back first, to start in the order they came.
        if (Kept)
          Waiting.push_front({Args, std::move(Waiter)});
        else
          Waiting.push_back({Args, std::move(Waiter)});
        return false;
      }
    }
    Outcome = {-1, errno, Diverted->message()};
    Diverted.reset();
    retire();
    Out.push_back({std::move(Waiter), std::move(Outcome)});
    return true;
  }
  if (!R.Plugin) {
    Outcome = {R.HostResult, R.HostErrno,
               R.HostResult < 0 ? std::string(Args.Call) + ": " + R.HostWhy
                                : std::string()};
  } else if (!R.Plugin->Fns.IONotify) {
    const PluginTy &Plugin = *R.Plugin;
    Outcome = {-1, ENOSYS,
               callHead(Args.Call, Args.Device) + ": " +
                   Plugin.lacking(ExtensionNames::IONotify)};
    // Still ours to release; its own result adds nothing to the failure.
    int64_t Bytes;
    (void)Plugin.Fns.IOWait(R.Inner, &Bytes);
  } else {
    const PluginTy &Plugin = *R.Plugin;
    void *Inner = R.Inner;
    // Owned by the notification once it is registered: it may run, and
    // release it, before IONotify returns.
    auto *N = new NotifiedRequestTy{R, Args, std::move(Waiter)};
    int32_t Errno = Plugin.Fns.IONotify(Inner, reportNotified, N);
    if (!Errno)
      return true;
    std::unique_ptr<NotifiedRequestTy> Unregistered(N);
    Waiter = std::move(Unregistered->Waiter);
    Outcome = {-1, Errno,
               pluginMessage(Plugin, Errno, Args.Call, Args.Device)};
    // Still ours to release; its own result adds nothing to the failure.
    int64_t Bytes;
    (void)Plugin.Fns.IOWait(Inner, &Bytes);
  }
  Diverted.reset();
  retire();
  Out.push_back({std::move(Waiter), std::move(Outcome)});
  return true;
}

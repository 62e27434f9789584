// SPDX-License-Identifier: Apache-2.0
//
// libompx_io: resolve the OpenMP device number to the offload-io plugin that
// owns it, then call that plugin's extension entry points. Requests on the
// initial device (plain host memory) are served here with pread/pwrite.
//
// The handles given to the program are request numbers, never reused, looked
// up in a registry of the requests in flight: a handle waited for twice, or
// never returned by a submission, is refused with EINVAL instead of touching
// freed memory; requests never waited for are finished and released when the
// library's state is destroyed at exit.
#include "Diagnostics.h"
#include "HostTransfer.h"
#include "Library.h"
#include "NotifiedTransfer.h"
#include "PluginDirectory.h"
#include "ompx_io.h"
#include "ompx_version.h"
#include "offloadio/ExtensionABI.h"
#include "offloadio/StaticTLS.h"

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <mutex>
#include <string>
#include <unistd.h>
#include <unordered_map>
#include <vector>

#define OMPX_API extern "C" __attribute__((visibility("default")))

using namespace ompxio;
using offloadio::inspectDescriptor;

namespace {

using offloadio::ExtensionNames;

/// A request in flight, as the registry keeps it.
struct RequestTy {
  const PluginTy *Plugin = nullptr; ///< Null for host requests, done already.
  void *Inner = nullptr;            ///< The plugin's request.
  ssize_t HostResult = 0;           ///< Host requests: the result ...
  int HostErrno = 0;                ///< ... its errno ...
  std::string HostWhy;              ///< ... and why it failed.
};

/// The library's state: the plugins found, the devices resolved and the
/// requests in flight.
class IOLibTy {
public:
  /// Requests the program never waited for are finished and released here,
  /// at exit: their transfers run to completion (no data is left half
  /// written behind the program's back) and nothing stays allocated. This
  /// object is constructed on first use, after the program registered its
  /// offload images, so it is destroyed before libomptarget's exit handler
  /// unregisters them and while the plugins still serve requests.
  ~IOLibTy() {
    // A child forked from the program inherits the registry, but the
    // transfers are the parent's, and a parent thread may have held the
    // registry's lock at the fork: the child leaves it alone.
    if (::getpid() != CreatorPid)
      return;
    // Order every device lookup made so far before the lookup table is
    // destroyed: the threads that made them may be synchronised with this
    // one only through libomp, which ThreadSanitizer cannot see.
    Directory.fence();
    std::unordered_map<uintptr_t, RequestTy> Left;
    {
      std::lock_guard<std::mutex> Guard(RequestsLock);
      Left.swap(Requests);
    }
    if (!Left.empty() && infoEnabled())
      std::fprintf(stderr,
                   "%s: %zu request(s) never waited for: finishing and "
                   "releasing them at exit\n",
                   linePrefix().c_str(), Left.size());
    for (auto &[Id, R] : Left) {
      int64_t Bytes;
      // Their results, errors included, have no one left to read them.
      if (R.Plugin)
        (void)R.Plugin->Fns.IOWait(R.Inner, &Bytes);
    }
  }

  /// Register request \p R; its handle.
  ompx_io_request_t track(const RequestTy &R) {
    std::lock_guard<std::mutex> Guard(RequestsLock);
    uintptr_t Id = ++LastRequestId;
    Requests.emplace(Id, R);
    return reinterpret_cast<ompx_io_request_t>(Id);
  }

  /// Take the request of \p Handle out of the registry into \p R; false
  /// when \p Handle is not a request in flight.
  bool claim(ompx_io_request_t Handle, RequestTy &R) {
    std::lock_guard<std::mutex> Guard(RequestsLock);
    auto It = Requests.find(reinterpret_cast<uintptr_t>(Handle));
    if (It == Requests.end())
      return false;
    R = It->second;
    Requests.erase(It);
    return true;
  }

  /// ompx_io_test on \p Handle: 1 done, 0 pending, -1 if not in flight.
  /// Under the registry's lock, so that no concurrent wait releases the
  /// plugin's request meanwhile.
  int test(ompx_io_request_t Handle) {
    std::lock_guard<std::mutex> Guard(RequestsLock);
    auto It = Requests.find(reinterpret_cast<uintptr_t>(Handle));
    if (It == Requests.end())
      return -1;
    const RequestTy &R = It->second;
    // Submitted only through a table with IOTest (startTransfer).
    return R.Plugin ? R.Plugin->Fns.IOTest(R.Inner) : 1;
  }

  /// The plugin that serves OpenMP device \p Device; false when none.
  bool resolve(int Device, DeviceRefTy &Ref) {
    return Directory.resolve(Device, Ref);
  }

  /// The first offload-io plugin libomptarget loaded, or null: for the
  /// calls that concern the process rather than a device.
  const PluginTy *anyPlugin() { return Directory.anyPlugin(); }

  /// Count a transfer of the initial device that was not refused at
  /// submission: \p Result is its byte count, or -1.
  void countHost(bool IsWrite, ssize_t Result) {
    HostRequests[IsWrite].fetch_add(1, std::memory_order_relaxed);
    if (Result > 0)
      HostBytes[IsWrite].fetch_add(uint64_t(Result), std::memory_order_relaxed);
  }

  /// The counters of the initial device: its transfers, all on the host
  /// path; never a fallback.
  void hostStats(ompx_io_stats_t &Out) const {
    Out = ompx_io_stats_t();
    Out.bytes_read[OMPX_IO_PATH_HOST] = HostBytes[0].load();
    Out.bytes_written[OMPX_IO_PATH_HOST] = HostBytes[1].load();
    Out.reads[OMPX_IO_PATH_HOST] = HostRequests[0].load();
    Out.writes[OMPX_IO_PATH_HOST] = HostRequests[1].load();
  }

  /// Whether the device-not-served warning was printed (explainNotServed).
  std::atomic<bool> &notServedWarned() { return NotServedWarned; }

  /// The system calls of the initial device's transfers.
  offloadio::SysTy &sys() { return Sys; }

  /// The initial device number of the running OpenMP program.
  int initialDevice() {
    using FnTy = int (*)();
    auto *Fn = reinterpret_cast<FnTy>(processSymbol("omp_get_initial_device"));
    return Fn ? Fn() : -1;
  }

private:
  offloadio::SysTy Sys;
  PluginDirectoryTy Directory;

  /// The process that created this state (see ~IOLibTy).
  pid_t CreatorPid = ::getpid();
  /// Guards Requests and LastRequestId; never held while waiting.
  std::mutex RequestsLock;
  /// Handle numbers are never reused: a stale handle cannot name a newer
  /// request.
  uintptr_t LastRequestId = 0;
  std::unordered_map<uintptr_t, RequestTy> Requests;

  /// Set once the process was told that offload-io serves a device not.
  std::atomic<bool> NotServedWarned{false};

  /// Bytes and requests of the initial device, reads [0] and writes [1].
  std::atomic<uint64_t> HostBytes[2] = {};
  std::atomic<uint64_t> HostRequests[2] = {};
};

/// The library's one instance.
IOLibTy &lib() {
  static IOLibTy Lib;
  return Lib;
}

} // namespace

/// Report a handle that names no request in flight, and fail with EINVAL.
static int notInFlight(const char *Call, ompx_io_request_t Request) {
  char Message[160];
  std::snprintf(Message, sizeof(Message),
                "%s: request %p is not in flight (already waited for, or not "
                "returned by a submission)",
                Call, static_cast<void *>(Request));
  if (infoEnabled())
    std::fprintf(stderr, "%s: %s\n", linePrefix().c_str(), Message);
  return fail(EINVAL, Message);
}

/// Fail \p Call with EINVAL: \p What is wrong with its arguments.
static int invalidArgument(const char *Call, const char *What) {
  return fail(EINVAL, std::string(Call) + ": " + What);
}

/// Fail \p Call with ENODEV: no offload-io plugin serves \p Device (none:
/// no offload-io plugin is loaded at all).
static int notServed(const char *Call, std::optional<int> Device) {
  return fail(ENODEV,
              explainNotServed(Call, Device, lib().notServedWarned()));
}

/// "<Call>" or "<Call> on device <Device>": the head of a failure message.
static std::string callHead(const char *Call, std::optional<int> Device) {
  std::string Head = Call;
  if (Device)
    Head += " on device " + std::to_string(*Device);
  return Head;
}

/// The message of \p Call on \p Device failing with \p Errno, which
/// \p Plugin returned: the plugin's, or errno's text without one.
static std::string pluginMessage(const PluginTy &Plugin, int Errno,
                                 const char *Call, std::optional<int> Device) {
  std::string Message = callHead(Call, Device);
  char Text[512];
  if (Plugin.takeLastError(Text, sizeof(Text)))
    Message += std::string(": ") + Text;
  else
    Message += std::string(": ") + std::strerror(Errno);
  return Message;
}

/// Fail \p Call on \p Device with \p Errno, which \p Plugin returned; the
/// message is pluginMessage's.
static int pluginFailure(const PluginTy &Plugin, int Errno, const char *Call,
                         std::optional<int> Device) {
  return fail(Errno, pluginMessage(Plugin, Errno, Call, Device));
}

/// Fail \p Call on \p Device with ENOSYS: the table of \p Plugin lacks the
/// extension \p Name (an ExtensionNames entry), which the call needs.
static int lackingExtension(const PluginTy &Plugin, const char *Name,
                            const char *Call, std::optional<int> Device) {
  return fail(ENOSYS, callHead(Call, Device) + ": " + Plugin.lacking(Name));
}

/// The first of the extensions a request needs that the table of
/// \p Plugin lacks, or null: a request is submitted, tested and waited
/// for (which releases it) through one plugin.
static const char *lackingRequestCall(const PluginTy &Plugin) {
  const offloadio::ExtensionTableTy &F = Plugin.Fns;
  if (!F.IOSubmit)
    return ExtensionNames::IOSubmit;
  if (!F.IOTest)
    return ExtensionNames::IOTest;
  if (!F.IOWait)
    return ExtensionNames::IOWait;
  return nullptr;
}

/// Start a transfer for \p Call, the API function that messages name, into
/// \p R: done already on the initial device (R.Plugin null), in flight in a
/// plugin otherwise. 0, or -1 with errno and the last error set when it was
/// refused.
static int startTransfer(const char *Call, bool IsWrite, int Fd, void *Buf,
                         size_t Count, off_t Offset, int Device,
                         RequestTy &R) {
  R = RequestTy();
  if (Device == lib().initialDevice()) {
    // Host memory: done now; the request only carries the result.
    HostOutcomeTy Host = runHostTransfer(
        lib().sys(), inspectDescriptor(lib().sys(), Fd), IsWrite, Buf, Count,
        Offset, Device);
    if (Host.Refused)
      return fail(Host.Errno, std::string(Call) + ": " + Host.Why);
    lib().countHost(IsWrite, Host.Result);
    R.HostResult = Host.Result;
    R.HostErrno = Host.Errno;
    R.HostWhy = std::move(Host.Why);
    return 0;
  }
  DeviceRefTy Ref;
  if (Device < 0 || !lib().resolve(Device, Ref))
    return notServed(Call, Device);
  const PluginTy &Plugin = *Ref.Plugin;
  if (const char *Lacking = lackingRequestCall(Plugin))
    return lackingExtension(Plugin, Lacking, Call, Device);
  if (int32_t Err = Plugin.Fns.IOSubmit(Ref.Local, IsWrite, Fd, Buf, Count,
                                        int64_t(Offset), &R.Inner))
    return pluginFailure(Plugin, Err, Call, Device);
  R.Plugin = &Plugin;
  return 0;
}

/// Submit a transfer for \p Call, the API function that messages name.
static int submit(const char *Call, bool IsWrite, int Fd, void *Buf,
                  size_t Count, off_t Offset, int Device,
                  ompx_io_request_t *Request) {
  if (!Request)
    return invalidArgument(Call, "request is NULL");
  *Request = nullptr;
  RequestTy R;
  if (startTransfer(Call, IsWrite, Fd, Buf, Count, Offset, Device, R))
    return -1;
  *Request = lib().track(R);
  return 0;
}

namespace {
/// A plugin's request whose completion notification reports to a waiter.
struct NotifiedRequestTy {
  RequestTy Request;
  TransferArgsTy Args;
  std::unique_ptr<TransferWaiterTy> Waiter;
};

/// The completion notification of a NotifiedRequestTy, run by the plugin
/// once its request is done: take the result (releasing the request), then
/// hand it to the waiter.
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

OMPX_API int ompx_target_pread_async(int Fd, void *Buf, size_t Count,
                                     off_t Offset, int Device,
                                     ompx_io_request_t *Request) {
  return submit("ompx_target_pread_async", false, Fd, Buf, Count, Offset,
                Device, Request);
}

OMPX_API int ompx_target_pwrite_async(int Fd, const void *Buf, size_t Count,
                                      off_t Offset, int Device,
                                      ompx_io_request_t *Request) {
  return submit("ompx_target_pwrite_async", true, Fd, const_cast<void *>(Buf),
                Count, Offset, Device, Request);
}

OMPX_API int ompx_io_test(ompx_io_request_t Request) {
  if (!Request)
    return invalidArgument("ompx_io_test", "request is NULL");
  int Done = lib().test(Request);
  if (Done < 0)
    return notInFlight("ompx_io_test", Request);
  return Done;
}

/// Wait for \p R, taken out of the registry or never in it, and release
/// it; failures are \p Call's, on \p Device where the caller knows it.
static ssize_t finishRequest(const char *Call, RequestTy &R,
                             std::optional<int> Device) {
  if (!R.Plugin) {
    if (R.HostResult < 0)
      return fail(R.HostErrno, std::string(Call) + ": " + R.HostWhy);
    return R.HostResult;
  }
  int64_t Bytes = 0;
  if (int32_t Errno = R.Plugin->Fns.IOWait(R.Inner, &Bytes))
    return pluginFailure(*R.Plugin, Errno, Call, Device);
  return ssize_t(Bytes);
}

OMPX_API ssize_t ompx_io_wait(ompx_io_request_t Request) {
  if (!Request)
    return invalidArgument("ompx_io_wait", "request is NULL");
  // Claimed before waiting: a second wait, even a concurrent one, finds
  // nothing instead of the plugin's request that the first one frees.
  RequestTy R;
  if (!lib().claim(Request, R))
    return notInFlight("ompx_io_wait", Request);
  return finishRequest("ompx_io_wait", R, std::nullopt);
}

/// ompx_target_pread and ompx_target_pwrite: a request that no handle names,
/// waited for at once; failures name \p Call.
static ssize_t transferNow(const char *Call, bool IsWrite, int Fd, void *Buf,
                           size_t Count, off_t Offset, int Device) {
  RequestTy R;
  if (startTransfer(Call, IsWrite, Fd, Buf, Count, Offset, Device, R))
    return -1;
  return finishRequest(Call, R, Device);
}

OMPX_API ssize_t ompx_target_pread(int Fd, void *Buf, size_t Count,
                                   off_t Offset, int Device) {
  return transferNow("ompx_target_pread", false, Fd, Buf, Count, Offset,
                     Device);
}

OMPX_API ssize_t ompx_target_pwrite(int Fd, const void *Buf, size_t Count,
                                    off_t Offset, int Device) {
  return transferNow("ompx_target_pwrite", true, Fd, const_cast<void *>(Buf),
                     Count, Offset, Device);
}

OMPX_API const char *ompx_io_path_name(int Path) {
  static const char *const Names[] = {"direct", "fastpath", "staged", "host"};
  return Path >= 0 && Path < OMPX_IO_NUM_PATHS ? Names[Path] : "unknown";
}

OMPX_API int ompx_io_get_stats(int Device, ompx_io_stats_t *Stats) {
  const char *Call = "ompx_io_get_stats";
  DeviceRefTy Ref;
  if (!Stats)
    return invalidArgument(Call, "stats is NULL");
  if (Device == lib().initialDevice()) {
    lib().hostStats(*Stats);
    return 0;
  }
  if (!lib().resolve(Device, Ref))
    return notServed(Call, Device);
  const PluginTy &Plugin = *Ref.Plugin;
  if (!Plugin.Fns.IOStats)
    return lackingExtension(Plugin, ExtensionNames::IOStats, Call, Device);
  if (int32_t Err = Plugin.Fns.IOStats(Ref.Local, Stats))
    return pluginFailure(Plugin, Err, Call, Device);
  return 0;
}

OMPX_API int ompx_io_paths(int Device, unsigned *Mask, char *Why,
                           size_t WhyLen) {
  const char *Call = "ompx_io_paths";
  DeviceRefTy Ref;
  if (!Mask)
    return invalidArgument(Call, "mask is NULL");
  if (Device == lib().initialDevice()) {
    *Mask = 1u << OMPX_IO_PATH_HOST;
    if (Why && WhyLen)
      std::snprintf(Why, WhyLen, "initial device: plain pread/pwrite\n");
    return 0;
  }
  if (!lib().resolve(Device, Ref))
    return notServed(Call, Device);
  uint32_t M = 0;
  const PluginTy &Plugin = *Ref.Plugin;
  if (!Plugin.Fns.IOPaths)
    return lackingExtension(Plugin, ExtensionNames::IOPaths, Call, Device);
  if (int32_t Err = Plugin.Fns.IOPaths(Ref.Local, &M, Why, WhyLen))
    return pluginFailure(Plugin, Err, Call, Device);
  *Mask = M;
  return 0;
}

/// Call \p Fn, which returns 0 or an errno value, on any loaded plugin of
/// ours (for what is the same in all of them) for \p Call; 0, or -1 with
/// errno (ENODEV without such a plugin, ENOSYS when its table lacks
/// \p Entry, named \p Name).
template <typename EntryTy, typename FnTy>
static int onAnyPlugin(const char *Call, EntryTy offloadio::ExtensionTableTy::*Entry,
                       const char *Name, FnTy Fn) {
  const PluginTy *Plugin = lib().anyPlugin();
  if (!Plugin)
    return notServed(Call, std::nullopt);
  if (!(Plugin->Fns.*Entry))
    return lackingExtension(*Plugin, Name, Call, std::nullopt);
  if (int32_t Err = Fn(Plugin->Fns.*Entry))
    return pluginFailure(*Plugin, Err, Call, std::nullopt);
  return 0;
}

OMPX_API int ompx_io_get_settings(ompx_io_setting_t *Settings,
                                  size_t Capacity, size_t *Count) {
  const char *Call = "ompx_io_get_settings";
  if (!Count)
    return invalidArgument(Call, "count is NULL");
  if (!Settings && Capacity)
    return invalidArgument(Call, "settings is NULL and capacity is not 0");
  uint64_t Total = 0;
  if (onAnyPlugin(Call, &offloadio::ExtensionTableTy::IOSettings,
                  ExtensionNames::IOSettings, [&](auto IOSettings) {
                    return IOSettings(Settings, Capacity, &Total);
                  }))
    return -1;
  *Count = size_t(Total);
  return 0;
}

OMPX_API int ompx_io_get_pinned_budget(ompx_pinned_budget_t *Budget) {
  const char *Call = "ompx_io_get_pinned_budget";
  if (!Budget)
    return invalidArgument(Call, "budget is NULL");
  return onAnyPlugin(Call, &offloadio::ExtensionTableTy::PinnedBudget,
                     ExtensionNames::PinnedBudget,
                     [&](auto PinnedBudget) { return PinnedBudget(Budget); });
}

OMPX_API int ompx_io_get_process_budget(ompx_io_process_budget_t *Budget) {
  const char *Call = "ompx_io_get_process_budget";
  if (!Budget)
    return invalidArgument(Call, "budget is NULL");
  return onAnyPlugin(Call, &offloadio::ExtensionTableTy::ProcessBudget,
                     ExtensionNames::ProcessBudget,
                     [&](auto ProcessBudget) { return ProcessBudget(Budget); });
}

OMPX_API int ompx_target_lock_info(const void *Ptr, int Device,
                                   ompx_lock_region_t *Region) {
  const char *Call = "ompx_target_lock_info";
  DeviceRefTy Ref;
  if (!Region || !Ptr)
    return invalidArgument(Call, Ptr ? "region is NULL" : "ptr is NULL");
  if (!lib().resolve(Device, Ref))
    return notServed(Call, Device);
  if (!Ref.Plugin->Fns.LockInfo)
    return lackingExtension(*Ref.Plugin, ExtensionNames::LockInfo, Call,
                            Device);
  return Ref.Plugin->Fns.LockInfo(Ptr, Region);
}

OMPX_API int ompx_target_copy_counters(int Device,
                                       uint64_t Bytes[OMPX_COPY_NUM_PATHS],
                                       uint64_t Copies[OMPX_COPY_NUM_PATHS]) {
  const char *Call = "ompx_target_copy_counters";
  DeviceRefTy Ref;
  if (!Bytes || !Copies)
    return invalidArgument(Call, Bytes ? "copies is NULL" : "bytes is NULL");
  if (!lib().resolve(Device, Ref))
    return notServed(Call, Device);
  const PluginTy &Plugin = *Ref.Plugin;
  if (!Plugin.Fns.CopyCounters)
    return lackingExtension(Plugin, ExtensionNames::CopyCounters, Call, Device);
  if (int32_t Err = Plugin.Fns.CopyCounters(Ref.Local, Bytes, Copies))
    return pluginFailure(Plugin, Err, Call, Device);
  return 0;
}

OMPX_API const char *ompx_copy_path_name(int Path) {
  static const char *const Names[] = {
      "pinned-to-device", "pinned-from-device", "staged-to-device",
      "staged-from-device", "locked-to-device", "locked-from-device",
      "device-to-device"};
  return Path >= 0 && Path < OMPX_COPY_NUM_PATHS ? Names[Path] : "unknown";
}

OMPX_API const char *ompx_io_last_error(void) {
  return LibraryErrorsTy::text().c_str();
}

OMPX_API const char *ompx_io_version(int *Major, int *Minor, int *Patch) {
  if (Major)
    *Major = OFFLOADIO_VERSION_MAJOR;
  if (Minor)
    *Minor = OFFLOADIO_VERSION_MINOR;
  if (Patch)
    *Patch = OFFLOADIO_VERSION_PATCH;
  return OFFLOADIO_VERSION_STRING;
}

// What the batch calls (Batch.cpp) share with the calls above; declared in
// Library.h.

bool ompxio::resolveDevice(int Device, DeviceRefTy &Ref) {
  return Device >= 0 && lib().resolve(Device, Ref);
}

int ompxio::initialDeviceNumber() { return lib().initialDevice(); }

offloadio::SysTy &ompxio::librarySys() { return lib().sys(); }

HostOutcomeTy ompxio::countedHostTransfer(const offloadio::DescriptorFactsTy &Facts,
                                          bool IsWrite, void *Buf, size_t Count,
                                          off_t Offset, int Device) {
  HostOutcomeTy Out = runHostTransfer(lib().sys(), Facts, IsWrite, Buf, Count,
                                      Offset, Device);
  if (!Out.Refused)
    lib().countHost(IsWrite, Out.Result);
  return Out;
}

std::string ompxio::notServedMessage(const char *Call, int Device) {
  return explainNotServed(Call, Device, lib().notServedWarned());
}

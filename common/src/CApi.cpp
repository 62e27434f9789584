// SPDX-License-Identifier: Apache-2.0
//
// The LLVM 16 __tgt_rtl_* entry points: validate arguments, find the device,
// call the framework, and turn llvm::Error into OFFLOAD_SUCCESS/OFFLOAD_FAIL
// with one error line naming what failed. Also the offload-io extensions
// (__tgt_rtl_ompx_*), except the batch ones, which CApiBatch.cpp defines
// and which report through extensionErrno here.
#include "offloadio/ABI.h"
#include "offloadio/CApiSupport.h"
#include "offloadio/Envar.h"
#include "offloadio/ExtensionABI.h"
#include "offloadio/Plugin.h"
#include "offloadio/ProcessShare.h"
#include "offloadio/Settings.h"
#include "offloadio/io/IOEngine.h"

#include "ompx_io.h"

#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cstdio>
#include <string>

using namespace offloadio;

#define OFFLOADIO_API extern "C" __attribute__((visibility("default")))

namespace {

/// The plugin instance. It is intentionally never destroyed: libomptarget
/// calls deinit_plugin and unregister_lib from its own destructor, which
/// runs after the exit handlers that would destroy a static object.
GenericPluginTy &thePlugin() {
  static GenericPluginTy *Plugin = [] {
    GenericPluginTy *P = createPlugin().release();
    if (auto Err = P->init())
      P->getInfo().error(-1, "initialisation failed: " +
                                 takeErrorMessage(std::move(Err)));
    return P;
  }();
  return *Plugin;
}

/// Report \p Err (if any) for \p EntryPoint and convert it to a C status.
int32_t report(Error Err, int32_t DeviceId, const char *EntryPoint) {
  if (!Err)
    return OFFLOAD_SUCCESS;
  ErrorDetailsTy Details = takeErrorDetails(std::move(Err));
  // A lock refused for overlapping a locked region is an answer (NULL to
  // the program), not a malfunction: it is explained under LIBOMPTARGET_INFO.
  if (Details.Code == ErrorCode::Overlap)
    thePlugin().getInfo().print(~0u, DeviceId, "{0} refused: {1}", EntryPoint,
                                Details.Message);
  else
    thePlugin().getInfo().error(DeviceId, std::string(EntryPoint) + ": " +
                                              Details.Message);
  return OFFLOAD_FAIL;
}

/// Run \p Fn on initialised device \p DeviceId.
template <typename FnTy>
int32_t onDevice(int32_t DeviceId, const char *EntryPoint, FnTy Fn) {
  TimeProfileTy::ScopeTy Timed(thePlugin().getProfile(), EntryPoint);
  auto Device = thePlugin().getDevice(DeviceId);
  if (!Device)
    return report(Device.takeError(), DeviceId, EntryPoint);
  return report(Fn(*Device), DeviceId, EntryPoint);
}

/// Run \p Fn on the device named by a *global* OpenMP device number.
template <typename FnTy>
int32_t onGlobalDevice(int32_t GlobalId, const char *EntryPoint, FnTy Fn) {
  auto Local = thePlugin().resolveGlobalDeviceId(GlobalId);
  if (!Local)
    return report(Local.takeError(), GlobalId, EntryPoint);
  if (auto Err = thePlugin().initDevice(*Local))
    return report(std::move(Err), *Local, EntryPoint);
  return onDevice(*Local, EntryPoint, Fn);
}

} // namespace

OFFLOADIO_API int32_t __tgt_rtl_init_plugin() {
  // Device discovery problems were reported by thePlugin(); a plugin without
  // devices must still load so that libomptarget moves on quietly.
  (void)thePlugin();
  return OFFLOAD_SUCCESS;
}

OFFLOADIO_API int32_t __tgt_rtl_deinit_plugin() {
  // Called once per unregistered library, and the plugin is used again
  // afterwards: only wait for outstanding work. In a forked child (at its
  // exit) flush() waits for nothing: the streams' threads are the parent's.
  GenericPluginTy &Plugin = thePlugin();
  if (Plugin.getProfile().enabled())
    Plugin.getProfile().printAndReset(llvm::errs(), Plugin.getName());
  return report(Plugin.flush(), -1, "deinit_plugin");
}

OFFLOADIO_API int32_t __tgt_rtl_is_valid_binary(__tgt_device_image *Image) {
  return Image && thePlugin().isValidBinary(*Image, nullptr);
}

OFFLOADIO_API int32_t __tgt_rtl_is_valid_binary_info(__tgt_device_image *Image,
                                                     __tgt_image_info *Info) {
  return Image &&
         thePlugin().isValidBinary(*Image, Info ? Info->Arch : nullptr);
}

OFFLOADIO_API int32_t __tgt_rtl_supports_empty_images() { return 0; }

OFFLOADIO_API int32_t __tgt_rtl_number_of_devices() {
  return thePlugin().getNumDevices();
}

OFFLOADIO_API int64_t __tgt_rtl_init_requires(int64_t RequiresFlags) {
  thePlugin().setRequiresFlags(RequiresFlags);
  return RequiresFlags;
}

OFFLOADIO_API int32_t __tgt_rtl_init_device(int32_t DeviceId) {
  return report(thePlugin().initDevice(DeviceId), DeviceId, "init_device");
}

OFFLOADIO_API int32_t __tgt_rtl_deinit_device(int32_t DeviceId) {
  // Never called by libomptarget 16; devices live as long as the plugin.
  return onDevice(DeviceId, "deinit_device",
                  [](GenericDeviceTy &D) { return D.drain(); });
}

OFFLOADIO_API __tgt_target_table *
__tgt_rtl_load_binary(int32_t DeviceId, __tgt_device_image *Image) {
  __tgt_target_table *Table = nullptr;
  onDevice(DeviceId, "load_binary", [&](GenericDeviceTy &D) -> Error {
    if (!Image)
      return makeError(ErrorCode::InvalidArgument, "null device image");
    auto TableOrErr = D.loadBinary(*Image);
    if (!TableOrErr)
      return TableOrErr.takeError();
    Table = *TableOrErr;
    return Error::success();
  });
  return Table;
}

OFFLOADIO_API void *__tgt_rtl_data_alloc(int32_t DeviceId, int64_t Size,
                                         void *HstPtr, int32_t Kind) {
  void *Ptr = nullptr;
  if (thePlugin().interceptProbeAlloc(DeviceId, Ptr))
    return Ptr;
  onDevice(DeviceId, "data_alloc", [&](GenericDeviceTy &D) -> Error {
    auto PtrOrErr = D.dataAlloc(Size, HstPtr, AllocKindTy(Kind));
    if (!PtrOrErr)
      return PtrOrErr.takeError();
    Ptr = *PtrOrErr;
    return Error::success();
  });
  return Ptr;
}

OFFLOADIO_API int32_t __tgt_rtl_data_delete(int32_t DeviceId, void *TgtPtr,
                                            int32_t Kind) {
  if (thePlugin().interceptProbeFree(TgtPtr))
    return OFFLOAD_SUCCESS;
  return onDevice(DeviceId, "data_delete", [&](GenericDeviceTy &D) {
    return D.dataDelete(TgtPtr, AllocKindTy(Kind));
  });
}

OFFLOADIO_API int32_t __tgt_rtl_data_submit_async(int32_t DeviceId,
                                                  void *TgtPtr, void *HstPtr,
                                                  int64_t Size,
                                                  __tgt_async_info *AsyncInfo) {
  return onDevice(DeviceId, "data_submit", [&](GenericDeviceTy &D) {
    return D.dataSubmit(TgtPtr, HstPtr, Size, AsyncInfo);
  });
}

OFFLOADIO_API int32_t __tgt_rtl_data_submit(int32_t DeviceId, void *TgtPtr,
                                            void *HstPtr, int64_t Size) {
  return __tgt_rtl_data_submit_async(DeviceId, TgtPtr, HstPtr, Size, nullptr);
}

OFFLOADIO_API int32_t __tgt_rtl_data_retrieve_async(
    int32_t DeviceId, void *HstPtr, void *TgtPtr, int64_t Size,
    __tgt_async_info *AsyncInfo) {
  return onDevice(DeviceId, "data_retrieve", [&](GenericDeviceTy &D) {
    return D.dataRetrieve(HstPtr, TgtPtr, Size, AsyncInfo);
  });
}

OFFLOADIO_API int32_t __tgt_rtl_data_retrieve(int32_t DeviceId, void *HstPtr,
                                              void *TgtPtr, int64_t Size) {
  return __tgt_rtl_data_retrieve_async(DeviceId, HstPtr, TgtPtr, Size,
                                       nullptr);
}

OFFLOADIO_API int32_t __tgt_rtl_is_data_exchangable(int32_t SrcId,
                                                    int32_t DstId) {
  return thePlugin().isDataExchangable(SrcId, DstId);
}

OFFLOADIO_API int32_t __tgt_rtl_data_exchange_async(
    int32_t SrcId, void *SrcPtr, int32_t DstId, void *DstPtr, int64_t Size,
    __tgt_async_info *AsyncInfo) {
  auto Dst = thePlugin().getDevice(DstId);
  if (!Dst)
    return report(Dst.takeError(), DstId, "data_exchange");
  return onDevice(SrcId, "data_exchange", [&](GenericDeviceTy &D) {
    return D.dataExchange(SrcPtr, *Dst, DstPtr, Size, AsyncInfo);
  });
}

OFFLOADIO_API int32_t __tgt_rtl_data_exchange(int32_t SrcId, void *SrcPtr,
                                              int32_t DstId, void *DstPtr,
                                              int64_t Size) {
  return __tgt_rtl_data_exchange_async(SrcId, SrcPtr, DstId, DstPtr, Size,
                                       nullptr);
}

OFFLOADIO_API int32_t __tgt_rtl_launch_kernel(int32_t DeviceId, void *EntryPtr,
                                              void **TgtArgs,
                                              ptrdiff_t *TgtOffsets,
                                              KernelArgsTy *KernelArgs,
                                              __tgt_async_info *AsyncInfo) {
  return onDevice(DeviceId, "launch_kernel", [&](GenericDeviceTy &D) -> Error {
    if (!KernelArgs)
      return makeError(ErrorCode::InvalidArgument, "null kernel arguments");
    return D.launchKernel(EntryPtr, TgtArgs, TgtOffsets, *KernelArgs,
                          AsyncInfo);
  });
}

OFFLOADIO_API int32_t __tgt_rtl_synchronize(int32_t DeviceId,
                                            __tgt_async_info *AsyncInfo) {
  return onDevice(DeviceId, "synchronize", [&](GenericDeviceTy &D) -> Error {
    if (!AsyncInfo)
      return makeError(ErrorCode::InvalidArgument, "null async info");
    return D.synchronize(*AsyncInfo);
  });
}

OFFLOADIO_API int32_t __tgt_rtl_query_async(int32_t DeviceId,
                                            __tgt_async_info *AsyncInfo) {
  return onDevice(DeviceId, "query_async", [&](GenericDeviceTy &D) -> Error {
    if (!AsyncInfo)
      return makeError(ErrorCode::InvalidArgument, "null async info");
    return D.queryAsync(*AsyncInfo);
  });
}

OFFLOADIO_API int32_t __tgt_rtl_create_event(int32_t DeviceId, void **Event) {
  return onDevice(DeviceId, "create_event", [&](GenericDeviceTy &D) -> Error {
    if (!Event)
      return makeError(ErrorCode::InvalidArgument, "null event out-pointer");
    auto E = D.createEvent();
    if (!E)
      return E.takeError();
    *Event = *E;
    return Error::success();
  });
}

OFFLOADIO_API int32_t __tgt_rtl_record_event(int32_t DeviceId, void *Event,
                                             __tgt_async_info *AsyncInfo) {
  return onDevice(DeviceId, "record_event", [&](GenericDeviceTy &D) -> Error {
    if (!Event || !AsyncInfo)
      return makeError(ErrorCode::InvalidArgument,
                       "null event {0} or async info {1}", Event, AsyncInfo);
    return D.recordEvent(*static_cast<EventTy *>(Event), *AsyncInfo);
  });
}

OFFLOADIO_API int32_t __tgt_rtl_wait_event(int32_t DeviceId, void *Event,
                                           __tgt_async_info *AsyncInfo) {
  return onDevice(DeviceId, "wait_event", [&](GenericDeviceTy &D) -> Error {
    if (!Event || !AsyncInfo)
      return makeError(ErrorCode::InvalidArgument,
                       "null event {0} or async info {1}", Event, AsyncInfo);
    return D.waitEvent(*static_cast<EventTy *>(Event), *AsyncInfo);
  });
}

OFFLOADIO_API int32_t __tgt_rtl_sync_event(int32_t DeviceId, void *Event) {
  return onDevice(DeviceId, "sync_event", [&](GenericDeviceTy &D) -> Error {
    if (!Event)
      return makeError(ErrorCode::InvalidArgument, "null event");
    return D.syncEvent(*static_cast<EventTy *>(Event));
  });
}

OFFLOADIO_API int32_t __tgt_rtl_destroy_event(int32_t DeviceId, void *Event) {
  return onDevice(DeviceId, "destroy_event", [&](GenericDeviceTy &D) -> Error {
    if (!Event)
      return makeError(ErrorCode::InvalidArgument, "null event");
    return D.destroyEvent(*static_cast<EventTy *>(Event));
  });
}

OFFLOADIO_API void __tgt_rtl_set_info_flag(uint32_t Flags) {
  thePlugin().getInfo().setFlags(Flags);
}

OFFLOADIO_API void __tgt_rtl_print_device_info(int32_t DeviceId) {
  // llvm-omp-device-info may ask before the device was initialised.
  if (auto Err = thePlugin().initDevice(DeviceId)) {
    report(std::move(Err), DeviceId, "print_device_info");
    return;
  }
  onDevice(DeviceId, "print_device_info", [](GenericDeviceTy &D) {
    std::string Text;
    llvm::raw_string_ostream OS(Text);
    D.printInfo(OS);
    OS.flush();
    std::fwrite(Text.data(), 1, Text.size(), stdout);
    std::fflush(stdout);
    return Error::success();
  });
}

OFFLOADIO_API int32_t __tgt_rtl_init_async_info(int32_t GlobalId,
                                                __tgt_async_info **AsyncInfo) {
  return onGlobalDevice(GlobalId, "init_async_info",
                        [&](GenericDeviceTy &D) -> Error {
                          if (!AsyncInfo)
                            return makeError(ErrorCode::InvalidArgument,
                                             "null async info out-pointer");
                          return D.initAsyncInfo(*AsyncInfo);
                        });
}

OFFLOADIO_API int32_t __tgt_rtl_init_device_info(int32_t GlobalId,
                                                 __tgt_device_info *DeviceInfo,
                                                 const char **ErrStr) {
  if (ErrStr)
    *ErrStr = "";
  int32_t Rc = onGlobalDevice(GlobalId, "init_device_info",
                              [&](GenericDeviceTy &D) -> Error {
                                if (!DeviceInfo)
                                  return makeError(ErrorCode::InvalidArgument,
                                                   "null device info");
                                return D.initDeviceInfo(*DeviceInfo);
                              });
  if (Rc != OFFLOAD_SUCCESS && ErrStr)
    *ErrStr = "offload-io: init_device_info failed (see the error above)";
  return Rc;
}

OFFLOADIO_API int32_t __tgt_rtl_data_lock(int32_t GlobalId, void *HstPtr,
                                          int64_t Size, void **LockedPtr) {
  if (LockedPtr)
    *LockedPtr = nullptr;
  return onGlobalDevice(GlobalId, "data_lock", [&](GenericDeviceTy &D) -> Error {
    if (!LockedPtr)
      return makeError(ErrorCode::InvalidArgument, "null locked-pointer slot");
    auto Ptr = thePlugin().lockHostMemory(D, HstPtr, Size);
    if (!Ptr)
      return Ptr.takeError();
    *LockedPtr = *Ptr;
    return Error::success();
  });
}

OFFLOADIO_API int32_t __tgt_rtl_data_unlock(int32_t GlobalId, void *HstPtr) {
  return onGlobalDevice(GlobalId, "data_unlock", [&](GenericDeviceTy &D) {
    return thePlugin().unlockHostMemory(D, HstPtr);
  });
}

//===----------------------------------------------------------------------===//
// offload-io extensions, declared in offloadio/ExtensionABI.h and called by
// libompx_io (include/ompx_io.h). They return 0 or an errno value, never
// print: libompx_io reports through errno, and through ompx_io_last_error
// with the message each failure leaves for __tgt_rtl_ompx_take_last_error.
//===----------------------------------------------------------------------===//

/// The local number of OpenMP device \p GlobalId, or -1 if not ours.
OFFLOADIO_API int32_t __tgt_rtl_ompx_resolve_device(int32_t GlobalId) {
  auto Local = thePlugin().resolveGlobalDeviceId(GlobalId);
  if (!Local) {
    llvm::consumeError(Local.takeError());
    return -1;
  }
  // In a child forked after the parent initialised devices, the device is
  // ours but unusable: the call that follows says why, with its errno.
  if (thePlugin().inForkedChild())
    return *Local;
  if (auto Err = thePlugin().initDevice(*Local)) {
    llvm::consumeError(std::move(Err));
    return -1;
  }
  return *Local;
}

namespace {
/// Leave \p Message (of a failure on \p DeviceId, -1: none) for
/// __tgt_rtl_ompx_take_last_error, naming the plugin and the device.
void keepExtensionError(int32_t DeviceId, const std::string &Message) {
  std::string Kept = "offload-io(" + thePlugin().getName() + ")";
  if (DeviceId >= 0)
    Kept += " device " + std::to_string(DeviceId);
  Kept += ": " + Message;
  ExtensionErrorsTy::record(std::move(Kept));
}

/// Turn \p Err into an errno value and keep its message for
/// ompx_io_last_error; it is printed under LIBOMPTARGET_INFO, except that
/// use after fork is always printed: errno alone (ENODEV) cannot tell the
/// program that fork() is the reason.
int32_t errnoReport(Error Err, int32_t DeviceId) {
  ErrorDetailsTy D = takeErrorDetails(std::move(Err));
  keepExtensionError(DeviceId, D.Message);
  if (D.Code == ErrorCode::ForkedChild)
    thePlugin().getInfo().error(DeviceId, D.Message);
  else
    thePlugin().getInfo().print(~0u, DeviceId, "{0}", D.Message);
  if (D.Errno)
    return D.Errno;
  return takeErrno(makeError(D.Code, "{0}", D.Message));
}

/// Run \p Fn on device \p DeviceId and turn its error into an errno value.
template <typename FnTy> int32_t errnoOnDevice(int32_t DeviceId, FnTy Fn) {
  auto Device = thePlugin().getDevice(DeviceId);
  if (!Device)
    return errnoReport(Device.takeError(), DeviceId);
  if (Error Err = Fn(*Device))
    return errnoReport(std::move(Err), DeviceId);
  return 0;
}
} // namespace

GenericPluginTy &offloadio::extensionPlugin() { return thePlugin(); }

int32_t offloadio::extensionErrno(Error Err, int32_t DeviceId) {
  return errnoReport(std::move(Err), DeviceId);
}

OFFLOADIO_API int32_t __tgt_rtl_ompx_io_submit(int32_t DeviceId,
                                               int32_t IsWrite, int32_t Fd,
                                               void *DevPtr, uint64_t Count,
                                               int64_t Offset,
                                               void **Request) {
  return errnoOnDevice(DeviceId, [&](GenericDeviceTy &D) -> Error {
    auto Engine = D.getIOEngine();
    if (!Engine)
      return Engine.takeError();
    auto R = Engine->submit(IsWrite ? IORequestTy::Write : IORequestTy::Read,
                            Fd, DevPtr, Count, Offset);
    if (!R)
      return R.takeError();
    *Request = R->release();
    return Error::success();
  });
}

/// 1 done, 0 pending.
OFFLOADIO_API int32_t __tgt_rtl_ompx_io_test(void *Request) {
  // A request inherited from the parent never progresses here (no worker
  // threads) and its lock may be held forever: "done", so that the wait
  // that follows reports the error.
  if (thePlugin().inForkedChild())
    return 1;
  return static_cast<IORequestTy *>(Request)->isDone();
}

/// Wait, store the byte count, release the request; 0 or an errno value.
OFFLOADIO_API int32_t __tgt_rtl_ompx_io_wait(void *Request, int64_t *Bytes) {
  // A request inherited from the parent: waiting would never end, and
  // freeing it could destroy a lock a parent worker held at the fork. The
  // child's copy is left alone; the parent still owns the transfer.
  if (thePlugin().inForkedChild())
    return errnoReport(thePlugin().makeForkedError("an ompx_io request"), -1);
  std::unique_ptr<IORequestTy> R(static_cast<IORequestTy *>(Request));
  auto N = R->wait();
  if (!N) {
    ErrorDetailsTy D = takeErrorDetails(N.takeError());
    keepExtensionError(-1, D.Message);
    thePlugin().getInfo().print(~0u, -1, "{0}", D.Message);
    return D.Errno ? D.Errno : EIO;
  }
  *Bytes = int64_t(*N);
  return 0;
}

/// Register the completion notification; 0 or an errno value.
OFFLOADIO_API int32_t __tgt_rtl_ompx_io_notify(void *Request,
                                               void (*Fn)(void *), void *Arg) {
  // A request inherited from the parent never completes here: its
  // notification would never run.
  if (thePlugin().inForkedChild())
    return errnoReport(thePlugin().makeForkedError("an ompx_io request"), -1);
  if (!Request)
    return errnoReport(makeErrnoError(EINVAL, "ompx_io notification for a "
                                              "null request"),
                       -1);
  if (auto Err = static_cast<IORequestTy *>(Request)->notifyWhenDone({Fn, Arg}))
    return errnoReport(std::move(Err), -1);
  return 0;
}

OFFLOADIO_API int32_t __tgt_rtl_ompx_io_stats(int32_t DeviceId,
                                              ompx_io_stats_t *Out) {
  return errnoOnDevice(DeviceId, [&](GenericDeviceTy &D) -> Error {
    auto Engine = D.getIOEngine();
    if (!Engine)
      return Engine.takeError();
    IOStatsTy &S = Engine->getStats();
    *Out = ompx_io_stats_t();
    for (unsigned P = 0; P < OMPX_IO_NUM_PATHS; ++P) {
      Out->bytes_read[P] = S.BytesRead[P].load();
      Out->bytes_written[P] = S.BytesWritten[P].load();
      Out->reads[P] = S.Reads[P].load();
      Out->writes[P] = S.Writes[P].load();
    }
    Out->fallbacks = S.Fallbacks.load();
    std::lock_guard<std::mutex> Guard(S.ReasonLock);
    std::snprintf(Out->last_fallback, sizeof(Out->last_fallback), "%s",
                  S.LastFallback.c_str());
    return Error::success();
  });
}

OFFLOADIO_API int32_t __tgt_rtl_ompx_io_paths(int32_t DeviceId,
                                              uint32_t *Mask, char *Why,
                                              uint64_t WhyLen) {
  return errnoOnDevice(DeviceId, [&](GenericDeviceTy &D) -> Error {
    auto Engine = D.getIOEngine();
    if (!Engine)
      return Engine.takeError();
    std::string Reasons;
    *Mask = Engine->availablePaths(Reasons);
    if (Why && WhyLen)
      std::snprintf(Why, WhyLen, "%s", Reasons.c_str());
    return Error::success();
  });
}

namespace {
/// Copy \p Text into the fixed C field \p Field, cut to fit.
template <size_t N>
void copySettingText(char (&Field)[N], const std::string &Text) {
  std::snprintf(Field, N, "%s", Text.c_str());
}
} // namespace

OFFLOADIO_API int32_t __tgt_rtl_ompx_io_settings(ompx_io_setting_t *Out,
                                                 uint64_t Capacity,
                                                 uint64_t *Count) {
  if (!Count || (!Out && Capacity))
    return EINVAL;
  // The engine's own reader, observed: its names, defaults and valid values
  // are nowhere else.
  EnvReadLogTy Log;
  (void)IOConfigTy::fromEnv();
  const std::vector<EnvReadTy> &Reads = Log.reads();
  *Count = Reads.size();
  for (uint64_t I = 0; I < Reads.size() && I < Capacity; ++I) {
    const EnvReadTy &R = Reads[I];
    ompx_io_setting_t &S = Out[I];
    S = ompx_io_setting_t();
    copySettingText(S.name, R.Name);
    copySettingText(S.value, R.Used);
    copySettingText(S.default_value, R.Default);
    copySettingText(S.env_value, R.Raw.value_or(""));
    copySettingText(S.valid, R.Expected);
    S.source = R.Invalid ? OMPX_IO_SETTING_INVALID
               : R.Raw   ? OMPX_IO_SETTING_ENVIRONMENT
                         : OMPX_IO_SETTING_DEFAULT;
  }
  return 0;
}

/// Fill \p *Out with the process's pinned-memory account; 0 or EINVAL.
OFFLOADIO_API int32_t
__tgt_rtl_ompx_pinned_budget(ompx_pinned_budget_t *Out) {
  if (!Out)
    return EINVAL;
  // Every plugin of the process shares the account: any of them answers.
  PinnedBudgetStatsTy Stats = thePlugin().getPinnedBudget().getStats();
  Out->cap = Stats.Cap;
  Out->used = Stats.Used;
  Out->peak = Stats.Peak;
  Out->refusals = Stats.Refusals;
  return 0;
}

OFFLOADIO_API int32_t
__tgt_rtl_ompx_process_budget(ompx_io_process_budget_t *Out) {
  if (!Out)
    return EINVAL;
  *Out = ompx_io_process_budget_t();
  GenericPluginTy &Plugin = thePlugin();
  ProcessShareTy Share = ProcessShareTy::detect();
  Out->cpus_online = Share.OnlineCpus;
  Out->cpus_in_mask = Share.MaskCpus;
  Out->local_ranks = Share.LocalRanks;
  Out->local_rank = Share.LocalRank;
  Out->cpus = Share.cpus();
  copySettingText(Out->ranks_variable, Share.RanksVariable);
  copySettingText(Out->cpus_origin, Share.cpusOrigin());
  // The readers, observed, tell whether the environment set each value.
  EnvReadLogTy Log;
  IOConfigTy IO = IOConfigTy::fromEnv(Share);
  auto originOf = [&](const char *Name, const std::string &Default) {
    for (const EnvReadTy &R : Log.reads())
      if (R.Name == Name && R.Raw)
        return R.Invalid ? Default + " (" + Name + "='" + *R.Raw +
                               "' is invalid)"
                         : std::string("the environment (") + Name + "=" +
                               *R.Raw + ")";
    return Default;
  };
  // The pool is sized once, by the first engine: it stays as it is.
  unsigned Running = Plugin.getNumIOWorkers();
  Out->io_threads = Running ? Running : IO.Threads;
  Out->io_threads_running = Running;
  copySettingText(Out->io_threads_origin,
                  originOf("OMPX_IO_THREADS",
                           IOConfigTy::defaultThreadsOrigin(Share)));
  // The plugin's own settings are the ones it read at load; the origins
  // come from reading them again.
  (void)PluginSettingsTy::fromEnv(Share);
  const PluginSettingsTy &Settings = Plugin.getSettings();
  Out->copy_threads = Settings.CopyThreads;
  copySettingText(Out->copy_threads_origin,
                  originOf("OFFLOADIO_COPY_THREADS",
                           PluginSettingsTy::defaultCopyThreadsOrigin(Share)));
  Out->pinned_max = Plugin.getPinnedBudget().getStats().Cap;
  copySettingText(Out->pinned_max_origin,
                  originOf("OFFLOADIO_PINNED_MAX",
                           PluginSettingsTy::defaultPinnedMaxOrigin(Share)));
  return 0;
}

/// 1 and \p *Out filled when \p Ptr is in a locked region, 0 otherwise.
OFFLOADIO_API int32_t __tgt_rtl_ompx_lock_info(const void *Ptr,
                                               ompx_lock_region_t *Out) {
  // Memory locks are not inherited across fork (mlock(2), and vendor
  // registrations belong to the parent's context): nothing is locked for a
  // forked child, and the map's lock may be held by a parent thread.
  if (thePlugin().inForkedChild())
    return 0;
  auto Region = thePlugin().getPinnedMap().lookup(Ptr);
  if (!Region)
    return 0;
  Out->host_ptr = Region->HstPtr;
  Out->device_ptr = Region->DevAccessiblePtr;
  Out->size = Region->Size;
  Out->references = Region->References;
  Out->external = Region->External;
  return 1;
}

OFFLOADIO_API int32_t __tgt_rtl_ompx_copy_counters(int32_t DeviceId,
                                                   uint64_t *Bytes,
                                                   uint64_t *Copies) {
  return errnoOnDevice(DeviceId, [&](GenericDeviceTy &D) -> Error {
    const TransferCountersTy &C = D.getCounters();
    for (unsigned P = 0; P < unsigned(TransferPathTy::NumPaths); ++P) {
      Bytes[P] = C.Bytes[P].load();
      Copies[P] = C.Operations[P].load();
    }
    return Error::success();
  });
}

OFFLOADIO_API uint64_t __tgt_rtl_ompx_take_last_error(char *Buf,
                                                      uint64_t Len) {
  std::string Message = ExtensionErrorsTy::take();
  if (Buf && Len)
    std::snprintf(Buf, Len, "%s", Message.c_str());
  return Message.size();
}

// SPDX-License-Identifier: Apache-2.0
//
// The offload-io extensions (__tgt_rtl_ompx_*, offloadio/ExtensionABI.h)
// that libompx_io calls (include/ompx_io.h): device resolution, single
// transfers, counters, the lock map and the last error. They return 0 or an
// errno value, never print: libompx_io reports through errno, and through
// ompx_io_last_error with the message each failure leaves for
// __tgt_rtl_ompx_take_last_error. The batch extensions (CApiBatch.cpp)
// report through extensionErrno here; the settings report is in
// CApiSettings.cpp.
#include "offloadio/CApiSupport.h"
#include "offloadio/ExtensionABI.h"
#include "offloadio/MessagePrefix.h"
#include "offloadio/Plugin.h"
#include "offloadio/io/IOEngine.h"

#include "ompx_io.h"

#include <cerrno>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>

using namespace offloadio;

// Extension calls: reached through the table (CApiExtensionTable.cpp), not
// exported.

/// The local number of OpenMP device \p GlobalId, or -1 if not ours.
OFFLOADIO_EXTENSION_DEFINITION int32_t __tgt_rtl_ompx_resolve_device(int32_t GlobalId) {
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
  std::string Kept =
      pluginMessageSource(thePlugin().getName(), DeviceId) + ": " + Message;
  ExtensionErrorsTy::record(std::move(Kept));
}

/// Turn \p Err into an errno value and keep its message for
/// ompx_io_last_error; it is printed under OFFLOADIO_INFO, except that
/// use after fork is always printed: errno alone (ENODEV) cannot tell the
/// program that fork() is the reason.
int32_t errnoReport(Error Err, int32_t DeviceId) {
  ErrorDetailsTy D = takeErrorDetails(std::move(Err));
  keepExtensionError(DeviceId, D.Message);
  if (D.Code == ErrorCode::ForkedChild)
    thePlugin().getInfo().error(DeviceId, D.Message);
  else
    thePlugin().getInfo().print(~0u, DeviceId, "{0}", D.Message);
  return errnoFor(D);
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

int32_t offloadio::extensionErrno(Error Err, int32_t DeviceId) {
  return errnoReport(std::move(Err), DeviceId);
}

OFFLOADIO_EXTENSION_DEFINITION int32_t __tgt_rtl_ompx_io_submit(int32_t DeviceId,
                                               int32_t IsWrite, int32_t Fd,
                                               void *DevPtr, uint64_t Count,
                                               int64_t Offset,
                                               void **Request) {
  return errnoOnDevice(DeviceId, [&](GenericDeviceTy &D) -> Error {
    auto Engine = thePlugin().getIOEngine(D);
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
OFFLOADIO_EXTENSION_DEFINITION int32_t __tgt_rtl_ompx_io_test(void *Request) {
  // A request inherited from the parent never progresses here (no worker
  // threads) and its lock may be held forever: "done", so that the wait
  // that follows reports the error.
  if (thePlugin().inForkedChild())
    return 1;
  return static_cast<IORequestTy *>(Request)->isDone();
}

/// Wait, store the byte count, release the request; 0 or an errno value.
OFFLOADIO_EXTENSION_DEFINITION int32_t __tgt_rtl_ompx_io_wait(void *Request, int64_t *Bytes) {
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
    return errnoFor(D);
  }
  *Bytes = int64_t(*N);
  return 0;
}

/// Register the completion notification; 0 or an errno value.
OFFLOADIO_EXTENSION_DEFINITION int32_t __tgt_rtl_ompx_io_notify(void *Request,
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

OFFLOADIO_EXTENSION_DEFINITION int32_t __tgt_rtl_ompx_io_stats(int32_t DeviceId,
                                              ompx_io_stats_t *Out) {
  return errnoOnDevice(DeviceId, [&](GenericDeviceTy &D) -> Error {
    auto Engine = thePlugin().getIOEngine(D);
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

OFFLOADIO_EXTENSION_DEFINITION int32_t __tgt_rtl_ompx_io_paths(int32_t DeviceId,
                                              uint32_t *Mask, char *Why,
                                              uint64_t WhyLen) {
  return errnoOnDevice(DeviceId, [&](GenericDeviceTy &D) -> Error {
    auto Engine = thePlugin().getIOEngine(D);
    if (!Engine)
      return Engine.takeError();
    std::string Reasons;
    *Mask = Engine->availablePaths(Reasons);
    if (Why && WhyLen)
      std::snprintf(Why, WhyLen, "%s", Reasons.c_str());
    return Error::success();
  });
}

/// Fill \p *Out with the process's pinned-memory account; 0 or EINVAL.
/// 1 and \p *Out filled when \p Ptr is in a locked region, 0 otherwise.
OFFLOADIO_EXTENSION_DEFINITION int32_t __tgt_rtl_ompx_lock_info(const void *Ptr,
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

OFFLOADIO_EXTENSION_DEFINITION int32_t __tgt_rtl_ompx_lock_mem(int32_t DeviceId,
                                                              void *Ptr,
                                                              uint64_t Size,
                                                              void **Locked) {
  if (Locked)
    *Locked = nullptr;
  return errnoOnDevice(DeviceId, [&](GenericDeviceTy &D) -> Error {
    if (Size > uint64_t(INT64_MAX))
      return makeError(ErrorCode::InvalidArgument,
                       "cannot lock {0} bytes at {1} for device {2}: the "
                       "size is above INT64_MAX",
                       Size, Ptr, D.getDeviceId());
    return lockInto(D, Ptr, int64_t(Size), Locked);
  });
}

OFFLOADIO_EXTENSION_DEFINITION int32_t
__tgt_rtl_ompx_unlock_mem(int32_t DeviceId, void *Ptr) {
  return errnoOnDevice(DeviceId, [&](GenericDeviceTy &D) {
    return thePlugin().unlockHostMemory(D, Ptr);
  });
}

OFFLOADIO_EXTENSION_DEFINITION int32_t __tgt_rtl_ompx_copy_counters(int32_t DeviceId,
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

OFFLOADIO_EXTENSION_DEFINITION uint64_t __tgt_rtl_ompx_take_last_error(char *Buf,
                                                      uint64_t Len) {
  std::string Message = ExtensionErrorsTy::take();
  if (Buf && Len)
    std::snprintf(Buf, Len, "%s", Message.c_str());
  return Message.size();
}

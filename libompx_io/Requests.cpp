// SPDX-License-Identifier: Apache-2.0
//
// The single-transfer calls: ompx_target_pread/pwrite and their _async
// forms, ompx_io_test and ompx_io_wait. A transfer on the initial device
// (plain host memory) is done here with pread/pwrite; any other goes to the
// offload-io plugin that serves the device (Library.h).
//
// The handles given to the program are request numbers, never reused,
// looked up in the library's registry of the requests in flight
// (HandleRegistry.h).
#include "CallFailure.h"
#include "Diagnostics.h"
#include "Library.h"
#include "Requests.h"
#include "ompx_io.h"
#include "offloadio/ExtensionABI.h"

#include <cerrno>
#include <cstdio>
#include <optional>
#include <string>


using namespace ompxio;
using offloadio::ExtensionNames;
using offloadio::inspectDescriptor;

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

void ompxio::finishLeftRequest(RequestTy &R) {
  int64_t Bytes;
  // Its result, errors included, has no one left to read it.
  if (R.Plugin)
    (void)R.Plugin->Fns.IOWait(R.Inner, &Bytes);
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

int ompxio::startTransfer(const char *Call, bool IsWrite, int Fd, void *Buf,
                          size_t Count, off_t Offset, int Device,
                          RequestTy &R) {
  R = RequestTy();
  if (Device == initialDeviceNumber()) {
    // Host memory: done now; the request only carries the result.
    HostOutcomeTy Host = countedHostTransfer(
        inspectDescriptor(librarySys(), Fd), IsWrite, Buf, Count, Offset,
        Device);
    if (Host.Refused)
      return fail(Host.Errno, std::string(Call) + ": " + Host.Why);
    R.HostResult = Host.Result;
    R.HostErrno = Host.Errno;
    R.HostWhy = std::move(Host.Why);
    return 0;
  }
  DeviceRefTy Ref;
  if (!resolveDevice(Device, Ref))
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
  *Request = requestRegistry().track(std::move(R));
  return 0;
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
  int Done = 1;
  // Under the registry's lock, so that no concurrent wait releases the
  // plugin's request meanwhile.
  if (!requestRegistry().withTracked(Request, [&](const RequestTy &R) {
        // Submitted only through a table with IOTest (startTransfer).
        if (R.Plugin)
          Done = R.Plugin->Fns.IOTest(R.Inner);
      }))
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
  if (!requestRegistry().claim(Request, R))
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

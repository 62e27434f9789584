// SPDX-License-Identifier: Apache-2.0
//
// What the files of the plugin's C entry points (common/device/src/CApi*.cpp
// and the version-specific ones of common/device/src/abi/) share: the plugin
// instance and the status report of the entry points (CApi.cpp), the errno
// report of the extensions and their last-error store (CApiExtensions.cpp).
// Only those files include this.
#ifndef OFFLOADIO_CAPISUPPORT_H
#define OFFLOADIO_CAPISUPPORT_H

#include "offloadio/Device.h"
#include "offloadio/Error.h"
#include "offloadio/ExtensionABI.h"
#include "offloadio/LastErrorStore.h"
#include "offloadio/Plugin.h"
#include "offloadio/Profile.h"

#include <cstdint>

/// Defines one of libomptarget's __tgt_rtl_* entry points: exported.
#define OFFLOADIO_API extern "C" __attribute__((visibility("default")))
/// Defines one of the extension calls: reached only through the table that
/// __tgt_rtl_ompx_extensions answers, so not exported (ExtensionABI.h).
#define OFFLOADIO_EXTENSION_DEFINITION extern "C" OFFLOADIO_EXTENSION_CALL

namespace offloadio {

class GenericPluginTy;

/// The owner of the plugin's extension failure messages.
struct ExtensionErrorOwnerTag;

/// The message of each thread's last failed extension call, until
/// libompx_io takes it (__tgt_rtl_ompx_take_last_error). Per thread because
/// the calls of different threads fail independently and each thread's
/// ompx_io_last_error is its own; the plugin instance has no per-thread
/// state to hold it.
using ExtensionErrorsTy = LastErrorStoreTy<ExtensionErrorOwnerTag>;

/// The plugin instance of the C entry points, created by the first of them.
GenericPluginTy &thePlugin();

/// Report \p Err (if any) of \p EntryPoint on local device \p DeviceId
/// (-1: none) and convert it to libomptarget's status.
int32_t reportEntryPoint(Error Err, int32_t DeviceId, const char *EntryPoint);

/// Run \p Fn on initialised local device \p DeviceId, timed as
/// \p EntryPoint.
template <typename FnTy>
int32_t onDevice(int32_t DeviceId, const char *EntryPoint, FnTy Fn) {
  TimeProfileTy::ScopeTy Timed(thePlugin().getProfile(), EntryPoint);
  auto Device = thePlugin().getDevice(DeviceId);
  if (!Device)
    return reportEntryPoint(Device.takeError(), DeviceId, EntryPoint);
  return reportEntryPoint(Fn(*Device), DeviceId, EntryPoint);
}

/// Run \p Fn on the device named by a *global* OpenMP device number.
template <typename FnTy>
int32_t onGlobalDevice(int32_t GlobalId, const char *EntryPoint, FnTy Fn) {
  auto Local = thePlugin().resolveGlobalDeviceId(GlobalId);
  if (!Local)
    return reportEntryPoint(Local.takeError(), GlobalId, EntryPoint);
  if (auto Err = thePlugin().initDevice(*Local))
    return reportEntryPoint(std::move(Err), *Local, EntryPoint);
  return onDevice(*Local, EntryPoint, Fn);
}

/// Wait for the plugin's outstanding work and print its profile
/// (OFFLOADIO_PROFILE): what libomptarget 16 and 17 ask at deinit_plugin,
/// and what the plugin does itself at exit under 18. Idempotent; the
/// plugin stays usable.
int32_t flushPlugin(const char *EntryPoint);

/// Arrange for flushPlugin at the process's exit where the libomptarget
/// served asks for no flush itself (libomptarget 18: abi/); nothing for
/// the others. Called once a device is initialised, by then the vendor
/// driver has set up its own teardown (abi/EntryPointsHandle.cpp says why
/// that matters).
void arrangeExitFlush();

/// Lock \p Size bytes at \p HstPtr for \p Device and put the
/// device-accessible address into \p *LockedPtr: data_lock's work, and
/// __tgt_rtl_ompx_lock_mem's.
llvm::Error lockInto(GenericDeviceTy &Device, void *HstPtr, int64_t Size,
                     void **LockedPtr);

/// Turn \p Err of an extension call on local device \p DeviceId (-1: none)
/// into an errno value and keep its message for
/// __tgt_rtl_ompx_take_last_error, as every extension does.
int32_t extensionErrno(Error Err, int32_t DeviceId);

} // namespace offloadio

#endif // OFFLOADIO_CAPISUPPORT_H

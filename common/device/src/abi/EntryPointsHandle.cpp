// SPDX-License-Identifier: Apache-2.0
//
// The entry points of libomptarget 18 that 16 and 17 do not have or have
// with another signature: load_binary answers a handle of the loaded image,
// from which libomptarget asks for each kernel and global by name (the
// image's name index answers);
// init_requires answers 0 (anything else fails the device); the offset of
// the plugin's first device arrives through set_device_offset; and with no
// deinit_plugin the plugin waits for its work at exit itself.
#include "offloadio/ABI.h"
#include "offloadio/CApiSupport.h"
#include "offloadio/DeviceImage.h"

using namespace offloadio;

namespace {

/// The entry of the image behind \p Binary named \p Name, or null.
const __tgt_offload_entry *findEntry(__tgt_device_binary Binary,
                                     const char *Name) {
  auto *Image = reinterpret_cast<const DeviceImageTy *>(Binary.handle);
  if (!Image || !Name)
    return nullptr;
  return Image->findEntry(Name);
}

/// Answer entry \p Name's address of \p Binary in \p Out for \p EntryPoint.
int32_t answerEntry(__tgt_device_binary Binary, const char *Name, void **Out,
                    const char *EntryPoint, const char *What) {
  if (!Out)
    return reportEntryPoint(
        makeError(ErrorCode::InvalidArgument, "null {0} out-pointer", What),
        -1, EntryPoint);
  const __tgt_offload_entry *Entry = findEntry(Binary, Name);
  if (!Entry)
    return reportEntryPoint(makeError(ErrorCode::NotFound,
                                      "the image has no {0} named '{1}'", What,
                                      Name ? Name : "(null)"),
                            -1, EntryPoint);
  *Out = Entry->addr;
  return OFFLOAD_SUCCESS;
}

/// The exit handler of arrangeExitFlush.
void flushAtExitHandler(void *) { (void)flushPlugin("exit"); }

/// The fallback: waits for outstanding work when the plugin is unloaded or
/// the process exits, for plugins whose exit handler was never registered
/// (no device initialised through init_device, or __cxa_atexit refused),
/// and for work queued after that handler ran. Once the vendor driver has
/// shut down, that flush is quiet and successful (TeardownTy). The plugin
/// stays usable for calls made after this (the program's own exit
/// handlers may still unregister its images).
__attribute__((destructor)) void flushAtExit() {
  (void)flushPlugin("exit");
}

} // namespace

/// The plugin's own DSO handle (every shared object has one).
extern "C" void *__dso_handle __attribute__((visibility("hidden")));
extern "C" int __cxa_atexit(void (*Fn)(void *), void *Arg, void *Dso);

void offloadio::arrangeExitFlush() {
  // libomptarget 18 has no deinit_plugin: the plugin waits for its work at
  // exit itself, and must do so while the vendor driver still works. A
  // destructor alone runs too late: the CUDA driver tears itself down from
  // an exit handler of its own, and exit() runs every handler before any
  // shared object's destructors. Exit handlers run in the reverse order of
  // their registration; the driver registers its handler when it starts
  // (cuInit, hsa_init, at the latest with a device's context), which has
  // happened once a device is initialised, so a handler registered now
  // runs before the driver's. It is registered against this DSO's handle,
  // so that it also runs, before the code goes, if the plugin is unloaded
  // (dlclose) before exit.
  thePlugin().arrangeExitFlushOnce([] {
    if (__cxa_atexit(flushAtExitHandler, nullptr, &__dso_handle) != 0)
      thePlugin().getInfo().print(~0u, -1,
                                  "no exit handler: outstanding work is "
                                  "waited for by the plugin's destructor");
  });
}

OFFLOADIO_API int32_t __tgt_rtl_load_binary(int32_t DeviceId,
                                            __tgt_device_image *Image,
                                            __tgt_device_binary *Binary) {
  if (Binary)
    Binary->handle = 0;
  return onDevice(DeviceId, "load_binary", [&](GenericDeviceTy &D) -> Error {
    if (!Image || !Binary)
      return makeError(ErrorCode::InvalidArgument,
                       "null device image {0} or binary out-pointer {1}",
                       static_cast<void *>(Image),
                       static_cast<void *>(Binary));
    auto Loaded = D.loadBinary(*Image);
    if (!Loaded)
      return Loaded.takeError();
    Binary->handle = reinterpret_cast<uintptr_t>(*Loaded);
    return Error::success();
  });
}

OFFLOADIO_API int32_t __tgt_rtl_get_function(__tgt_device_binary Binary,
                                             const char *Name, void **Kernel) {
  return answerEntry(Binary, Name, Kernel, "get_function", "kernel");
}

OFFLOADIO_API int32_t __tgt_rtl_get_global(__tgt_device_binary Binary,
                                           uint64_t Size, const char *Name,
                                           void **DevicePtr) {
  return answerEntry(Binary, Name, DevicePtr, "get_global", "global");
}

OFFLOADIO_API int64_t __tgt_rtl_init_requires(int64_t RequiresFlags) {
  thePlugin().setRequiresFlags(RequiresFlags);
  return 0;
}

OFFLOADIO_API int32_t __tgt_rtl_set_device_offset(int32_t DeviceOffset) {
  thePlugin().setGlobalDeviceOffset(DeviceOffset);
  return OFFLOAD_SUCCESS;
}

OFFLOADIO_API int32_t __tgt_rtl_use_auto_zero_copy(int32_t DeviceId) {
  // Copies stay copies: none of our devices maps host memory instead.
  return 0;
}

OFFLOADIO_API int32_t __tgt_rtl_initialize_record_replay(
    int32_t DeviceId, int64_t MemorySize, void *VAddr, bool IsRecord,
    bool SaveOutput, uint64_t *ReqPtrArgOffset) {
  return reportEntryPoint(
      makeError(ErrorCode::Unsupported,
                "kernel record and replay (LIBOMPTARGET_RECORD) is not "
                "supported by offload-io; unset it or use the stock plugin"),
      DeviceId, "initialize_record_replay");
}

// SPDX-License-Identifier: Apache-2.0
//
// The __tgt_rtl_* entry points that libomptarget 16, 17 and 18 share:
// validate arguments, find the device, call the framework, and turn
// llvm::Error into OFFLOAD_SUCCESS/OFFLOAD_FAIL with one error line naming
// what failed. Those that differ between versions are in abi/ (one file per
// difference, chosen by the build). The plugin instance they create also
// serves the offload-io extensions (CApiExtensions.cpp, CApiBatch.cpp,
// CApiSettings.cpp).
#include "offloadio/ABI.h"
#include "offloadio/CApiSupport.h"
#include "offloadio/Plugin.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <string>

using namespace offloadio;


/// The plugin instance. It is intentionally never destroyed: libomptarget
/// calls deinit_plugin and unregister_lib from its own destructor (16, 17),
/// or tears nothing down (18), after the exit handlers that would destroy a
/// static object.
GenericPluginTy &offloadio::thePlugin() {
  static GenericPluginTy *Plugin = [] {
    GenericPluginTy *P = createPlugin().release();
    if (auto Err = P->init())
      P->getInfo().error(-1, "initialisation failed: " +
                                 takeErrorMessage(std::move(Err)));
    return P;
  }();
  return *Plugin;
}

int32_t offloadio::reportEntryPoint(Error Err, int32_t DeviceId,
                                    const char *EntryPoint) {
  if (!Err)
    return OFFLOAD_SUCCESS;
  ErrorDetailsTy Details = takeErrorDetails(std::move(Err));
  // A lock refused for overlapping a locked region is an answer (NULL to
  // the program), not a malfunction: it is explained under OFFLOADIO_INFO.
  if (Details.Code == ErrorCode::Overlap)
    thePlugin().getInfo().print(~0u, DeviceId, "{0} refused: {1}", EntryPoint,
                                Details.Message);
  else
    thePlugin().getInfo().error(DeviceId, std::string(EntryPoint) + ": " +
                                              Details.Message);
  return OFFLOAD_FAIL;
}

OFFLOADIO_API int32_t __tgt_rtl_init_plugin() {
  // Device discovery problems were reported by thePlugin(); a plugin without
  // devices must still load so that libomptarget moves on quietly.
  (void)thePlugin();
  return OFFLOAD_SUCCESS;
}

OFFLOADIO_API int32_t __tgt_rtl_is_valid_binary(__tgt_device_image *Image) {
  return Image && thePlugin().isValidBinary(*Image, nullptr);
}

OFFLOADIO_API int32_t __tgt_rtl_supports_empty_images() { return 0; }

OFFLOADIO_API int32_t __tgt_rtl_number_of_devices() {
  return thePlugin().getNumDevices();
}

OFFLOADIO_API int32_t __tgt_rtl_init_device(int32_t DeviceId) {
  Error Err = thePlugin().initDevice(DeviceId);
  if (!Err)
    arrangeExitFlush();
  return reportEntryPoint(std::move(Err), DeviceId, "init_device");
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
    return reportEntryPoint(Dst.takeError(), DstId, "data_exchange");
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
  thePlugin().getInfo().setStockFlags(Flags);
}

OFFLOADIO_API void __tgt_rtl_print_device_info(int32_t DeviceId) {
  // llvm-omp-device-info may ask before the device was initialised.
  if (auto Err = thePlugin().initDevice(DeviceId)) {
    reportEntryPoint(std::move(Err), DeviceId, "print_device_info");
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
  return onGlobalDevice(GlobalId, "data_lock", [&](GenericDeviceTy &D) {
    return lockInto(D, HstPtr, Size, LockedPtr);
  });
}

Error offloadio::lockInto(GenericDeviceTy &Device, void *HstPtr, int64_t Size,
                          void **LockedPtr) {
  if (!LockedPtr)
    return makeError(ErrorCode::InvalidArgument, "null locked-pointer slot");
  auto Ptr = thePlugin().lockHostMemory(Device, HstPtr, Size);
  if (!Ptr)
    return Ptr.takeError();
  *LockedPtr = *Ptr;
  return Error::success();
}

OFFLOADIO_API int32_t __tgt_rtl_data_unlock(int32_t GlobalId, void *HstPtr) {
  return onGlobalDevice(GlobalId, "data_unlock", [&](GenericDeviceTy &D) {
    return thePlugin().unlockHostMemory(D, HstPtr);
  });
}


int32_t offloadio::flushPlugin(const char *EntryPoint) {
  // In a forked child (at its exit) flush() waits for nothing: the
  // streams' threads are the parent's.
  GenericPluginTy &Plugin = thePlugin();
  if (Plugin.getProfile().enabled())
    Plugin.getProfile().printAndReset(llvm::errs(), Plugin.getName());
  return reportEntryPoint(Plugin.flush(), -1, EntryPoint);
}

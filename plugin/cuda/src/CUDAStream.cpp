// SPDX-License-Identifier: Apache-2.0
#include "CUDAStream.h"

#include <atomic>
#include <chrono>

using namespace offloadio;
using namespace offloadio::cuda;

Expected<std::unique_ptr<CUDAEventTy>>
CUDAEventTy::create(const CUDAApiTy &Api, CUcontext Context, int32_t DeviceId) {
  if (auto Err = checkCU(Api, Api.cuCtxSetCurrent(Context), "cuCtxSetCurrent",
                         "context {0} of device {1}", Context, DeviceId))
    return std::move(Err);
  CUevent Event = nullptr;
  if (auto Err =
          checkCU(Api, Api.cuEventCreate(&Event, CU_EVENT_DISABLE_TIMING),
                  "cuEventCreate", "event for device {0}", DeviceId))
    return std::move(Err);
  return std::unique_ptr<CUDAEventTy>(
      new CUDAEventTy(Api, Context, DeviceId, Event));
}

CUDAEventTy::~CUDAEventTy() {
  // Destruction happens at device teardown only; nothing can report there.
  Api.cuCtxSetCurrent(Context);
  Api.cuEventDestroy(Event);
}

Error CUDAEventTy::synchronize() {
  if (auto Err = checkCU(Api, Api.cuCtxSetCurrent(Context), "cuCtxSetCurrent",
                         "context {0} of device {1}", Context, DeviceId))
    return Err;
  return checkCU(Api, Api.cuEventSynchronize(Event), "cuEventSynchronize",
                 "event {0} of device {1}", Event, DeviceId);
}

Expected<bool> CUDAEventTy::query() {
  if (auto Err = checkCU(Api, Api.cuCtxSetCurrent(Context), "cuCtxSetCurrent",
                         "context {0} of device {1}", Context, DeviceId))
    return std::move(Err);
  CUresult Result = Api.cuEventQuery(Event);
  if (Result == CUDA_ERROR_NOT_READY)
    return false;
  if (auto Err = checkCU(Api, Result, "cuEventQuery", "event {0} of device {1}",
                         Event, DeviceId))
    return std::move(Err);
  return true;
}

Expected<std::unique_ptr<CUDAStreamTy>>
CUDAStreamTy::create(const CUDAApiTy &Api, const CUDAHostRegistryTy &Registry,
                     CUcontext Context, int32_t DeviceId,
                     CUDAStreamOptionsTy Options) {
  if (auto Err = checkCU(Api, Api.cuCtxSetCurrent(Context), "cuCtxSetCurrent",
                         "context {0} of device {1}", Context, DeviceId))
    return std::move(Err);
  CUstream Stream = nullptr;
  if (auto Err =
          checkCU(Api, Api.cuStreamCreate(&Stream, CU_STREAM_NON_BLOCKING),
                  "cuStreamCreate", "stream for device {0}", DeviceId))
    return std::move(Err);
  std::unique_ptr<CUDAStreamTy> Result(new CUDAStreamTy(
      Api, Registry, Context, DeviceId, Stream, Options.GraphLaunches));
  if (Options.CompletionFlag)
    Result->setUpCompletionFlag();
  return std::move(Result);
}

void CUDAStreamTy::setUpCompletionFlag() {
  if (!Api.cuMemHostAlloc || !Api.cuStreamWriteValue32)
    return;
  // One cache line of mapped pinned memory per stream; the context is
  // current (create() made it so).
  void *Host = nullptr;
  if (Api.cuMemHostAlloc(&Host, 64, CU_MEMHOSTALLOC_DEVICEMAP) != CUDA_SUCCESS)
    return;
  CUdeviceptr Dev = 0;
  if (Api.cuMemHostGetDevicePointer(&Dev, Host, 0) != CUDA_SUCCESS) {
    Api.cuMemFreeHost(Host);
    return;
  }
  Flag = static_cast<volatile uint32_t *>(Host);
  *Flag = FlagValue;
  FlagDevPtr = Dev;
}

CUDAStreamTy::~CUDAStreamTy() {
  // The pool destroys streams at device teardown, after draining them; a
  // failure here could not be reported to anyone.
  Api.cuCtxSetCurrent(Context);
  Api.cuStreamDestroy(Stream);
  if (Flag)
    Api.cuMemFreeHost(const_cast<uint32_t *>(Flag));
}

Error CUDAStreamTy::activate() const {
  return checkCU(Api, Api.cuCtxSetCurrent(Context), "cuCtxSetCurrent",
                 "context {0} of device {1}", Context, DeviceId);
}

Error CUDAStreamTy::copyAsync(void *Dst, const void *Src, size_t Size,
                              CopyKindTy Kind) {
  if (auto Err = activate())
    return Err;
  // The driver refuses a copy whose host side crosses from one host
  // registration into another (see CUDAHostRegistry.h), so split there.
  // Without any registration this costs one flag test.
  bool HostSrc = Kind == CopyKindTy::HostToDevice;
  bool HostDst = Kind == CopyKindTy::DeviceToHost;
  auto *D = static_cast<char *>(Dst);
  auto *S = static_cast<const char *>(Src);
  while (Size > 0) {
    size_t Piece = HostSrc   ? Registry.contiguousBytes(S, Size)
                   : HostDst ? Registry.contiguousBytes(D, Size)
                             : Size;
    CUresult Result =
        Api.cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(D),
                          reinterpret_cast<CUdeviceptr>(S), Piece, Stream);
    if (auto Err =
            checkCU(Api, Result, "cuMemcpyAsync",
                    "{0} copy of {1} bytes from {2} to {3} on device {4}",
                    copyKindName(Kind), Piece, static_cast<const void *>(S),
                    static_cast<void *>(D), DeviceId))
      return Err;
    D += Piece;
    S += Piece;
    Size -= Piece;
  }
  return Error::success();
}

Expected<LaunchRouteTy> CUDAStreamTy::launchKernel(const CUDALaunchTy &Launch,
                                                   const char *KernelName) {
  if (auto Err = activate())
    return std::move(Err);
  return Launcher.launch(Launch, Stream, KernelName);
}

Error CUDAStreamTy::copyPeerAsync(void *Dst, CUcontext DstContext,
                                  const void *Src, size_t Size) {
  if (auto Err = activate())
    return Err;
  return checkCU(Api,
                 Api.cuMemcpyPeerAsync(
                     reinterpret_cast<CUdeviceptr>(Dst), DstContext,
                     reinterpret_cast<CUdeviceptr>(Src), Context, Size, Stream),
                 "cuMemcpyPeerAsync",
                 "{0} bytes from {1} on device {2} to {3} in context {4}", Size,
                 Src, DeviceId, Dst, DstContext);
}

Error CUDAStreamTy::recordEvent(EventTy &Event) {
  CUevent Handle = static_cast<CUDAEventTy &>(Event).getHandle();
  if (auto Err = activate())
    return Err;
  return checkCU(Api, Api.cuEventRecord(Handle, Stream), "cuEventRecord",
                 "event {0} on stream {1} of device {2}", Handle, Stream,
                 DeviceId);
}

Error CUDAStreamTy::waitEvent(EventTy &Event) {
  CUevent Handle = static_cast<CUDAEventTy &>(Event).getHandle();
  if (auto Err = activate())
    return Err;
  // Works across streams and devices; a never-recorded event is complete.
  return checkCU(Api, Api.cuStreamWaitEvent(Stream, Handle, 0),
                 "cuStreamWaitEvent",
                 "stream {0} waiting for event {1} on "
                 "device {2}",
                 Stream, Handle, DeviceId);
}

void CUDAStreamTy::runCallback(void *Opaque) {
  // Driver thread. Copy the request out and recycle the record first, so
  // the callback may enqueue further callbacks on other streams.
  auto *Record = static_cast<CallbackRecordTy *>(Opaque);
  CUDAStreamTy &Owner = *Record->Owner;
  HostCallbackTy Fn = Record->Fn;
  void *Data = Record->Data;
  {
    std::lock_guard<std::mutex> Guard(Owner.CallbackLock);
    Record->NextFree = Owner.FreeRecords;
    Owner.FreeRecords = Record;
  }
  if (Error Err = Fn(Data))
    Owner.recordCallbackError(std::move(Err));
}

void CUDAStreamTy::recordCallbackError(Error Err) {
  ErrorCode Code = ErrorCode::Internal;
  std::string Msg;
  llvm::handleAllErrors(
      std::move(Err),
      [&](const OffloadErrorTy &E) {
        Code = E.getCode();
        Msg = E.getMessage();
      },
      [&](const llvm::ErrorInfoBase &E) { Msg = E.message(); });
  std::lock_guard<std::mutex> Guard(CallbackLock);
  // The first failure is the informative one; later ones usually follow
  // from it.
  if (!CallbackError)
    CallbackError.emplace(Code, std::move(Msg));
}

Error CUDAStreamTy::takeCallbackError() {
  std::lock_guard<std::mutex> Guard(CallbackLock);
  if (!CallbackError)
    return Error::success();
  Error Err = makeError(CallbackError->first,
                        "host callback on stream {0} of device {1} failed: {2}",
                        Stream, DeviceId, CallbackError->second);
  CallbackError.reset();
  return Err;
}

Error CUDAStreamTy::hostCallback(HostCallbackTy Fn, void *Data) {
  CallbackRecordTy *Record;
  {
    std::lock_guard<std::mutex> Guard(CallbackLock);
    if (!FreeRecords) {
      Records.emplace_back();
      FreeRecords = &Records.back();
    }
    Record = FreeRecords;
    FreeRecords = Record->NextFree;
  }
  Record->Owner = this;
  Record->Fn = Fn;
  Record->Data = Data;
  Record->NextFree = nullptr;
  Error Err = activate();
  if (!Err)
    Err = checkCU(Api, Api.cuLaunchHostFunc(Stream, runCallback, Record),
                  "cuLaunchHostFunc", "callback on stream {0} of device {1}",
                  Stream, DeviceId);
  if (Err) {
    std::lock_guard<std::mutex> Guard(CallbackLock);
    Record->NextFree = FreeRecords;
    FreeRecords = Record;
  }
  return Err;
}

Error CUDAStreamTy::synchronize() {
  if (auto Err = activate())
    return llvm::joinErrors(std::move(Err), takeCallbackError());
  if (Flag && FlagUsable && waitForCompletionFlag())
    return takeCallbackError();
  // Short work (a small copy, an empty kernel) finishes within microseconds;
  // polling for that long avoids the blocking wait's wake-up latency, which
  // is larger than the work itself. Each cuStreamQuery takes over a
  // microsecond, so the clock is read only every few polls.
  auto Deadline =
      std::chrono::steady_clock::now() + std::chrono::microseconds(40);
  for (unsigned Poll = 1;; ++Poll) {
    CUresult Result = Api.cuStreamQuery(Stream);
    if (Result == CUDA_SUCCESS)
      return takeCallbackError();
    if (Result != CUDA_ERROR_NOT_READY)
      return llvm::joinErrors(
          checkCU(Api, Result, "cuStreamQuery", "stream {0} of device {1}",
                  Stream, DeviceId),
          takeCallbackError());
    if (Poll % 8 == 0 && std::chrono::steady_clock::now() >= Deadline)
      break;
  }
  Error Err =
      checkCU(Api, Api.cuStreamSynchronize(Stream), "cuStreamSynchronize",
              "stream {0} of device {1}", Stream, DeviceId);
  return llvm::joinErrors(std::move(Err), takeCallbackError());
}

Error CUDAStreamTy::flushDeviceOutputImpl() {
  if (auto Err = activate())
    return Err;
  return checkCU(Api, Api.cuStreamSynchronize(Stream), "cuStreamSynchronize",
                 "stream {0} of device {1} (device printf flush)", Stream,
                 DeviceId);
}

bool CUDAStreamTy::waitForCompletionFlag() {
  // The write comes after all earlier work of the stream and, without
  // CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER, after that work's writes to
  // host memory are visible. Work that failed never lets it happen: the
  // caller then falls back to the driver's own wait, which reports why.
  uint32_t Want = FlagValue + 1;
  if (Api.cuStreamWriteValue32(Stream, FlagDevPtr, Want, 0) !=
      CUDA_SUCCESS) {
    // A device without stream memory operations: do not try again.
    FlagUsable = false;
    return false;
  }
  FlagValue = Want;
  auto Deadline =
      std::chrono::steady_clock::now() + std::chrono::microseconds(40);
  for (unsigned Spin = 1;; ++Spin) {
    if (*Flag == Want) {
      // Reads of what the work wrote (a download's bounce buffer) come
      // after this load.
      std::atomic_thread_fence(std::memory_order_acquire);
      return true;
    }
    if (Spin % 256 == 0 && std::chrono::steady_clock::now() >= Deadline)
      return false;
  }
}

Expected<bool> CUDAStreamTy::query() {
  if (auto Err = activate())
    return llvm::joinErrors(std::move(Err), takeCallbackError());
  CUresult Result = Api.cuStreamQuery(Stream);
  if (Result == CUDA_ERROR_NOT_READY)
    return false;
  Error Err = checkCU(Api, Result, "cuStreamQuery", "stream {0} of device {1}",
                      Stream, DeviceId);
  Err = llvm::joinErrors(std::move(Err), takeCallbackError());
  if (Err)
    return std::move(Err);
  return true;
}

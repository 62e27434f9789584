// SPDX-License-Identifier: Apache-2.0
//
// Streams and events over CUstream and CUevent. Every operation is enqueued
// on the driver's stream and returns at once; host callbacks run on a driver
// thread and leave their error in the stream for the next synchronize().
#ifndef OFFLOADIO_CUDA_CUDASTREAM_H
#define OFFLOADIO_CUDA_CUDASTREAM_H

#include "CUDAApi.h"
#include "CUDAGraphLauncher.h"
#include "CUDAHostRegistry.h"

#include "offloadio/Stream.h"

#include <deque>
#include <mutex>
#include <optional>
#include <string>

namespace offloadio {
namespace cuda {

/// A CUevent created without timing (cheaper to record and wait on).
class CUDAEventTy final : public EventTy {
public:
  /// Create an event in \p Context for device \p DeviceId.
  static Expected<std::unique_ptr<CUDAEventTy>>
  create(const CUDAApiTy &Api, CUcontext Context, int32_t DeviceId);
  ~CUDAEventTy() override;

  Error synchronize() override;
  Expected<bool> query() override;

  /// The driver handle.
  CUevent getHandle() const { return Event; }

private:
  CUDAEventTy(const CUDAApiTy &Api, CUcontext Context, int32_t DeviceId,
              CUevent Event)
      : Api(Api), Context(Context), DeviceId(DeviceId), Event(Event) {}

  const CUDAApiTy &Api;
  CUcontext Context;
  int32_t DeviceId;
  CUevent Event;
};

/// A non-blocking CUstream (it never synchronises with the legacy default
/// stream, so work of other libraries on stream 0 does not serialise ours).
class CUDAStreamTy final : public StreamTy {
public:
  /// Create a stream in \p Context for device \p DeviceId. Copies consult
  /// \p Registry, which must outlive the stream. \p GraphLaunches lets
  /// kernels launched again on the stream be replayed from graphs.
  static Expected<std::unique_ptr<CUDAStreamTy>>
  create(const CUDAApiTy &Api, const CUDAHostRegistryTy &Registry,
         CUcontext Context, int32_t DeviceId, bool GraphLaunches);
  ~CUDAStreamTy() override;

  /// Any direction: with unified addressing the driver tells host from
  /// device memory by the address. A host side that spans several of the
  /// plugin's registrations is copied one registration at a time.
  Error copyAsync(void *Dst, const void *Src, size_t Size,
                  CopyKindTy Kind) override;
  Error recordEvent(EventTy &Event) override;
  Error waitEvent(EventTy &Event) override;
  Error hostCallback(HostCallbackTy Fn, void *Data) override;
  Error synchronize() override;
  Expected<bool> query() override;

  /// Enqueue a kernel launch (see CUDAGraphLauncherTy::launch).
  Expected<LaunchRouteTy> launchKernel(const CUDALaunchTy &Launch,
                                       const char *KernelName);
  /// The stream's kernel launcher (counters, the last graph failure).
  const CUDAGraphLauncherTy &getLauncher() const { return Launcher; }

  /// Copy between memory of two different contexts (peer devices).
  Error copyPeerAsync(void *Dst, CUcontext DstContext, const void *Src,
                      size_t Size);

  /// Make the stream's context current on the calling thread: threads that
  /// enter from libomptarget may have none, or another device's.
  Error activate() const;

  /// The driver handle.
  CUstream getHandle() const { return Stream; }
  /// The context the stream belongs to.
  CUcontext getContext() const { return Context; }
  /// The device number the stream belongs to (for messages).
  int32_t getDeviceId() const { return DeviceId; }

private:
  CUDAStreamTy(const CUDAApiTy &Api, const CUDAHostRegistryTy &Registry,
               CUcontext Context, int32_t DeviceId, CUstream Stream,
               bool GraphLaunches)
      : Api(Api), Registry(Registry), Context(Context), DeviceId(DeviceId),
        Stream(Stream), Launcher(Api, DeviceId, GraphLaunches) {}

  /// What a pending host callback needs; records are recycled, so a
  /// callback costs no allocation once the stream has seen as many in
  /// flight before.
  struct CallbackRecordTy {
    CUDAStreamTy *Owner = nullptr;
    HostCallbackTy Fn = nullptr;
    void *Data = nullptr;
    CallbackRecordTy *NextFree = nullptr;
  };

  /// The function the driver calls (on its own thread).
  static void runCallback(void *Record);
  /// Remember the first failure of a callback; consumes \p Err.
  void recordCallbackError(Error Err);
  /// Return and clear the remembered callback failure, if any.
  Error takeCallbackError();

  const CUDAApiTy &Api;
  const CUDAHostRegistryTy &Registry;
  CUcontext Context;
  int32_t DeviceId;
  CUstream Stream;
  /// Launches kernels on Stream; its graphs are destroyed after Stream
  /// (member order), which the driver allows.
  CUDAGraphLauncherTy Launcher;

  /// Guards the records and the callback error (driver thread vs. caller).
  std::mutex CallbackLock;
  /// Every record ever made; a deque keeps their addresses stable.
  std::deque<CallbackRecordTy> Records;
  /// Records not in flight.
  CallbackRecordTy *FreeRecords = nullptr;
  /// The first callback failure since the last synchronize()/query().
  std::optional<std::pair<ErrorCode, std::string>> CallbackError;
};

} // namespace cuda
} // namespace offloadio

#endif // OFFLOADIO_CUDA_CUDASTREAM_H

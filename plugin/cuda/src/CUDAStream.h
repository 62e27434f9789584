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

/// What a device's streams may use besides plain driver calls.
struct CUDAStreamOptionsTy {
  /// Kernels launched again on the stream are replayed from graphs
  /// (OFFLOADIO_CUDA_GRAPHS).
  bool GraphLaunches = false;
  /// synchronize() waits for a word the stream writes to host memory
  /// (OFFLOADIO_CUDA_COMPLETION_FLAG).
  bool CompletionFlag = false;
};

/// A non-blocking CUstream (it never synchronises with the legacy default
/// stream, so work of other libraries on stream 0 does not serialise ours).
class CUDAStreamTy final : public StreamTy {
public:
  /// Create a stream in \p Context for device \p DeviceId. Copies consult
  /// \p Registry, which must outlive the stream. A completion flag that
  /// cannot be allocated is done without.
  static Expected<std::unique_ptr<CUDAStreamTy>>
  create(const CUDAApiTy &Api, const CUDAHostRegistryTy &Registry,
         CUcontext Context, int32_t DeviceId, CUDAStreamOptionsTy Options);
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

protected:
  /// The driver copies device printf output to the host only inside its
  /// own synchronising calls (not in cuStreamQuery, a graph launch or our
  /// completion flag), so a complete stream is synchronised once more.
  Error flushDeviceOutputImpl() override;

private:
  CUDAStreamTy(const CUDAApiTy &Api, const CUDAHostRegistryTy &Registry,
               CUcontext Context, int32_t DeviceId, CUstream Stream,
               bool GraphLaunches)
      : Api(Api), Registry(Registry), Context(Context), DeviceId(DeviceId),
        Stream(Stream), Launcher(Api, DeviceId, GraphLaunches) {}

  /// Allocate the completion flag; on failure the stream does without.
  void setUpCompletionFlag();
  /// Wait for the work enqueued so far through the completion flag: true
  /// when it was seen, false when the caller must wait another way (the
  /// write could not be enqueued, or it did not come within the polling
  /// time, as when earlier work failed).
  bool waitForCompletionFlag();

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
  /// Pinned host word the stream writes (cuStreamWriteValue32) when the
  /// work before the write is done; polling it costs a load, where each
  /// cuStreamQuery costs over a microsecond. Null: not used.
  volatile uint32_t *Flag = nullptr;
  CUdeviceptr FlagDevPtr = 0;
  /// The value of the last write enqueued.
  uint32_t FlagValue = 0;
  /// Cleared when the driver refuses the write.
  bool FlagUsable = true;

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

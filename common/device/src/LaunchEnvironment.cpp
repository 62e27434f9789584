// SPDX-License-Identifier: Apache-2.0
//
// The launch environment of libomptarget 18's device runtime, the implicit
// first argument of a kernel launch (DeviceRuntimeABITy::
// passesLaunchEnvironment). A kernel with a teams reduction counts the teams
// that finished in it and combines their partial results in a buffer it
// points to, so each launch gets device memory of its own for both: the
// counters must start at zero, and concurrent launches of one kernel must
// not share them. The memory goes back once the launch's stream is complete,
// on the thread that finds it complete.
#include "offloadio/Device.h"

#include <cstring>

using namespace offloadio;

namespace {
/// The device runtime's KernelLaunchEnvironmentTy.
struct LaunchEnvironmentTy {
  uint32_t ReductionCnt;
  uint32_t ReductionIterCnt;
  void *ReductionBuffer;
};
static_assert(sizeof(LaunchEnvironmentTy) == 16,
              "the device runtime reads 16 bytes");
} // namespace

/// The device memory of one launch's environment, released when the
/// launch's stream is complete (StreamTy::releaseWhenComplete).
struct GenericDeviceTy::LaunchMemoryTy {
  GenericDeviceTy &Device;
  void *Environment = nullptr;
  void *ReductionBuffer = nullptr;
};

Expected<void *>
GenericDeviceTy::prepareLaunchEnvironment(const KernelConfigTy &Config,
                                          StreamTy &Stream) {
  if (!Config.needsReductionBuffer())
    return launchEnvironmentSentinel();
  size_t BufferSize =
      size_t(Config.ReductionDataSize) * Config.ReductionBufferLength;
  auto Launch = std::make_unique<LaunchMemoryTy>(LaunchMemoryTy{*this});
  auto Env = allocateLaunchMemory(sizeof(LaunchEnvironmentTy));
  if (!Env)
    return Env.takeError();
  Launch->Environment = *Env;
  auto Buffer = allocateLaunchMemory(BufferSize);
  if (!Buffer) {
    llvm::consumeError(releaseLaunchMemory(Launch.release()));
    return Buffer.takeError();
  }
  Launch->ReductionBuffer = *Buffer;
  // From here on the stream's owner frees both, whatever happens to the
  // upload or the launch: work already queued may read them.
  void *EnvPtr = Launch->Environment;
  Stream.releaseWhenComplete(releaseLaunchMemory, Launch.release());

  LaunchEnvironmentTy Host = {0, 0, *Buffer};
  Services.Info.print(InfoDataTransfer, DeviceId,
                      "launch environment of {0} bytes at {1}, reduction "
                      "buffer of {2} x {3} bytes at {4}",
                      sizeof(Host), EnvPtr, Config.ReductionDataSize,
                      Config.ReductionBufferLength, *Buffer);
  // The upload takes the data at enqueue (captured by the backend or
  // staged), so the launch never waits for the stream; locking the few
  // bytes for the copy (OFFLOADIO_PAGEABLE_PATH=lock) would.
  CopyRouteTy Route = Policy.route(/*Locked=*/false, sizeof(Host));
  if (Route == CopyRouteTy::LockForCopy)
    Route = CopyRouteTy::Staged;
  if (auto Err = submitUnlockedBy(Route, static_cast<char *>(EnvPtr),
                                  reinterpret_cast<const char *>(&Host),
                                  sizeof(Host), Stream))
    return std::move(Err);
  return EnvPtr;
}

Expected<void *> GenericDeviceTy::allocateLaunchMemory(size_t Size) {
  // Small pieces come from the small-allocation cache, as the program's do:
  // a launch then costs no vendor allocation.
  Expected<void *> Ptr = MemoryManager && MemoryManager->handles(Size)
                             ? MemoryManager->allocate(Size)
                             : allocateMemory(Size, AllocKindTy::Device);
  if (!Ptr)
    return makeError(ErrorCode::OutOfResources,
                     "cannot allocate {0} bytes of device memory for a "
                     "kernel's launch environment on device {1}: {2}",
                     Size, DeviceId, takeErrorMessage(Ptr.takeError()));
  return Ptr;
}

Error GenericDeviceTy::freeLaunchMemory(void *Ptr) {
  if (MemoryManager) {
    auto Cached = MemoryManager->free(Ptr);
    if (!Cached)
      return Cached.takeError();
    if (*Cached)
      return Error::success();
  }
  return freeMemory(Ptr);
}

Error GenericDeviceTy::releaseLaunchMemory(void *Data) {
  std::unique_ptr<LaunchMemoryTy> Launch(static_cast<LaunchMemoryTy *>(Data));
  Error Err = Error::success();
  for (void *Ptr : {Launch->ReductionBuffer, Launch->Environment})
    if (Ptr)
      if (auto FreeErr = Launch->Device.freeLaunchMemory(Ptr))
        Err = llvm::joinErrors(std::move(Err), std::move(FreeErr));
  return Err;
}

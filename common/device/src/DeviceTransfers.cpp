// SPDX-License-Identifier: Apache-2.0
//
// Host <-> device copies. Every copy consults the plugin's map of locked
// regions and asks the device's TransferPolicyTy for each piece's route:
// locked pieces go straight to the DMA engine; the rest is handed to a
// backend that captures it at enqueue, staged through pooled pinned buffers
// (the data is captured before the call returns, so the caller may reuse its
// buffer at once, as libomptarget does with firstprivate data), with the
// copy threads sharing the host side of large ones, or, when the program
// asks for it (OFFLOADIO_PAGEABLE_PATH=lock), locked for the copy and
// waited for.
#include "offloadio/Device.h"

#include <atomic>
#include <cstring>
#include <mutex>
#include <optional>

using namespace offloadio;

/// Walk [HstPtr, HstPtr+Size) as locked and unlocked pieces.
template <typename FnTy>
static Error forEachSegment(const PinnedMemoryMapTy &Map, const char *HstPtr,
                            size_t Size, FnTy Fn) {
  PinnedSegmentTy Segs[8];
  size_t Done = 0;
  while (Done < Size) {
    size_t N = Map.segments(HstPtr + Done, Size - Done, Segs, 8);
    if (N == 0)
      return makeError(ErrorCode::Internal,
                       "pinned map returned no segment for {0} bytes at {1}",
                       Size - Done, HstPtr + Done);
    for (size_t I = 0; I < N; ++I) {
      if (auto Err = Fn(Segs[I], size_t(Segs[I].HstPtr - HstPtr)))
        return Err;
      Done += Segs[I].Size;
    }
  }
  return Error::success();
}

Error GenericDeviceTy::submitHostToDevice(void *TgtPtr, const void *HstPtr,
                                          size_t Size,
                                          AsyncInfoWrapperTy &Wrapper) {
  auto Stream = Wrapper.getStream();
  if (!Stream)
    return Stream.takeError();
  auto *Tgt = static_cast<char *>(TgtPtr);
  return forEachSegment(
      Services.PinnedMap, static_cast<const char *>(HstPtr), Size,
      [&](const PinnedSegmentTy &Seg, size_t Offset) -> Error {
        if (Policy.route(/*Locked=*/Seg.DevAccessiblePtr != nullptr,
                         Seg.Size) != CopyRouteTy::PinnedDMA)
          return submitUnlocked(Tgt + Offset, Seg.HstPtr, Seg.Size, *Stream);
        countTransfer(TransferPathTy::PinnedToDevice, Seg.Size);
        return Stream->copyAsync(Tgt + Offset, Seg.DevAccessiblePtr, Seg.Size,
                                 CopyKindTy::HostToDevice);
      });
}

Error GenericDeviceTy::retrieveDeviceToHost(void *HstPtr, const void *TgtPtr,
                                            size_t Size,
                                            AsyncInfoWrapperTy &Wrapper) {
  auto Stream = Wrapper.getStream();
  if (!Stream)
    return Stream.takeError();
  auto *Tgt = static_cast<const char *>(TgtPtr);
  auto *Hst = static_cast<char *>(HstPtr);
  return forEachSegment(
      Services.PinnedMap, Hst, Size,
      [&](const PinnedSegmentTy &Seg, size_t Offset) -> Error {
        if (Policy.route(/*Locked=*/Seg.DevAccessiblePtr != nullptr,
                         Seg.Size) != CopyRouteTy::PinnedDMA)
          return retrieveUnlocked(Hst + Offset, Tgt + Offset, Seg.Size,
                                  *Stream);
        countTransfer(TransferPathTy::PinnedFromDevice, Seg.Size);
        return Stream->copyAsync(Seg.DevAccessiblePtr, Tgt + Offset, Seg.Size,
                                 CopyKindTy::DeviceToHost);
      });
}

/// Collects the first error of parallel chunk tasks.
namespace {
class FirstErrorTy {
public:
  void add(Error Err) {
    if (!Err)
      return;
    std::lock_guard<std::mutex> Guard(Lock);
    if (Failed) {
      llvm::consumeError(std::move(Err));
      return;
    }
    Failed = true;
    Details = takeErrorDetails(std::move(Err));
  }
  Error take() {
    if (!Failed)
      return Error::success();
    if (Details.Errno)
      return makeErrnoError(Details.Errno, "{0}", Details.Message);
    return makeError(Details.Code, "{0}", Details.Message);
  }

private:
  std::mutex Lock;
  bool Failed = false;
  ErrorDetailsTy Details;
};
} // namespace

Error GenericDeviceTy::submitUnlockedBy(CopyRouteTy Route, char *TgtPtr,
                                        const char *HstPtr, size_t Size,
                                        StreamTy &Stream) {
  if (Route == CopyRouteTy::LockForCopy) {
    // Locking does not capture the data, so the copy must be complete
    // before we return and the caller may touch its buffer again.
    auto Dev = Services.Pinning.pinHostMemory(const_cast<char *>(HstPtr), Size);
    if (!Dev)
      return Dev.takeError();
    countTransfer(TransferPathTy::LockedToDevice, Size);
    Error Err = Stream.copyAsync(TgtPtr, *Dev, Size, CopyKindTy::HostToDevice);
    Err = llvm::joinErrors(std::move(Err), Stream.synchronize());
    return llvm::joinErrors(std::move(Err),
                            Services.Pinning.unpinHostMemory(
                                const_cast<char *>(HstPtr), *Dev, Size));
  }
  if (Route == CopyRouteTy::BackendCaptures) {
    countTransfer(TransferPathTy::PageableToDevice, Size);
    return Stream.copyAsync(TgtPtr, HstPtr, Size, CopyKindTy::HostToDevice);
  }
  // Staged: each chunk is copied into a bounce buffer (so the caller may
  // reuse its memory on return), then DMAed; the buffer returns to the pool
  // with the event recorded behind its copy (StagingPoolTy::releaseAfter),
  // so nothing stalls the stream between two chunks. Large copies share the
  // memcpy side among the copy threads; enqueueing stays serial because not
  // every backend's stream takes concurrent enqueues.
  StagingPoolTy &Pool = *Staging;
  size_t BufferSize = Pool.getBufferSize();
  size_t Chunks = (Size + BufferSize - 1) / BufferSize;
  std::mutex EnqueueLock;
  FirstErrorTy Errors;
  TimeProfileTy &Profile = Services.Profile;
  auto Chunk = [&](size_t I) {
    size_t Offset = I * BufferSize, Len = std::min(BufferSize, Size - Offset);
    auto Buffer = [&] {
      TimeProfileTy::ScopeTy Timed(Profile, ProfileStage::UploadBufferWait);
      return Pool.acquire();
    }();
    if (!Buffer)
      return Errors.add(Buffer.takeError());
    {
      TimeProfileTy::ScopeTy Timed(Profile, ProfileStage::UploadMemcpy);
      std::memcpy((*Buffer)->Ptr, HstPtr + Offset, Len);
    }
    auto Done = leaseEvent();
    if (!Done) {
      Pool.release(*Buffer);
      return Errors.add(Done.takeError());
    }
    std::lock_guard<std::mutex> Guard(EnqueueLock);
    if (auto Err = Stream.copyAsync(TgtPtr + Offset, (*Buffer)->Ptr, Len,
                                    CopyKindTy::HostToDevice)) {
      Pool.release(*Buffer);
      return Errors.add(std::move(Err));
    }
    if (auto Err = Stream.recordEvent(**Done)) {
      // Nothing would say when the copy is done reading the buffer: wait
      // for the stream before the buffer goes back.
      Errors.add(std::move(Err));
      Errors.add(Stream.synchronize());
      Pool.release(*Buffer);
      return;
    }
    Pool.releaseAfter(*Buffer, std::move(*Done));
    countTransfer(TransferPathTy::PageableToDevice, Len);
  };
  if (Route == CopyRouteTy::StagedParallel)
    Services.CopyThreads.run(unsigned(DeviceId), Chunks, Chunk,
                             &HostPlacement);
  else
    for (size_t I = 0; I < Chunks; ++I)
      Chunk(I);
  return Errors.take();
}

Error GenericDeviceTy::retrieveUnlocked(char *HstPtr, const char *TgtPtr,
                                        size_t Size, StreamTy &Stream) {
  CopyRouteTy Route = Policy.route(/*Locked=*/false, Size);
  if (Route == CopyRouteTy::LockForCopy) {
    auto Dev = Services.Pinning.pinHostMemory(HstPtr, Size);
    if (!Dev)
      return Dev.takeError();
    countTransfer(TransferPathTy::LockedFromDevice, Size);
    Error Err = Stream.copyAsync(*Dev, TgtPtr, Size, CopyKindTy::DeviceToHost);
    Err = llvm::joinErrors(std::move(Err), Stream.synchronize());
    return llvm::joinErrors(
        std::move(Err), Services.Pinning.unpinHostMemory(HstPtr, *Dev, Size));
  }
  StagingPoolTy &Pool = *Staging;
  size_t BufferSize = Pool.getBufferSize();
  size_t Chunks = (Size + BufferSize - 1) / BufferSize;
  if (Route == CopyRouteTy::BackendCaptures) {
    countTransfer(TransferPathTy::PageableFromDevice, Size);
    // A DMA into a pinned bounce buffer finishes sooner than the driver's
    // own pageable download, which stages internally. The bytes are copied
    // out by whoever finds the stream complete (libomptarget reads a
    // download only after synchronize or a completed query_async), or, once
    // an event is recorded behind the download, by a host callback on the
    // stream before the event (GenericDeviceTy::recordEvent): other threads
    // order their work on such events. Without a free buffer (never waited
    // for: see SmallDownloads) the driver copies. A buffer that cannot be
    // allocated only costs the speed-up.
    auto Buffer = SmallDownloads->tryAcquire();
    if (!Buffer)
      llvm::consumeError(Buffer.takeError());
    if (!Buffer || !*Buffer)
      return Stream.copyAsync(HstPtr, TgtPtr, Size, CopyKindTy::DeviceToHost);
    (*Buffer)->CopyOutDst = HstPtr;
    (*Buffer)->CopyOutSize = Size;
    if (auto Err = Stream.copyAsync((*Buffer)->Ptr, TgtPtr, Size,
                                    CopyKindTy::DeviceToHost)) {
      SmallDownloads->release(*Buffer);
      return Err;
    }
    Stream.deferUntilComplete(StagingPoolTy::copyOutCallback,
                              StagingPoolTy::releaseCallback, *Buffer);
    return Error::success();
  }
  if (Route == CopyRouteTy::Staged) {
    // Small: the copy into the bounce buffer and the copy out of it both
    // run on the stream, so the call stays asynchronous.
    for (size_t I = 0; I < Chunks; ++I) {
      size_t Offset = I * BufferSize, Len = std::min(BufferSize, Size - Offset);
      auto Buffer = Pool.acquire();
      if (!Buffer)
        return Buffer.takeError();
      (*Buffer)->CopyOutDst = HstPtr + Offset;
      (*Buffer)->CopyOutSize = Len;
      if (auto Err = Stream.copyAsync((*Buffer)->Ptr, TgtPtr + Offset, Len,
                                      CopyKindTy::DeviceToHost)) {
        Pool.release(*Buffer);
        return Err;
      }
      if (auto Err =
              Stream.hostCallback(StagingPoolTy::copyOutCallback, *Buffer))
        return Err;
      countTransfer(TransferPathTy::PageableFromDevice, Len);
    }
    return Error::success();
  }
  // Large: chunks are DMAed into bounce buffers and copied out by the copy
  // threads in parallel as each lands; the call returns when all are out.
  // Each thread keeps its next chunk's DMA queued while it copies one out,
  // so the DMA engine never waits for a thread to come back, and no thread
  // waits for a DMA it could have queued earlier. It holds that second
  // buffer only if one is free at once (tryAcquire): a thread that holds a
  // buffer must not wait for another (StagingPool.h).
  struct LandingTy {
    size_t Offset = 0, Len = 0;
    StagingBufferTy *Buffer = nullptr;
    PoolLeaseTy<EventTy> Done;
  };
  std::mutex EnqueueLock;
  std::atomic<size_t> NextChunk{0};
  FirstErrorTy Errors;
  // Queue chunk I into \p Buffer; the buffer goes back on failure.
  auto Queue = [&](size_t I, StagingBufferTy *Buffer,
                   std::optional<LandingTy> &Out) {
    size_t Offset = I * BufferSize, Len = std::min(BufferSize, Size - Offset);
    auto Event = leaseEvent();
    if (!Event) {
      Pool.release(Buffer);
      return Errors.add(Event.takeError());
    }
    std::lock_guard<std::mutex> Guard(EnqueueLock);
    Error Err = Stream.copyAsync(Buffer->Ptr, TgtPtr + Offset, Len,
                                 CopyKindTy::DeviceToHost);
    if (!Err)
      Err = Stream.recordEvent(**Event);
    if (Err) {
      // The DMA may be queued without an event to say when it lands: wait
      // for the stream before the buffer goes back.
      Errors.add(std::move(Err));
      Errors.add(Stream.synchronize());
      Pool.release(Buffer);
      return;
    }
    Out = LandingTy{Offset, Len, Buffer, std::move(*Event)};
  };
  // Wait for \p L's DMA, copy it out and give its buffer back.
  TimeProfileTy &Profile = Services.Profile;
  auto Land = [&](LandingTy &L) {
    Error Err = [&] {
      TimeProfileTy::ScopeTy Timed(Profile, ProfileStage::DownloadDmaWait);
      return L.Done->synchronize();
    }();
    if (!Err) {
      TimeProfileTy::ScopeTy Timed(Profile, ProfileStage::DownloadMemcpy);
      std::memcpy(HstPtr + L.Offset, L.Buffer->Ptr, L.Len);
      countTransfer(TransferPathTy::PageableFromDevice, L.Len);
    }
    L.Done.reset();
    Pool.release(L.Buffer);
    Errors.add(std::move(Err));
  };
  // Each copier keeps to this copy until its chunks run out: as many as
  // this device's even share of the helpers, and the caller, so that
  // copies to other devices at the same time find theirs.
  size_t Copiers =
      std::min<size_t>(Chunks, Services.CopyThreads.threadsPerUser() + 1);
  Services.CopyThreads.run(unsigned(DeviceId), Copiers, [&](size_t) {
    std::optional<LandingTy> Landing;
    for (;;) {
      std::optional<LandingTy> Next;
      size_t I = NextChunk.fetch_add(1, std::memory_order_relaxed);
      if (I < Chunks) {
        // With a DMA of ours in flight, take a free buffer or none.
        Expected<StagingBufferTy *> Buffer =
            Landing ? Pool.tryAcquire() : Pool.acquire();
        if (!Buffer) {
          Errors.add(Buffer.takeError());
        } else if (!*Buffer) {
          // None free: land ours first, then wait like everyone else.
          Land(*Landing);
          Landing.reset();
          Buffer = Pool.acquire();
          if (!Buffer)
            Errors.add(Buffer.takeError());
        }
        if (Buffer && *Buffer)
          Queue(I, *Buffer, Next);
      }
      if (Landing)
        Land(*Landing);
      if (I >= Chunks)
        return;
      Landing = std::move(Next);
    }
  }, &HostPlacement);
  return Errors.take();
}

Error GenericDeviceTy::dataSubmit(void *TgtPtr, const void *HstPtr,
                                  int64_t Size, __tgt_async_info *AsyncInfo) {
  if (auto Err = checkTransferArgs("submit", TgtPtr, HstPtr, Size))
    return Err;
  if (Size == 0)
    return Error::success();
  Services.Info.print(InfoDataTransfer, DeviceId,
                      "submit {0} bytes host {1} -> device {2}", Size, HstPtr,
                      TgtPtr);
  AsyncInfoWrapperTy Wrapper(*this, AsyncInfo);
  return Wrapper.finalize(
      submitHostToDevice(TgtPtr, HstPtr, size_t(Size), Wrapper));
}

Error GenericDeviceTy::dataRetrieve(void *HstPtr, const void *TgtPtr,
                                    int64_t Size, __tgt_async_info *AsyncInfo) {
  if (auto Err = checkTransferArgs("retrieve", HstPtr, TgtPtr, Size))
    return Err;
  if (Size == 0)
    return Error::success();
  Services.Info.print(InfoDataTransfer, DeviceId,
                      "retrieve {0} bytes device {1} -> host {2}", Size, TgtPtr,
                      HstPtr);
  AsyncInfoWrapperTy Wrapper(*this, AsyncInfo);
  return Wrapper.finalize(
      retrieveDeviceToHost(HstPtr, TgtPtr, size_t(Size), Wrapper));
}


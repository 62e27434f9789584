// SPDX-License-Identifier: Apache-2.0
//
// The staged path: between the file and a worker's pinned buffers by
// pread/pwrite, between those and the device by async copies on the
// worker's stream. A read waits for the device only when the ring wraps
// onto a buffer still in flight; a write waits for the copy into its
// buffer, which pwrite needs.
#include "offloadio/Profile.h"
#include "offloadio/io/IOChunkIO.h"
#include "offloadio/io/IOPathBackend.h"
#include "offloadio/io/IORequest.h"
#include "offloadio/io/IOWorker.h"

#include <algorithm>

using namespace offloadio;

namespace {

class IOStagedPathTy final : public IOPathBackendTy {
public:
  IOStagedPathTy(SysTy &Sys, IOStatsTy &Stats) : Sys(Sys), Stats(Stats) {}

  IOPathTy path() const override { return IOPathTy::Staged; }

  bool available(std::string &) const override { return true; }

  int score(const IOPathQueryTy &, std::string &) override {
    // Lowest: it serves every request, with a copy more than the others.
    constexpr int Always = 10;
    return Always;
  }

  bool runChunk(IORequestTy &R, size_t I, IOWorkerStagingTy &W) override {
    size_t Len = R.chunkLength(I);
    char *Dev = R.devPtr() + R.chunkOffset(I);
    off_t FileOffset = R.offset() + off_t(R.chunkOffset(I));
    if (auto Err = W.prepare(R.chunkSize(), I))
      return fail(R, I, std::move(Err));
    auto Slot = W.ring().next();
    if (!Slot)
      return fail(R, I, Slot.takeError());
    char *Buffer = static_cast<char *>((*Slot)->Buffer);
    StreamTy &Stream = W.stream();
    if (R.isGathered())
      return runGathered(R, **Slot, Stream);
    TimeProfileTy *Profile = W.profile();
    if (!R.isWrite()) {
      auto N = [&] {
        TimeProfileTy::ScopeTy Timed(Profile, ProfileStage::FilePread);
        return readChunk(Sys, R, I, Buffer, Len, FileOffset);
      }();
      if (!N)
        return fail(R, I, N.takeError());
      if (*N) {
        TimeProfileTy::ScopeTy Timed(Profile, ProfileStage::FileEnqueue);
        if (auto Err = Stream.copyAsync(Dev, Buffer, *N,
                                        CopyKindTy::HostToDevice))
          return failInFlight(R, I, Stream, std::move(Err));
        if (auto Err = Stream.recordEvent(*(*Slot)->Event))
          return failInFlight(R, I, Stream, std::move(Err));
        (*Slot)->InFlight = true;
      }
      R.recordChunk(I, *N);
      countBytes(Stats, R, path(), *N);
      return true;
    }
    // Write: the device data must be in the buffer before pwrite.
    if (auto Err = Stream.copyAsync(Buffer, Dev, Len, CopyKindTy::DeviceToHost))
      return fail(R, I, std::move(Err));
    if (auto Err = Stream.recordEvent(*(*Slot)->Event))
      return fail(R, I, std::move(Err));
    {
      TimeProfileTy::ScopeTy Timed(Profile, ProfileStage::FileDmaWait);
      if (auto Err = (*Slot)->Event->synchronize())
        return fail(R, I, std::move(Err));
    }
    TimeProfileTy::ScopeTy Timed(Profile, ProfileStage::FilePwrite);
    countBytes(Stats, R, path(), writeChunk(Sys, R, I, Buffer, Len, FileOffset));
    return true;
  }

private:
  /// The one chunk of a gathered request: one pread into the buffer, then
  /// a copy to each segment; a write the reverse.
  bool runGathered(IORequestTy &R, IOStagingSlotTy &Slot, StreamTy &Stream) {
    char *Buffer = static_cast<char *>(Slot.Buffer);
    const auto &Segments = R.segments();
    if (!R.isWrite()) {
      // The bytes read before an error are good: they reach their
      // segments, whose operations succeed.
      size_t N = readGatheredChunk(Sys, R, Buffer);
      size_t At = 0;
      for (size_t S = 0; S < Segments.size() && At < N; At += Segments[S++].Len)
        if (auto Err = Stream.copyAsync(Segments[S].DevPtr, Buffer + At,
                                        std::min(Segments[S].Len, N - At),
                                        CopyKindTy::HostToDevice))
          return failInFlight(R, 0, Stream, std::move(Err));
      if (N) {
        if (auto Err = Stream.recordEvent(*Slot.Event))
          return failInFlight(R, 0, Stream, std::move(Err));
        Slot.InFlight = true;
      }
      countBytes(Stats, R, path(), N);
      return true;
    }
    size_t At = 0;
    for (const IOSegmentTy &S : Segments) {
      if (auto Err = Stream.copyAsync(Buffer + At, S.DevPtr, S.Len,
                                      CopyKindTy::DeviceToHost))
        return fail(R, 0, std::move(Err));
      At += S.Len;
    }
    if (auto Err = Stream.recordEvent(*Slot.Event))
      return fail(R, 0, std::move(Err));
    if (auto Err = Slot.Event->synchronize())
      return fail(R, 0, std::move(Err));
    countBytes(Stats, R, path(), writeGatheredChunk(Sys, R, Buffer));
    return true;
  }

  static bool fail(IORequestTy &R, size_t I, Error Err) {
    R.recordError(I, std::move(Err));
    return true;
  }
  /// fail(), once the copies already queued out of the buffer have run:
  /// the buffer is not marked in flight, and the next chunk reads into it.
  static bool failInFlight(IORequestTy &R, size_t I, StreamTy &Stream,
                           Error Err) {
    llvm::consumeError(Stream.synchronize());
    return fail(R, I, std::move(Err));
  }

  SysTy &Sys;
  IOStatsTy &Stats;
};

} // namespace

std::unique_ptr<IOPathBackendTy> offloadio::makeStagedPath(SysTy &Sys,
                                                           IOStatsTy &Stats) {
  return std::make_unique<IOStagedPathTy>(Sys, Stats);
}

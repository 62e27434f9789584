// SPDX-License-Identifier: Apache-2.0
//
// The staged path: between the file and a worker's pinned buffers by
// pread/pwrite, between those and the device by async copies on the
// worker's stream. A read waits for the device only when the ring wraps
// onto a buffer still in flight; a write waits for the copy into its
// buffer, which pwrite needs. A chunk larger than the buffer the ring has
// (the pinned budget could not give more) moves in pieces of the buffer.
#include "offloadio/Profile.h"
#include "offloadio/io/IOChunkIO.h"
#include "offloadio/io/IOPathBackend.h"
#include "offloadio/io/IORequest.h"
#include "offloadio/io/IOWorker.h"

#include "llvm/ADT/ArrayRef.h"

#include <algorithm>

using namespace offloadio;

namespace {

class IOStagedPathTy final : public IOPathBackendTy {
public:
  IOStagedPathTy(SysTy &Sys, IOStatsTy &Stats) : Sys(Sys), Stats(Stats) {}

  IOPathTy path() const override { return IOPathTy::Staged; }

  bool available(std::string &) const override { return true; }

  int score(const IOPathQueryTy &, std::string *) override {
    // Lowest: it serves every request, with a copy more than the others.
    constexpr int Always = 10;
    return Always;
  }

  bool runChunk(IORequestTy &R, size_t I, IOWorkerStagingTy &W) override {
    if (auto Err = W.prepare(I)) {
      R.recordError(I, std::move(Err));
      return true;
    }
    // Where the chunk's bytes live on the device: one range, or the
    // segments of a gathered request (its one chunk).
    IOSegmentTy Whole{R.devPtr() + R.chunkOffset(I), R.chunkLength(I)};
    llvm::ArrayRef<IOSegmentTy> Device =
        R.isGathered() ? llvm::ArrayRef<IOSegmentTy>(R.segments())
                       : llvm::ArrayRef<IOSegmentTy>(Whole);
    // Buffers as large as the request's chunks, or as the request if it is
    // smaller; a chunk larger than the buffer the ring could get moves in
    // pieces of it.
    size_t Want = std::min(R.chunkSize(), R.count());
    ChunkTy C{R, I, W, Device, R.offset() + off_t(R.chunkOffset(I))};
    size_t Len = R.chunkLength(I), Done = 0;
    Error Err = Error::success();
    while (Done < Len) {
      auto Slot = W.ring().next(Want);
      if (!Slot) {
        Err = llvm::joinErrors(std::move(Err), Slot.takeError());
        break;
      }
      size_t Piece = std::min(Len - Done, (*Slot)->Size);
      size_t Moved = R.isWrite() ? writePiece(C, **Slot, Done, Piece, Err)
                                 : readPiece(C, **Slot, Done, Piece, Err);
      Done += Moved;
      // The end of file, or an error.
      if (Moved < Piece)
        break;
    }
    R.recordChunk(I, Done);
    if (Err)
      R.recordError(I, std::move(Err), Done);
    countBytes(Stats, R, path(), Done);
    return true;
  }

private:
  /// The chunk being moved.
  struct ChunkTy {
    IORequestTy &R;
    size_t Index;
    IOWorkerStagingTy &W;
    llvm::ArrayRef<IOSegmentTy> Device;
    off_t FileOffset;
  };

  /// Queue the copies of bytes [\p From, \p From + \p N) of chunk \p C
  /// between \p Buffer, which holds them from its start, and the device.
  static Error copy(const ChunkTy &C, char *Buffer, size_t From, size_t N) {
    bool Read = !C.R.isWrite();
    size_t At = 0; // Where a segment starts in the chunk.
    for (const IOSegmentTy &S : C.Device) {
      size_t Lo = std::max(At, From), Hi = std::min(At + S.Len, From + N);
      if (Lo < Hi) {
        char *Dev = S.DevPtr + (Lo - At), *Host = Buffer + (Lo - From);
        if (auto Err = Read ? C.W.stream().copyAsync(Dev, Host, Hi - Lo,
                                                     CopyKindTy::HostToDevice)
                            : C.W.stream().copyAsync(Host, Dev, Hi - Lo,
                                                     CopyKindTy::DeviceToHost))
          return Err;
      }
      At += S.Len;
      if (At >= From + N)
        break;
    }
    return Error::success();
  }

  /// Read \p Len bytes of the chunk from its byte \p From into \p Slot and
  /// queue their copies to the device. Returns the bytes read, fewer at end
  /// of file; on failure \p Err gets the error, and the bytes read before
  /// it, which are good, still reach the device.
  size_t readPiece(const ChunkTy &C, IOStagingSlotTy &Slot, size_t From,
                   size_t Len, Error &Err) {
    char *Buffer = static_cast<char *>(Slot.Buffer);
    size_t N = 0;
    {
      TimeProfileTy::ScopeTy Timed(C.W.profile(), ProfileStage::FilePread);
      auto Read = readChunk(Sys, C.R, C.Index, Buffer, Len,
                            C.FileOffset + off_t(From), &N);
      if (Read)
        N = *Read;
      else
        Err = llvm::joinErrors(std::move(Err), Read.takeError());
    }
    if (!N)
      return 0;
    TimeProfileTy::ScopeTy Timed(C.W.profile(), ProfileStage::FileEnqueue);
    Error Queued = copy(C, Buffer, From, N);
    if (!Queued)
      Queued = C.W.stream().recordEvent(*Slot.Event);
    if (Queued) {
      // Nothing says when the copies queued so far are done with the
      // buffer: wait for them, and the next piece reads into it again.
      // A read error before is the earlier one and stays the chunk's.
      llvm::consumeError(C.W.stream().synchronize());
      if (Err)
        llvm::consumeError(std::move(Queued));
      else
        Err = std::move(Queued);
      return 0;
    }
    Slot.InFlight = true;
    return N;
  }

  /// Copy \p Len bytes of the chunk from its byte \p From into \p Slot and
  /// write them to the file, which needs them there first. Returns the
  /// bytes written; on failure \p Err gets the error.
  size_t writePiece(const ChunkTy &C, IOStagingSlotTy &Slot, size_t From,
                    size_t Len, Error &Err) {
    char *Buffer = static_cast<char *>(Slot.Buffer);
    Error Failed = copy(C, Buffer, From, Len);
    if (!Failed)
      Failed = C.W.stream().recordEvent(*Slot.Event);
    if (!Failed) {
      TimeProfileTy::ScopeTy Timed(C.W.profile(), ProfileStage::FileDmaWait);
      Failed = Slot.Event->synchronize();
    }
    size_t Written = 0;
    if (!Failed) {
      TimeProfileTy::ScopeTy Timed(C.W.profile(), ProfileStage::FilePwrite);
      Failed = writeChunkPart(Sys, C.R, C.Index, Buffer, Len,
                              C.FileOffset + off_t(From), Written);
    }
    Err = llvm::joinErrors(std::move(Err), std::move(Failed));
    return Written;
  }

  SysTy &Sys;
  IOStatsTy &Stats;
};

} // namespace

std::unique_ptr<IOPathBackendTy> offloadio::makeStagedPath(SysTy &Sys,
                                                           IOStatsTy &Stats) {
  return std::make_unique<IOStagedPathTy>(Sys, Stats);
}

// SPDX-License-Identifier: Apache-2.0
//
// One read or write of the file engine in flight: its arguments, its
// descriptors, its chunks, and the results its workers record. A request of
// a batch may gather several small operations of one file whose ranges
// touch: one chunk, scattered over the operations' device buffers.
#ifndef OFFLOADIO_IO_IOREQUEST_H
#define OFFLOADIO_IO_IOREQUEST_H

#include "offloadio/Error.h"
#include "offloadio/io/IOBusyMemory.h"
#include "offloadio/io/IOConfig.h"
#include "offloadio/io/IODirectPolicy.h"
#include "offloadio/io/IOSlot.h"
#include "llvm/ADT/SmallVector.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace offloadio {

/// One device buffer of a gathered request, in file order.
struct IOSegmentTy {
  char *DevPtr; ///< The operation's buffer.
  size_t Len;   ///< Its bytes; the segments' file ranges follow each other.
};

/// One read or write in flight.
class IORequestTy {
public:
  /// Direction.
  enum OpTy { Read, Write };

  /// \p Fd is our duplicate of the caller's descriptor; the request owns it.
  /// \p Append: a write to an O_APPEND descriptor.
  IORequestTy(OpTy Op, int Fd, char *DevPtr, size_t Count, off_t Offset,
              IOPathTy Path, size_t ChunkSize, bool Append = false);
  /// Waits for the workers if the request is still in flight.
  ~IORequestTy();
  IORequestTy(const IORequestTy &) = delete;
  IORequestTy &operator=(const IORequestTy &) = delete;

  /// 1 done, 0 pending; errors surface in wait().
  bool isDone() const;
  /// Block until done; the bytes transferred or the error.
  Expected<size_t> wait() { return waitRange(0, Count); }
  /// Block until done; the result of the bytes [\p Begin, \p Begin +
  /// \p Len) of the request as if they had been a pread or pwrite of their
  /// own: bytes up to the first short chunk, an error at or before their
  /// last byte is their error (a write stopped by the file size limit
  /// returns what it wrote, as pwrite(2)). Errors after them leave them
  /// intact.
  Expected<size_t> waitRange(size_t Begin, size_t Len);

  /// A one-shot completion notification: Fn(Arg).
  struct NotificationTy {
    void (*Fn)(void *) = nullptr;
    void *Arg = nullptr;
  };
  /// Run \p Done once the request is done: by the worker that finishes its
  /// last chunk, as the last thing the engine does with the request, or at
  /// once, in this thread, when it is done already (a request of no chunks
  /// is done from the start). From then on the request belongs to \p Done,
  /// which may wait for it and destroy it; no one else may. EINVAL when a
  /// notification is registered already or \p Done has no function.
  Error notifyWhenDone(NotificationTy Done);

  /// \name Set up by the engine before the request is queued.
  /// @{
  /// Take the O_DIRECT decision: descriptors, alignment, chunk layout.
  void applyDirect(IODirectSetupTy Setup);
  /// Hold \p Slot until the request is destroyed.
  void holdSlot(IOSlotTy Slot) { this->Slot = std::move(Slot); }
  /// Keep a buffer marked busy until the last chunk finished.
  void holdBusyMark(IOBusyMarkTy Mark) {
    BusyMarks.push_back(std::move(Mark));
  }
  /// The descriptors belong to a batch that outlives the request: it does
  /// not close them.
  void borrowDescriptors() { OwnsDescriptors = false; }
  /// Scatter the request over \p Segments (whose lengths add up to the
  /// count): one chunk, read or written with one system call.
  void gather(std::vector<IOSegmentTy> Segments);
  /// The request is handed to the workers, who use it until it is done.
  void markQueued() { Queued = true; }
  /// @}

  /// \name Chunk claims; the caller serialises them (the engine's queue
  /// lock).
  /// @{
  /// Whether a chunk is left to claim.
  bool hasUnclaimedChunk() const { return NextChunk < Layout.numChunks(); }
  /// Claim the next chunk; only while hasUnclaimedChunk().
  size_t claimChunk() { return NextChunk++; }
  /// @}

  /// \name Read by the workers and path backends.
  /// @{
  OpTy op() const { return Op; }
  bool isWrite() const { return Op == Write; }
  /// Our duplicate of the caller's descriptor.
  int fd() const { return Fd; }
  /// The descriptor without O_DIRECT.
  int bufferedFd() const { return BufFd; }
  /// The descriptor with O_DIRECT for the middle, or -1.
  int directFd() const { return DirectFd; }
  /// Memory alignment O_DIRECT needs.
  size_t directAlign() const { return DirectAlign; }
  /// The O_DIRECT decision, for OMPX_IO_INFO.
  const std::string &directNote() const { return DirectNote; }
  char *devPtr() const { return DevPtr; }
  /// Whether the request is gathered from several buffers (gather()).
  bool isGathered() const { return !Segments.empty(); }
  /// The buffers of a gathered request, in file order.
  const std::vector<IOSegmentTy> &segments() const { return Segments; }
  size_t count() const { return Count; }
  off_t offset() const { return Offset; }
  /// A write to an O_APPEND descriptor: served on the engine's append lane,
  /// by one worker, chunk after chunk, and no further after a failed chunk.
  bool isAppend() const { return Append; }
  /// The path serving the request now.
  IOPathTy path() const {
    return IOPathTy(Path.load(std::memory_order_relaxed));
  }
  /// Move the request from the fastpath to the staged path; true for the
  /// one caller that did it.
  bool fallBackToStaged() {
    unsigned Expected = unsigned(IOPathTy::Fastpath);
    return Path.compare_exchange_strong(Expected, unsigned(IOPathTy::Staged),
                                        std::memory_order_relaxed);
  }
  /// Middle chunk size (the staging buffers must hold it).
  size_t chunkSize() const { return Layout.ChunkSize; }
  size_t numChunks() const { return Layout.numChunks(); }
  size_t chunkOffset(size_t Index) const { return Layout.chunkOffset(Index); }
  size_t chunkLength(size_t Index) const { return Layout.chunkLength(Index); }
  /// Whether chunk \p Index moves through the O_DIRECT descriptor with
  /// memory \p Mem: it is in the aligned middle and \p Mem is aligned.
  bool useDirectFd(size_t Index, const void *Mem) const {
    return DirectFd >= 0 && Layout.inMiddle(Index) &&
           reinterpret_cast<uintptr_t>(Mem) % DirectAlign == 0;
  }
  /// A file size seen for this request's O_DIRECT reads into its own memory
  /// (readChunkInPlace): they stay below it. 0 until one is seen.
  uint64_t knownFileEnd() const {
    return KnownFileEnd.load(std::memory_order_relaxed);
  }
  /// The file size seen now, by any worker of the request.
  void noteFileEnd(uint64_t End) {
    KnownFileEnd.store(End, std::memory_order_relaxed);
  }
  /// @}

  /// \name Results, recorded by the workers.
  /// @{
  /// Record the bytes chunk \p Index moved.
  void recordChunk(size_t Index, size_t Bytes);
  /// Record an error of chunk \p Index at its byte \p At: the bytes before
  /// \p At moved (recordChunk says how many), the rest did not. The earliest
  /// error wins.
  void recordError(size_t Index, Error Err, size_t At = 0);
  /// Whether a chunk failed.
  bool failed() const;
  /// A worker finished \p N chunks; the last one completes the request and
  /// runs its notification, after which the worker must not touch it.
  void finishChunks(size_t N);
  /// @}

private:
  OpTy Op;
  int Fd;
  int BufFd;
  int DirectFd = -1;
  int TwinFd = -1; ///< Our reopen of the file, if any; owned.
  size_t DirectAlign = 0;
  std::string DirectNote;
  char *DevPtr;
  size_t Count;
  off_t Offset;
  std::atomic<unsigned> Path; ///< IOPathTy; may fall back to Staged.
  /// knownFileEnd(); a hint that workers share, hence relaxed.
  std::atomic<uint64_t> KnownFileEnd{0};
  IOChunkLayoutTy Layout;
  size_t NextChunk = 0;
  bool Queued = false;
  bool Append;
  bool OwnsDescriptors = true;
  std::vector<IOSegmentTy> Segments;
  IOSlotTy Slot;
  /// One inline: most requests are one operation's, and a batch makes one
  /// per operation, where a heap block each would cost more than the rest.
  llvm::SmallVector<IOBusyMarkTy, 1> BusyMarks;

  mutable std::mutex Lock;
  std::condition_variable DoneCV;
  size_t FinishedChunks = 0;
  bool Done = false;
  NotificationTy OnDone; ///< Taken by whoever runs it.
  /// One inline, as BusyMarks.
  llvm::SmallVector<size_t, 1> ChunkBytes;
  size_t ErrorChunk = SIZE_MAX;
  size_t ErrorAt = 0; ///< The failed byte of ErrorChunk.
  std::unique_ptr<std::string> ErrorMessage;
  int ErrorErrno = 0;
};

} // namespace offloadio

#endif // OFFLOADIO_IO_IOREQUEST_H

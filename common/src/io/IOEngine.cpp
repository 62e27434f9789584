// SPDX-License-Identifier: Apache-2.0
#include "offloadio/io/IOEngine.h"
#include "offloadio/Device.h"
#include "offloadio/Envar.h"
#include "offloadio/Plugin.h"
#include "offloadio/io/IODescriptor.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

using namespace offloadio;

IOFastpathTy::~IOFastpathTy() = default;

//===----------------------------------------------------------------------===//
// Requests
//===----------------------------------------------------------------------===//

IORequestTy::IORequestTy(OpTy Op, int Fd, char *DevPtr, size_t Count,
                         off_t Offset, IOPathTy Path, size_t ChunkSize)
    : Op(Op), Fd(Fd), BufFd(Fd), DevPtr(DevPtr), Count(Count), Offset(Offset),
      Path(unsigned(Path)), ChunkSize(ChunkSize), MiddleLen(Count),
      NumChunks((Count + ChunkSize - 1) / ChunkSize), ChunkBytes(NumChunks) {
  Done = NumChunks == 0;
}

IORequestTy::~IORequestTy() {
  // A request dropped without wait() may still have chunks in the workers'
  // hands: they must be done with it before its memory goes.
  if (Queued) {
    std::unique_lock<std::mutex> Guard(Lock);
    DoneCV.wait(Guard, [&] { return Done; });
  }
  if (Fd >= 0)
    ::close(Fd);
  if (TwinFd >= 0)
    ::close(TwinFd);
  if (Slots)
    Slots->fetch_sub(1, std::memory_order_relaxed);
}

void IORequestTy::setDirectGeometry(size_t Geometry, size_t MemAlign,
                                    size_t DirectChunkSize) {
  DirectAlign = MemAlign;
  ChunkSize = DirectChunkSize / Geometry * Geometry;
  uint64_t Begin = uint64_t(Offset), End = Begin + Count;
  uint64_t FirstAligned = (Begin + Geometry - 1) / Geometry * Geometry;
  uint64_t LastAligned = End / Geometry * Geometry;
  if (FirstAligned >= LastAligned) {
    // No aligned block inside: all of it goes buffered, in plain chunks.
    DirectFd = -1;
  } else {
    HeadLen = size_t(FirstAligned - Begin);
    MiddleLen = size_t(LastAligned - FirstAligned);
    TailLen = size_t(End - LastAligned);
  }
  NumChunks = (HeadLen ? 1 : 0) + (MiddleLen + ChunkSize - 1) / ChunkSize +
              (TailLen ? 1 : 0);
  ChunkBytes.assign(NumChunks, 0);
  Done = NumChunks == 0;
}

bool IORequestTy::isDone() const {
  std::lock_guard<std::mutex> Guard(Lock);
  return Done;
}

void IORequestTy::recordChunk(size_t Index, size_t Bytes) {
  std::lock_guard<std::mutex> Guard(Lock);
  ChunkBytes[Index] = Bytes;
}

void IORequestTy::recordError(size_t Index, Error Err) {
  ErrorDetailsTy D = takeErrorDetails(std::move(Err));
  std::lock_guard<std::mutex> Guard(Lock);
  if (Index >= ErrorChunk)
    return;
  ErrorChunk = Index;
  ErrorMessage = std::make_unique<std::string>(std::move(D.Message));
  // Non-POSIX failures (no staging memory, a backend error) map to the
  // closest errno: ENOMEM for resources, EIO otherwise.
  ErrorErrno = D.Errno ? D.Errno : takeErrno(makeError(D.Code, "{0}", D.Message));
}

bool IORequestTy::failed() const {
  std::lock_guard<std::mutex> Guard(Lock);
  return ErrorChunk != SIZE_MAX;
}

void IORequestTy::finishChunks(size_t N) {
  std::lock_guard<std::mutex> Guard(Lock);
  FinishedChunks += N;
  if (FinishedChunks >= NumChunks) {
    // Every byte landed: the program may free the buffer now.
    BusyMark.reset();
    Done = true;
    DoneCV.notify_all();
  }
}

Expected<size_t> IORequestTy::wait() {
  std::unique_lock<std::mutex> Guard(Lock);
  DoneCV.wait(Guard, [&] { return Done; });
  // POSIX semantics: bytes up to the first short chunk (end of file); an
  // error before that point fails the whole request, so nothing is lost
  // silently.
  size_t Total = 0;
  for (size_t I = 0; I < NumChunks; ++I) {
    // Except at the file size limit: like pwrite(2), a write that reached
    // it returns what it wrote before it, and EFBIG only if that is nothing.
    if (I >= ErrorChunk && Op == Write && ErrorErrno == EFBIG &&
        Total + ChunkBytes[I] > 0)
      return Total + ChunkBytes[I];
    if (I >= ErrorChunk)
      return makeErrnoError(ErrorErrno, "{0}", *ErrorMessage);
    Total += ChunkBytes[I];
    if (ChunkBytes[I] < chunkLength(I))
      break;
  }
  return Total;
}

//===----------------------------------------------------------------------===//
// Workers
//===----------------------------------------------------------------------===//

namespace offloadio {

/// One worker: a thread, its own stream, and a ring of pinned buffers.
class IOWorkerTy {
public:
  IOWorkerTy(IOEngineTy &Engine) : Engine(Engine) {}
  ~IOWorkerTy() {
    if (Thread.joinable())
      Thread.join();
    for (SlotTy &S : Ring) {
      llvm::consumeError(Engine.Device.freePinnedHost(S.Base));
      Engine.Device.releaseEvent(S.Event);
    }
    if (Stream)
      Engine.Device.releaseStream(Stream);
  }

  void start() {
    Thread = std::thread([this] { run(); });
  }

private:
  /// Staging buffers start on a page: O_DIRECT reads and writes them.
  static constexpr size_t BufferAlign = 4096;

  struct SlotTy {
    void *Base = nullptr;   ///< As allocated.
    void *Buffer = nullptr; ///< Base rounded up to BufferAlign.
    EventTy *Event = nullptr;
    bool InFlight = false;
  };

  void run() {
    size_t I;
    // A request stays alive while this worker holds one of its chunks
    // unfinished: it cannot complete, so wait() cannot release it. Chunks
    // are therefore claimed only through the engine, under its queue lock,
    // and R is not touched after finishChunks().
    while (IORequestTy *R = Engine.nextRequest(I)) {
      size_t Processed = 0, FirstStaged = SIZE_MAX;
      do {
        // An append goes no further than its first failure: later chunks
        // would land where the failed one belongs.
        if (!R->Append || !R->failed())
          processChunk(*R, I, FirstStaged);
        ++Processed;
      } while (Engine.nextChunk(*R, I));
      if (FirstStaged != SIZE_MAX) {
        // All this worker's copies for the request must land before the
        // request can complete.
        if (auto Err = Stream->synchronize())
          R->recordError(FirstStaged, std::move(Err));
        for (SlotTy &S : Ring)
          S.InFlight = false;
      }
      bool Append = R->Append;
      R->finishChunks(Processed);
      if (Append)
        Engine.endAppend();
    }
  }

  /// Stream and ring, with buffers of at least \p SlotSize bytes.
  Error ensureStaging(size_t SlotSize) {
    if (!Stream) {
      auto S = Engine.Device.acquireStream();
      if (!S)
        return S.takeError();
      Stream = *S;
    }
    if (!Ring.empty() && RingSlotSize < SlotSize) {
      // A request with larger chunks (an O_DIRECT middle): the ring grows
      // once, after the copies out of its buffers have finished.
      if (auto Err = Stream->synchronize())
        return Err;
      Error Err = Error::success();
      for (SlotTy &S : Ring) {
        Err = llvm::joinErrors(std::move(Err),
                               Engine.Device.freePinnedHost(S.Base));
        Engine.Device.releaseEvent(S.Event);
      }
      Ring.clear();
      NextSlot = 0;
      if (Err)
        return Err;
    }
    if (Ring.empty())
      RingSlotSize = std::max(SlotSize, Engine.Config.ChunkSize);
    while (Ring.size() < Engine.Config.RingDepth) {
      SlotTy Slot;
      auto Buffer =
          Engine.Device.allocatePinnedHost(RingSlotSize + BufferAlign);
      if (!Buffer)
        return Buffer.takeError();
      auto Event = Engine.Device.acquireEvent();
      if (!Event) {
        llvm::consumeError(Engine.Device.freePinnedHost(*Buffer));
        return Event.takeError();
      }
      Slot.Base = *Buffer;
      uintptr_t Addr = reinterpret_cast<uintptr_t>(*Buffer);
      Slot.Buffer = reinterpret_cast<void *>((Addr + BufferAlign - 1) /
                                             BufferAlign * BufferAlign);
      Slot.Event = *Event;
      Ring.push_back(Slot);
    }
    return Error::success();
  }

  void count(IORequestTy &R, IOPathTy Path, size_t Bytes) {
    auto &Counter = R.Op == IORequestTy::Read ? Engine.Stats.BytesRead
                                              : Engine.Stats.BytesWritten;
    Counter[unsigned(Path)].fetch_add(Bytes, std::memory_order_relaxed);
  }

  /// Whether chunk \p I goes through the O_DIRECT descriptor with memory
  /// \p Mem.
  static bool useDirect(const IORequestTy &R, size_t I, const void *Mem) {
    return R.chunkIsDirect(I) &&
           reinterpret_cast<uintptr_t>(Mem) % R.DirectAlign == 0;
  }

  /// Read a chunk of the aligned middle with O_DIRECT. A short count that
  /// leaves the offset unaligned is the end of file; whatever is left, and
  /// all of a chunk that O_DIRECT refuses with EINVAL, is read buffered.
  Expected<size_t> readDirect(IORequestTy &R, char *Buf, size_t Len,
                              off_t FileOffset) {
    size_t Done = 0;
    while (Done < Len) {
      ssize_t N = Engine.Sys.pread(R.DirectFd, Buf + Done, Len - Done,
                                   FileOffset + off_t(Done));
      if (N < 0 && errno == EINTR)
        continue;
      if (N < 0 && errno != EINVAL)
        return makeErrnoError(errno,
                              "pread(fd {0}, {1}, {2} bytes, offset {3})",
                              R.DirectFd, static_cast<const void *>(Buf + Done),
                              Len - Done, FileOffset + off_t(Done));
      if (N == 0)
        return Done; // End of file.
      if (N > 0)
        Done += size_t(N);
      if (N < 0 || Done % R.DirectAlign) {
        auto Rest = readFully(Engine.Sys, R.BufFd, Buf + Done, Len - Done,
                              FileOffset + off_t(Done));
        if (!Rest)
          return Rest.takeError();
        return Done + *Rest;
      }
    }
    return Done;
  }

  /// Write a chunk of the aligned middle with O_DIRECT; what O_DIRECT
  /// refuses with EINVAL, or leaves unaligned, is written buffered.
  /// \p Done gets the bytes written, also those before an error.
  Error writeDirect(IORequestTy &R, const char *Buf, size_t Len,
                    off_t FileOffset, size_t &Done) {
    Done = 0;
    while (Done < Len) {
      ssize_t N = Engine.Sys.pwrite(R.DirectFd, Buf + Done, Len - Done,
                                    FileOffset + off_t(Done));
      if (N < 0 && errno == EINTR)
        continue;
      if (N == 0 || (N < 0 && errno != EINVAL))
        return makeErrnoError(N < 0 ? errno : EIO,
                              "pwrite(fd {0}, {1}, {2} bytes, offset {3})",
                              R.DirectFd, static_cast<const void *>(Buf + Done),
                              Len - Done, FileOffset + off_t(Done));
      if (N > 0)
        Done += size_t(N);
      if (N < 0 || Done % R.DirectAlign) {
        size_t Rest = 0;
        Error Err = writeFully(Engine.Sys, R.BufFd, Buf + Done, Len - Done,
                               FileOffset + off_t(Done), &Rest);
        Done += Rest;
        return Err;
      }
    }
    return Error::success();
  }

  Expected<size_t> readChunk(IORequestTy &R, size_t I, char *Buf, size_t Len,
                             off_t FileOffset) {
    if (useDirect(R, I, Buf))
      return readDirect(R, Buf, Len, FileOffset);
    return readFully(Engine.Sys, R.BufFd, Buf, Len, FileOffset);
  }

  /// Write chunk \p I and record its result. A write stopped by the file
  /// size limit (EFBIG) keeps the bytes written before it: wait() returns
  /// them as pwrite(2) would. Returns the bytes written.
  size_t writeChunk(IORequestTy &R, size_t I, const char *Buf, size_t Len,
                    off_t FileOffset) {
    size_t Written = 0;
    Error Err = useDirect(R, I, Buf)
                    ? writeDirect(R, Buf, Len, FileOffset, Written)
                    : writeFully(Engine.Sys, R.BufFd, Buf, Len, FileOffset,
                                 &Written);
    if (!Err) {
      R.recordChunk(I, Len);
      return Len;
    }
    ErrorDetailsTy D = takeErrorDetails(std::move(Err));
    if (D.Errno == EFBIG)
      R.recordChunk(I, Written);
    else
      Written = 0;
    R.recordError(I, makeErrnoError(D.Errno, "{0}", D.Message));
    return Written;
  }

  void processChunk(IORequestTy &R, size_t I, size_t &FirstStaged) {
    size_t Len = R.chunkLength(I);
    char *Dev = R.DevPtr + R.chunkOffset(I);
    off_t FileOffset = R.Offset + off_t(R.chunkOffset(I));
    IOPathTy Path = IOPathTy(R.Path.load(std::memory_order_relaxed));

    if (Path == IOPathTy::Fastpath) {
      Error Err = Error::success();
      if (R.Op == IORequestTy::Read) {
        auto N = Engine.Fastpath->read(R.Fd, Dev, Len, FileOffset);
        if (N) {
          R.recordChunk(I, *N);
          count(R, Path, *N);
          return;
        }
        Err = N.takeError();
      } else {
        Err = Engine.Fastpath->write(R.Fd, Dev, Len, FileOffset);
        if (!Err) {
          R.recordChunk(I, Len);
          count(R, Path, Len);
          return;
        }
      }
      ErrorDetailsTy D = takeErrorDetails(std::move(Err));
      if (R.Op == IORequestTy::Write && D.Errno == EFBIG) {
        // The file size limit: the vendor call does not say how much of the
        // chunk it wrote. The chunk is written again through staging, which
        // stops exactly at the limit; the request stays on the fastpath.
        Path = IOPathTy::Staged;
      } else if (D.Errno != ENODEV && D.Errno != EREMOTEIO &&
                 D.Errno != ENOTSUP) {
        R.recordError(I, makeErrnoError(D.Errno ? D.Errno : EIO, "fastpath: {0}",
                                        D.Message));
        return;
      } else {
        // The vendor path is unusable for this file or device: the rest of
        // the request, this chunk included, goes through staging. Workers
        // that tried the fastpath at the same time all get here; the
        // request falls back (and is counted) once.
        unsigned Expected = unsigned(IOPathTy::Fastpath);
        if (R.Path.compare_exchange_strong(Expected,
                                           unsigned(IOPathTy::Staged),
                                           std::memory_order_relaxed))
          Engine.noteFallback("fastpath failed (" + D.Message +
                              "); retried on the staged path");
        Path = IOPathTy::Staged;
      }
    }

    if (Path == IOPathTy::Direct) {
      if (R.Op == IORequestTy::Read) {
        auto N = readChunk(R, I, Dev, Len, FileOffset);
        if (!N)
          return R.recordError(I, N.takeError());
        R.recordChunk(I, *N);
        count(R, Path, *N);
      } else {
        count(R, Path, writeChunk(R, I, Dev, Len, FileOffset));
      }
      return;
    }

    // Staged.
    if (auto Err = ensureStaging(R.ChunkSize))
      return R.recordError(I, std::move(Err));
    if (FirstStaged == SIZE_MAX)
      FirstStaged = I;
    SlotTy &Slot = Ring[NextSlot];
    NextSlot = (NextSlot + 1) % Ring.size();
    if (Slot.InFlight) {
      // The ring wrapped onto a buffer whose copy may still run: the only
      // place a read waits for the device.
      Slot.InFlight = false;
      if (auto Err = Slot.Event->synchronize())
        return R.recordError(I, std::move(Err));
    }
    char *Buffer = static_cast<char *>(Slot.Buffer);
    if (R.Op == IORequestTy::Read) {
      auto N = readChunk(R, I, Buffer, Len, FileOffset);
      if (!N)
        return R.recordError(I, N.takeError());
      if (*N) {
        if (auto Err = Stream->copyAsync(Dev, Buffer, *N,
                                         CopyKindTy::HostToDevice))
          return R.recordError(I, std::move(Err));
        if (auto Err = Stream->recordEvent(*Slot.Event))
          return R.recordError(I, std::move(Err));
        Slot.InFlight = true;
      }
      R.recordChunk(I, *N);
      count(R, Path, *N);
      return;
    }
    // Write: the device data must be in the buffer before pwrite.
    if (auto Err = Stream->copyAsync(Buffer, Dev, Len, CopyKindTy::DeviceToHost))
      return R.recordError(I, std::move(Err));
    if (auto Err = Stream->recordEvent(*Slot.Event))
      return R.recordError(I, std::move(Err));
    if (auto Err = Slot.Event->synchronize())
      return R.recordError(I, std::move(Err));
    count(R, Path, writeChunk(R, I, Buffer, Len, FileOffset));
  }

  IOEngineTy &Engine;
  std::thread Thread;
  StreamTy *Stream = nullptr;
  std::vector<SlotTy> Ring;
  size_t RingSlotSize = 0; ///< Usable bytes of each ring buffer.
  size_t NextSlot = 0;
};

} // namespace offloadio

//===----------------------------------------------------------------------===//
// Engine
//===----------------------------------------------------------------------===//

IOEngineTy::IOEngineTy(GenericDeviceTy &Device, SysTy &Sys,
                       IOFastpathTy *Fastpath, IOConfigTy Config)
    : Device(Device), Sys(Sys), Fastpath(Fastpath), Config(Config) {}

IOEngineTy::~IOEngineTy() {
  {
    std::lock_guard<std::mutex> Guard(QueueLock);
    Stopping = true;
  }
  QueueCV.notify_all();
  Workers.clear();
}

Error IOEngineTy::startWorkers() {
  std::lock_guard<std::mutex> Guard(QueueLock);
  if (WorkersStarted)
    return Error::success();
  WorkersStarted = true;
  for (unsigned I = 0; I < Config.Threads; ++I) {
    Workers.push_back(std::make_unique<IOWorkerTy>(*this));
    Workers.back()->start();
  }
  return Error::success();
}

size_t IOEngineTy::claimLocked(IORequestTy &R) {
  size_t I = R.NextChunk++;
  if (R.NextChunk >= R.NumChunks && !R.Append) {
    // Fully claimed: off the queue now, while the claimed chunks keep it
    // alive. It is the front: requests leave only here, in order.
    if (!Queue.empty() && Queue.front() == &R)
      Queue.pop_front();
    else
      Queue.erase(std::find(Queue.begin(), Queue.end(), &R));
  }
  return I;
}

IORequestTy *IOEngineTy::nextRequest(size_t &Chunk) {
  std::unique_lock<std::mutex> Guard(QueueLock);
  auto AppendReady = [&] { return !AppendActive && !AppendQueue.empty(); };
  // Queued requests are served before the workers stop.
  QueueCV.wait(Guard,
               [&] { return !Queue.empty() || AppendReady() || Stopping; });
  if (AppendReady()) {
    // Off the lane's queue: no other worker sees it, so this one claims
    // its chunks in order.
    IORequestTy *R = AppendQueue.front();
    AppendQueue.pop_front();
    AppendActive = true;
    Chunk = claimLocked(*R);
    return R;
  }
  if (Queue.empty())
    return nullptr;
  IORequestTy *R = Queue.front();
  Chunk = claimLocked(*R);
  return R;
}

bool IOEngineTy::nextChunk(IORequestTy &R, size_t &Chunk) {
  std::lock_guard<std::mutex> Guard(QueueLock);
  if (R.NextChunk >= R.NumChunks)
    return false;
  Chunk = claimLocked(R);
  return true;
}

void IOEngineTy::endAppend() {
  {
    std::lock_guard<std::mutex> Guard(QueueLock);
    AppendActive = false;
  }
  QueueCV.notify_all();
}

void IOEngineTy::setupDirect(IORequestTy &R, int CallerFd, int Flags) {
  bool CallerDirect = Flags & O_DIRECT;
  IODirectPolicyTy Policy = Config.ODirect;
  if (!CallerDirect && Policy != IODirectPolicyTy::On)
    return; // Buffered, as always.
  // Only regular files and block devices are reopened: opening a FIFO
  // waits for a peer, forever if none comes.
  std::string NotAFile;
  if (!canReopen(Sys, CallerFd, NotAFile)) {
    R.DirectNote = ", O_DIRECT: fd is " + NotAFile + ", not reopened";
    return;
  }
  int Mode = (R.Op == IORequestTy::Read ? O_RDONLY : O_WRONLY) |
             (Flags & (O_SYNC | O_DSYNC));
  // pwrite on an O_APPEND descriptor appends wherever the end of file is:
  // such a write has no aligned offsets to split on. A buffered one stays
  // buffered; an O_DIRECT one keeps O_DIRECT, unsplit, with a buffered twin
  // that appends too for what O_DIRECT refuses with EINVAL.
  bool Append = R.Op == IORequestTy::Write && (Flags & O_APPEND);
  if (Append && !CallerDirect) {
    R.DirectNote = ", O_DIRECT not split: the fd has O_APPEND";
    return;
  }
  if (Append)
    Mode |= O_APPEND;
  auto ReopenFailed = [&](const char *What) {
    return std::string(", ") + What + " (reopen: " + std::strerror(errno) + ")";
  };
  // open(2) of a slow file system (FUSE, NFS) may be interrupted by a
  // signal: that is no reason to lose O_DIRECT or the buffered twin.
  auto Reopen = [&](int Flags) {
    int New;
    do
      New = Sys.reopen(CallerFd, Flags);
    while (New < 0 && errno == EINTR);
    return New;
  };

  if (CallerDirect) {
    // Unaligned heads and tails (and, with "off", everything) need a
    // descriptor of the file without O_DIRECT.
    int Twin = Reopen(Mode);
    if (Twin < 0) {
      R.DirectNote = ReopenFailed("O_DIRECT fd used as is");
      return;
    }
    R.TwinFd = R.BufFd = Twin;
    if (Policy == IODirectPolicyTy::Off) {
      R.DirectNote = ", O_DIRECT off: buffered reopen of the fd";
      return;
    }
    R.DirectFd = R.Fd;
  } else {
    int Twin = Reopen(Mode | O_DIRECT);
    if (Twin < 0) {
      // EINVAL: the file system has no O_DIRECT (tmpfs); buffered it is.
      R.DirectNote = ReopenFailed("O_DIRECT unavailable, buffered");
      return;
    }
    R.TwinFd = R.DirectFd = Twin;
  }

  size_t Align = Sys.directIOAlignment(R.DirectFd);
  if (!Align)
    Align = 4096;
  if (Append) {
    R.DirectAlign = Align;
    R.DirectNote = ", O_DIRECT not split: the fd has O_APPEND; EINVAL "
                   "retried buffered";
    return;
  }
  // Buffered heads and tails and O_DIRECT middles share no page: buffered
  // writes would read-modify-write a page around the middle's blocks.
  size_t Geometry = Align;
  long Page = ::sysconf(_SC_PAGESIZE);
  if (Page > 0 && size_t(Page) > Align && size_t(Page) % Align == 0)
    Geometry = size_t(Page);
  if (Geometry > Config.DirectChunkSize) {
    R.DirectNote = ", O_DIRECT alignment " + std::to_string(Align) +
                   " exceeds the chunk size, buffered";
    R.DirectFd = -1;
    return;
  }
  R.setDirectGeometry(Geometry, Align, Config.DirectChunkSize);
  if (R.DirectFd < 0)
    R.DirectNote = ", O_DIRECT: no aligned block in the range, buffered";
  else
    R.DirectNote = ", O_DIRECT for the aligned middle (alignment " +
                   std::to_string(Align) + ")";
}

void IOEngineTy::noteFallback(const std::string &Why) {
  Stats.Fallbacks.fetch_add(1, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> Guard(Stats.ReasonLock);
    Stats.LastFallback = Why;
  }
  if (Config.Info)
    std::fprintf(stderr, "ompx-io device %d: %s\n", Device.getDeviceId(),
                 Why.c_str());
}

Expected<std::unique_ptr<IORequestTy>>
IOEngineTy::submit(IORequestTy::OpTy Op, int Fd, void *DevPtr, size_t Count,
                   off_t Offset) {
  const char *OpName = Op == IORequestTy::Read ? "read" : "write";
  auto Flags = checkDescriptor(Sys, Op == IORequestTy::Write, Fd, Count,
                               Offset, Device.getDeviceId());
  if (!Flags)
    return Flags.takeError();
  if (Count && !DevPtr)
    return makeErrnoError(EFAULT, "{0} of {1} bytes on device {2}: null "
                          "buffer",
                          OpName, Count, Device.getDeviceId());
  // Busy from before the buffer checks on: a free in progress finishes
  // first (the checks then refuse the memory), a later one waits for this
  // request (IOBusyMemory.h).
  IOBusyMarkTy BusyMark;
  if (Count)
    BusyMark = IOBusyMarkTy(Device.getIOBusyMemory(), DevPtr, Count);
  if (Count && !Device.ownsPointer(DevPtr, nullptr))
    return makeErrnoError(EFAULT, "{0} of {1} bytes on device {2}: buffer {3} "
                          "is not memory of this device",
                          OpName, Count, Device.getDeviceId(), DevPtr);
  size_t Room = Device.bytesAvailableFrom(DevPtr);
  if (Count > Room)
    return makeErrnoError(EFAULT, "{0} of {1} bytes on device {2}: buffer {3} "
                          "has only {4} bytes left in its allocation",
                          OpName, Count, Device.getDeviceId(), DevPtr, Room);

  std::string Why;
  bool Append = Op == IORequestTy::Write && (*Flags & O_APPEND);
  auto Path = choosePath(Fd, DevPtr, Count, Offset, Append, Why);
  if (!Path)
    return Path.takeError();
  // Every request holds one or two descriptors and its memory until the
  // program waits for it, so their number is capped. Submission fails
  // rather than waits: a thread that submits past the cap before waiting
  // for any of its requests would wait for itself.
  unsigned Held = Outstanding.load(std::memory_order_relaxed);
  do
    if (Held >= Config.MaxRequests)
      return makeErrnoError(EAGAIN,
                            "{0} of {1} bytes on device {2}: {3} requests are "
                            "outstanding, the OMPX_IO_MAX_REQUESTS limit; "
                            "wait for some first",
                            OpName, Count, Device.getDeviceId(), Held);
  while (!Outstanding.compare_exchange_weak(Held, Held + 1,
                                            std::memory_order_relaxed));
  int Dup = Sys.dup(Fd);
  if (Dup < 0) {
    int Errno = errno;
    Outstanding.fetch_sub(1, std::memory_order_relaxed);
    return makeErrnoError(Errno, "dup of fd {0} for an async {1}", Fd, OpName);
  }
  auto R = std::make_unique<IORequestTy>(Op, Dup, static_cast<char *>(DevPtr),
                                         Count, Offset, *Path,
                                         Config.ChunkSize);
  R->Slots = &Outstanding;
  R->BusyMark = std::move(BusyMark);
  R->Append = Append;
  if (Count)
    setupDirect(*R, Fd, *Flags);
  auto &Requests = Op == IORequestTy::Read ? Stats.Reads : Stats.Writes;
  Requests[unsigned(*Path)].fetch_add(1, std::memory_order_relaxed);
  if (Config.Info)
    std::fprintf(stderr,
                 "ompx-io device %d: %s %zu bytes, fd %d offset %lld, %p: "
                 "%s path (%s)%s\n",
                 Device.getDeviceId(), OpName, Count, Fd, (long long)Offset,
                 DevPtr, ioPathName(*Path), Why.c_str(), R->DirectNote.c_str());
  if (R->NumChunks == 0)
    return std::move(R);
  if (auto Err = startWorkers())
    return std::move(Err);
  R->Queued = true;
  {
    std::lock_guard<std::mutex> Guard(QueueLock);
    (Append ? AppendQueue : Queue).push_back(R.get());
  }
  QueueCV.notify_all();
  return std::move(R);
}

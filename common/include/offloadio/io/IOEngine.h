// SPDX-License-Identifier: Apache-2.0
//
// The file <-> device engine of one device. A request is split into chunks
// that a pool of workers claims; each chunk runs on the path chosen for the
// request by score (hipFile's scheme):
//   - direct:   pread/pwrite straight into host-addressable device memory;
//   - fastpath: the vendor's storage <-> GPU DMA (cuFile, AIS) when the
//               backend has one and the request fits its alignment rules;
//   - staged:   pread into a worker's ring of pinned buffers, then an async
//               copy on the worker's own stream; the ring waits only when it
//               wraps onto a buffer whose copy is still in flight.
// A fastpath failure with ENODEV, EREMOTEIO or ENOTSUP moves the rest of the
// request to the staged path, counted and explained.
//
// O_DIRECT (OMPX_IO_ODIRECT): when a request may use it, its chunk
// boundaries are put on aligned file offsets: an unaligned head and tail go
// through a descriptor without O_DIRECT, the aligned middle through one with
// it (where the memory it lands in is aligned too).
#ifndef OFFLOADIO_IO_IOENGINE_H
#define OFFLOADIO_IO_IOENGINE_H

#include "offloadio/Error.h"
#include "offloadio/io/IOBusyMemory.h"
#include "offloadio/io/Sys.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace offloadio {

class GenericDeviceTy;
class IOWorkerTy;

/// The paths, numbered as enum ompx_io_path.
enum class IOPathTy : unsigned { Direct = 0, Fastpath = 1, Staged = 2, Count };

/// Printable name of a path.
const char *ioPathName(IOPathTy Path);

/// Vendor storage DMA offered by a backend (cuFile, AIS).
class IOFastpathTy {
public:
  virtual ~IOFastpathTy();
  /// Whether the fastpath can serve \p Fd with this buffer and range; on
  /// false, \p Why says why not.
  virtual bool accepts(int Fd, const void *DevPtr, size_t Count, off_t Offset,
                       std::string &Why) = 0;
  /// Read into device memory; returns bytes read (short at end of file).
  virtual Expected<size_t> read(int Fd, void *DevPtr, size_t Count,
                                off_t Offset) = 0;
  /// Write from device memory.
  virtual Error write(int Fd, const void *DevPtr, size_t Count,
                      off_t Offset) = 0;
};

/// When the aligned middle of a request is read or written with O_DIRECT.
enum class IODirectPolicyTy : unsigned {
  Auto = 0, ///< When the caller's descriptor has O_DIRECT.
  On = 1,   ///< Also through an O_DIRECT reopen of a buffered descriptor.
  Off = 2,  ///< Never; an O_DIRECT descriptor is reopened without it.
};

/// Engine settings; read from OMPX_IO_* at engine creation.
struct IOConfigTy {
  unsigned Threads = 4;          ///< OMPX_IO_THREADS.
  size_t ChunkSize = 8 << 20;    ///< OMPX_IO_CHUNK_SIZE.
  /// OMPX_IO_DIRECT_CHUNK_SIZE: chunks of requests with an O_DIRECT middle.
  /// Disks reach their rate with large requests, the page cache with many
  /// small ones in flight.
  size_t DirectChunkSize = 32 << 20;
  unsigned RingDepth = 2;        ///< OMPX_IO_RING_DEPTH.
  int ForcedPath = -1;           ///< OMPX_IO_PATH; -1 = auto.
  bool Info = false;             ///< OMPX_IO_INFO.
  IODirectPolicyTy ODirect = IODirectPolicyTy::Auto; ///< OMPX_IO_ODIRECT.
  unsigned MaxRequests = 256;    ///< OMPX_IO_MAX_REQUESTS.

  /// Read and validate the environment.
  static IOConfigTy fromEnv();
};

/// One read or write in flight.
class IORequestTy {
public:
  /// Direction.
  enum OpTy { Read, Write };

  /// \p Fd is our duplicate of the caller's descriptor; the request owns it.
  IORequestTy(OpTy Op, int Fd, char *DevPtr, size_t Count, off_t Offset,
              IOPathTy Path, size_t ChunkSize);
  /// Waits for the workers if the request is still in flight.
  ~IORequestTy();

  /// 1 done, 0 pending; errors surface in wait().
  bool isDone() const;
  /// Block until done; the bytes transferred or the error.
  Expected<size_t> wait();

private:
  friend class IOEngineTy;
  friend class IOWorkerTy;

  /// A worker finished \p N chunks of this request.
  void finishChunks(size_t N);
  /// Record the result of chunk \p Index.
  void recordChunk(size_t Index, size_t Bytes);
  /// Record an error of chunk \p Index (the earliest chunk's error wins).
  void recordError(size_t Index, Error Err);
  /// Whether a chunk failed.
  bool failed() const;
  /// With DirectFd set: chunks become \p DirectChunkSize rounded down to
  /// \p Geometry (which must not exceed it), chunk boundaries move to file
  /// offsets that are multiples of \p Geometry, and O_DIRECT memory must be
  /// aligned to \p MemAlign. Only before the request is queued.
  void setDirectGeometry(size_t Geometry, size_t MemAlign,
                         size_t DirectChunkSize);
  /// Chunk geometry: an optional unaligned head, the middle in chunks of
  /// ChunkSize, an optional unaligned tail. Without O_DIRECT all is middle.
  size_t chunkOffset(size_t Index) const {
    if (HeadLen && Index == 0)
      return 0;
    size_t J = Index - (HeadLen ? 1 : 0);
    return HeadLen + std::min(J * ChunkSize, MiddleLen);
  }
  size_t chunkLength(size_t Index) const {
    if (HeadLen && Index == 0)
      return HeadLen;
    size_t J = Index - (HeadLen ? 1 : 0);
    if (J * ChunkSize >= MiddleLen)
      return TailLen;
    return std::min(ChunkSize, MiddleLen - J * ChunkSize);
  }
  /// Whether chunk \p Index is in the aligned middle served with O_DIRECT.
  bool chunkIsDirect(size_t Index) const {
    if (DirectFd < 0 || (HeadLen && Index == 0))
      return false;
    return (Index - (HeadLen ? 1 : 0)) * ChunkSize < MiddleLen;
  }

  OpTy Op;
  int Fd;                 ///< Our duplicate of the caller's descriptor.
  int BufFd;              ///< Without O_DIRECT: Fd or TwinFd.
  int DirectFd = -1;      ///< With O_DIRECT for the middle: Fd, TwinFd or -1.
  int TwinFd = -1;        ///< Our reopen of the file, if any; owned.
  size_t DirectAlign = 0; ///< Memory alignment O_DIRECT needs.
  std::string DirectNote; ///< O_DIRECT decision, for OMPX_IO_INFO.
  char *DevPtr;
  size_t Count;
  off_t Offset;
  std::atomic<unsigned> Path; ///< IOPathTy; may fall back to Staged.
  size_t ChunkSize;
  size_t HeadLen = 0; ///< Bytes before the first aligned file offset.
  size_t MiddleLen;   ///< Bytes of the aligned middle.
  size_t TailLen = 0; ///< Bytes after the last aligned file offset.
  size_t NumChunks;
  size_t NextChunk = 0; ///< Claimed under the engine's QueueLock.
  bool Queued = false;  ///< Handed to the workers, who use it until Done.
  /// A write to an O_APPEND descriptor: served on the engine's append lane,
  /// by one worker, chunk after chunk, and no further after a failed chunk.
  bool Append = false;
  /// The engine's count of outstanding requests; this request's slot in it
  /// is given back when the request is destroyed.
  std::atomic<unsigned> *Slots = nullptr;
  /// The buffer, marked busy in the device's IOBusyMemoryTy until the last
  /// chunk finished: a free of it waits until then.
  IOBusyMarkTy BusyMark;

  mutable std::mutex Lock;
  std::condition_variable DoneCV;
  size_t FinishedChunks = 0;
  bool Done = false;
  std::vector<size_t> ChunkBytes;
  size_t ErrorChunk = SIZE_MAX;
  std::unique_ptr<std::string> ErrorMessage;
  int ErrorErrno = 0;
};

/// Counters of one device's engine.
struct IOStatsTy {
  std::atomic<uint64_t> BytesRead[4] = {};     ///< By path (3 = host).
  std::atomic<uint64_t> BytesWritten[4] = {};  ///< By path.
  std::atomic<uint64_t> Reads[4] = {};         ///< Requests by path.
  std::atomic<uint64_t> Writes[4] = {};        ///< Requests by path.
  std::atomic<uint64_t> Fallbacks{0};          ///< Fastpath -> staged.
  std::mutex ReasonLock;                       ///< Guards LastFallback.
  std::string LastFallback;                    ///< Why the last one.
};

/// The engine of one device.
class IOEngineTy {
public:
  /// \p Sys is the syscall seam; \p Fastpath may be null.
  IOEngineTy(GenericDeviceTy &Device, SysTy &Sys, IOFastpathTy *Fastpath,
             IOConfigTy Config);
  ~IOEngineTy();
  IOEngineTy(const IOEngineTy &) = delete;
  IOEngineTy &operator=(const IOEngineTy &) = delete;

  /// Validate and start a transfer. Arguments are captured; the descriptor
  /// is duplicated. At most Config.MaxRequests requests exist at once (each
  /// holds descriptors and memory until it is destroyed); beyond that the
  /// submission fails with EAGAIN. Every request must be destroyed before
  /// the engine.
  Expected<std::unique_ptr<IORequestTy>>
  submit(IORequestTy::OpTy Op, int Fd, void *DevPtr, size_t Count,
         off_t Offset);

  /// Requests submitted and not yet destroyed.
  unsigned outstandingRequests() const {
    return Outstanding.load(std::memory_order_relaxed);
  }

  /// Which paths can serve this device; \p Why gets a line per other path.
  unsigned availablePaths(std::string &Why) const;

  /// The counters.
  IOStatsTy &getStats() { return Stats; }
  /// The settings in force.
  const IOConfigTy &getConfig() const { return Config; }

private:
  friend class IOWorkerTy;

  /// Pick the path for a request, with the reason, by score. \p Append: a
  /// write to an O_APPEND descriptor, which the fastpath cannot serve.
  Expected<IOPathTy> choosePath(int Fd, const void *DevPtr, size_t Count,
                                off_t Offset, bool Append,
                                std::string &Why) const;
  /// Start the workers on first use.
  Error startWorkers();
  /// Next request with unclaimed chunks, with its next chunk claimed into
  /// \p Chunk; blocks; null when stopping.
  IORequestTy *nextRequest(size_t &Chunk);
  /// Claim the next chunk of \p R, whose earlier chunk the caller holds
  /// unfinished; false when all are claimed.
  bool nextChunk(IORequestTy &R, size_t &Chunk);
  /// The worker serving the append lane is done with its request.
  void endAppend();
  /// Claim a chunk of \p R under QueueLock; the last claim takes \p R off
  /// the queue, before any worker can finish it and wait() can free it.
  size_t claimLocked(IORequestTy &R);
  /// Set up O_DIRECT for \p R by the policy and the caller's \p Flags.
  void setupDirect(IORequestTy &R, int CallerFd, int Flags);
  /// Note a fastpath -> staged fallback.
  void noteFallback(const std::string &Why);

  GenericDeviceTy &Device;
  SysTy &Sys;
  IOFastpathTy *Fastpath;
  IOConfigTy Config;
  IOStatsTy Stats;
  /// Requests alive, bounded by Config.MaxRequests.
  std::atomic<unsigned> Outstanding{0};

  std::mutex QueueLock;
  std::condition_variable QueueCV;
  std::deque<IORequestTy *> Queue;
  /// The append lane: O_APPEND writes, served one at a time in submission
  /// order, each by one worker in chunk order, so that each lands whole and
  /// in order after the one before (POSIX promises aio_write as much).
  std::deque<IORequestTy *> AppendQueue;
  bool AppendActive = false; ///< A worker serves the lane's front request.
  bool Stopping = false;
  bool WorkersStarted = false;
  std::vector<std::unique_ptr<IOWorkerTy>> Workers;
};

} // namespace offloadio

#endif // OFFLOADIO_IO_IOENGINE_H

// SPDX-License-Identifier: Apache-2.0
//
// The file <-> device engine of one device. A request is checked, scored
// by the path backends (IOPathBackend.h), given its O_DIRECT layout
// (IODirectPolicy.h) and queued (IORequestQueue.h); the workers of the
// process (IOWorkerPool.h), shared with the other devices' engines, claim
// its chunks and run each on the request's path.
//
// The engine knows its device only through IODeviceTy.
#ifndef OFFLOADIO_IO_IOENGINE_H
#define OFFLOADIO_IO_IOENGINE_H

#include "offloadio/Error.h"
#include "offloadio/io/IOBatch.h"
#include "offloadio/io/IOConfig.h"
#include "offloadio/io/IOFastpath.h"
#include "offloadio/io/IORefusedFileSystems.h"
#include "offloadio/io/IORequest.h"
#include "offloadio/io/IORequestQueue.h"
#include "offloadio/io/IOStats.h"
#include "offloadio/io/IOWorker.h"
#include "offloadio/io/IOWorkerPool.h"
#include "offloadio/io/TransferCheck.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace offloadio {

class IODeviceTy;
class SysTy;

/// The engine of one device.
class IOEngineTy {
public:
  /// \p Sys is the syscall seam; \p Fastpath may be null. \p Workers
  /// serves the engine, shared with other engines, and must outlive it.
  IOEngineTy(IODeviceTy &Device, SysTy &Sys, IOFastpathTy *Fastpath,
             IOConfigTy Config, IOWorkerPoolTy &Workers);
  /// An engine with a pool of Config.Threads workers of its own.
  IOEngineTy(IODeviceTy &Device, SysTy &Sys, IOFastpathTy *Fastpath,
             IOConfigTy Config);
  /// Leaves the workers once the queued requests are served.
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

  /// An empty batch share holding one request slot: EAGAIN, as submit,
  /// when Config.MaxRequests requests and shares are outstanding. Every
  /// share must be destroyed before the engine.
  Expected<std::unique_ptr<IOBatchTy>> createBatch();
  /// Check and start \p Ops in \p Batch, a share from createBatch not
  /// started before. An operation refused by the checks of submit gets its
  /// error in the share; the others run. Operations that are at most a
  /// chunk, of one descriptor and direction, on one path, whose file ranges
  /// touch, are gathered into one request of at most a chunk. Never waits
  /// for a transfer.
  void startBatch(IOBatchTy &Batch, const std::vector<IOBatchOpTy> &Ops);

  /// Requests and batch shares submitted and not yet destroyed.
  unsigned outstandingRequests() const {
    return Outstanding.load(std::memory_order_relaxed);
  }

  /// Which paths can serve this device; \p Why gets a line per other path.
  unsigned availablePaths(std::string &Why) const;

  /// The counters.
  IOStatsTy &getStats() { return Stats; }
  /// File systems the fastpath gave up on.
  const IORefusedFileSystemsTy &getRefusedFileSystems() const {
    return RefusedFS;
  }

private:
  /// A request that passed the checks of submission.
  struct CheckedRequestTy {
    int Flags;            ///< The descriptor's status flags.
    IOBusyMarkTy BusyMark; ///< The buffer, busy from the checks on.
    IOPathTy Path;        ///< The path chosen ...
    std::string Why;      ///< ... and why.
    bool Append;          ///< A write to an O_APPEND descriptor.
  };
  /// The checks of a request on the descriptor \p Facts describes
  /// (TransferCheck.h: one order for every device), and its path.
  Expected<CheckedRequestTy> checkRequest(IORequestTy::OpTy Op,
                                          const DescriptorFactsTy &Facts,
                                          void *DevPtr, size_t Count,
                                          off_t Offset);
  /// One of Config.MaxRequests slots; EAGAIN naming \p What without one.
  Expected<IOSlotTy> reserveSlot(const std::string &What);
  /// Count \p R on its path and print its OMPX_IO_INFO line; \p Fd is the
  /// caller's descriptor, \p Why why the path.
  void noteRequest(const IORequestTy &R, int Fd, const std::string &Why);
  /// Hand \p R, which has chunks, to the workers.
  void queueRequest(IORequestTy &R) {
    IORequestTy *One = &R;
    queueRequests(&One, 1);
  }
  /// Hand the \p N requests \p Rs, each with chunks, to the workers in
  /// order, with one wakeup.
  void queueRequests(IORequestTy *const *Rs, size_t N);
  /// Keeps \p OwnWorkers, which serve this engine alone.
  IOEngineTy(IODeviceTy &Device, SysTy &Sys, IOFastpathTy *Fastpath,
             IOConfigTy Config, std::unique_ptr<IOWorkerPoolTy> OwnWorkers);
  /// Pick the path for a request by the backends' scores, with the reason
  /// in \p Why unless it is null.
  Expected<IOPathTy> choosePath(const IOPathQueryTy &Q, std::string *Why) const;
  /// Start the workers on first use.
  void startWorkers() { Workers.start(); }

  /// The pool of the engine's own, when it was given none; declared first,
  /// so that it outlives the members that its workers use.
  std::unique_ptr<IOWorkerPoolTy> OwnWorkers;
  IOWorkerPoolTy &Workers;
  IODeviceTy &Device;
  SysTy &Sys;
  IOConfigTy Config;
  IOLogTy Log;
  IOStatsTy Stats;
  IORefusedFileSystemsTy RefusedFS;
  /// The backends, indexed by IOPathTy.
  IOPathTableTy Paths;
  /// Requests and batch shares alive, bounded by Config.MaxRequests.
  std::atomic<unsigned> Outstanding{0};
  IORequestQueueTy Queue;
  /// What the workers serve; detached in the destructor, before the
  /// members above go.
  IOPoolEngineTy Served;
};

} // namespace offloadio

#endif // OFFLOADIO_IO_IOENGINE_H

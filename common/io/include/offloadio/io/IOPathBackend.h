// SPDX-License-Identifier: Apache-2.0
//
// The file engine's paths as backends. At submission every backend scores
// the request; the highest score serves it (hipFile's scheme), or the one
// OMPX_IO_PATH forces if it does not refuse. A worker then runs each chunk
// on the request's backend.
//   - direct (IOPathTy::HostAddressable): pread/pwrite straight into
//     host-addressable device memory;
//   - fastpath: the vendor's storage <-> GPU DMA (cuFile, AIS);
//   - staged:   pread into a worker's pinned ring, then an async copy.
#ifndef OFFLOADIO_IO_IOPATHBACKEND_H
#define OFFLOADIO_IO_IOPATHBACKEND_H

#include "offloadio/ABI.h"
#include "offloadio/io/IOConfig.h"

#include <memory>
#include <string>
#include <sys/stat.h>
#include <sys/types.h>

namespace offloadio {

class IODeviceTy;
class IOFastpathTy;
class IOLogTy;
class IORefusedFileSystemsTy;
class IORequestTy;
struct IOStatsTy;
class IOWorkerStagingTy;
class SysTy;

/// The request a backend scores.
struct IOPathQueryTy {
  int Fd;             ///< The caller's descriptor.
  const void *DevPtr; ///< The buffer.
  size_t Count;
  off_t Offset;
  bool Append;      ///< A write to an O_APPEND descriptor.
  AllocKindTy Kind; ///< The buffer's kind.
  /// What fstat said of Fd at the checks, or null: a backend asks itself.
  const struct stat *St = nullptr;
};

/// One path of the engine.
class IOPathBackendTy {
public:
  /// The score of a path that cannot serve a request.
  static constexpr int Refused = -1;

  virtual ~IOPathBackendTy();
  /// The path this backend is.
  virtual IOPathTy path() const = 0;
  /// Whether the device has this path at all; if not, \p Why says why.
  virtual bool available(std::string &Why) const = 0;
  /// How well this path serves \p Q: the highest score wins; Refused, with
  /// the reason in \p Why when \p Why is not null, if it cannot. Callers
  /// that will not show the reason pass null: building it costs more than
  /// the score.
  virtual int score(const IOPathQueryTy &Q, std::string *Why) = 0;
  /// Move chunk \p Index of \p R and record its result in \p R. Returns
  /// false if the chunk must be run on the staged path instead.
  virtual bool runChunk(IORequestTy &R, size_t Index,
                        IOWorkerStagingTy &Staging) = 0;
};

/// pread/pwrite into device memory the host addresses.
std::unique_ptr<IOPathBackendTy>
makeHostAddressablePath(IODeviceTy &Device, SysTy &Sys, IOStatsTy &Stats);
/// The vendor's storage DMA; \p Fastpath may be null (the path is refused).
/// File systems it gave up on are kept in \p Refused.
std::unique_ptr<IOPathBackendTy>
makeFastpathPath(IODeviceTy &Device, SysTy &Sys, IOStatsTy &Stats,
                 IOFastpathTy *Fastpath, IORefusedFileSystemsTy &Refused,
                 const IOLogTy &Log);
/// Through a worker's pinned ring and stream.
std::unique_ptr<IOPathBackendTy> makeStagedPath(SysTy &Sys, IOStatsTy &Stats);

/// Count \p Bytes moved for \p R on \p Path.
void countBytes(IOStatsTy &Stats, const IORequestTy &R, IOPathTy Path,
                size_t Bytes);

} // namespace offloadio

#endif // OFFLOADIO_IO_IOPATHBACKEND_H

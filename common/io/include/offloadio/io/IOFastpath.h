// SPDX-License-Identifier: Apache-2.0
//
// The vendor's storage <-> GPU DMA (cuFile, AIS) as a backend offers it to
// the file engine, and the log the engine hands it for its info lines.
#ifndef OFFLOADIO_IO_IOFASTPATH_H
#define OFFLOADIO_IO_IOFASTPATH_H

#include "offloadio/Error.h"

#include <cstdint>
#include <string>
#include <sys/types.h>

namespace offloadio {

/// The engine's info lines ("offload-io(<plugin>)[<pid>] device N: ...",
/// MessagePrefix.h), printed when OMPX_IO_INFO is set. Fastpaths write
/// through it instead of reading the setting themselves.
class IOLogTy {
public:
  IOLogTy(std::string PluginName, int32_t DeviceId, bool Enabled)
      : PluginName(std::move(PluginName)), DeviceId(DeviceId),
        Enabled(Enabled) {}
  /// Whether lines are printed.
  bool enabled() const { return Enabled; }
  /// Print \p Msg as one line, if enabled.
  void print(const std::string &Msg) const;

private:
  std::string PluginName;
  int32_t DeviceId;
  bool Enabled;
};

/// Vendor storage DMA offered by a backend.
class IOFastpathTy {
public:
  virtual ~IOFastpathTy();
  /// The vendor's name of the path ("cuFile"), for messages.
  virtual const char *name() const = 0;
  /// Whether the fastpath can serve \p Fd with this buffer and range; on
  /// false, \p Why says why not.
  virtual bool accepts(int Fd, const void *DevPtr, size_t Count, off_t Offset,
                       std::string &Why, const IOLogTy &Log) = 0;
  /// Read into device memory; returns bytes read (short at end of file).
  /// ENODEV, EREMOTEIO and ENOTSUP say the file system cannot be served.
  virtual Expected<size_t> read(int Fd, void *DevPtr, size_t Count,
                                off_t Offset, const IOLogTy &Log) = 0;
  /// Write from device memory; errors as for read.
  virtual Error write(int Fd, const void *DevPtr, size_t Count, off_t Offset,
                      const IOLogTy &Log) = 0;
};

} // namespace offloadio

#endif // OFFLOADIO_IO_IOFASTPATH_H

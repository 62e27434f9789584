// SPDX-License-Identifier: Apache-2.0
//
// File systems a fastpath gave up on (ENODEV, EREMOTEIO, ENOTSUP): later
// requests on them go to the staged path at once instead of trying the
// vendor call again, which only costs time.
#ifndef OFFLOADIO_IO_IOREFUSEDFILESYSTEMS_H
#define OFFLOADIO_IO_IOREFUSEDFILESYSTEMS_H

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <sys/stat.h>
#include <sys/types.h>

namespace offloadio {

/// The refused file systems of one engine, with the reason of each.
class IORefusedFileSystemsTy {
public:
  /// The key of the file \p St describes: its file system (st_dev), or the
  /// device itself for a block device, whose st_dev is only devtmpfs.
  static dev_t keyOf(const struct stat &St) {
    return S_ISBLK(St.st_mode) ? St.st_rdev : St.st_dev;
  }
  /// Remember \p Key with \p Reason; true if it was not known before (the
  /// first reason stays).
  bool refuse(dev_t Key, std::string Reason);
  /// Why \p Key was refused, if it was.
  std::optional<std::string> reasonFor(dev_t Key) const;
  /// Number of refused keys.
  size_t size() const;

private:
  mutable std::mutex Lock;
  std::map<dev_t, std::string> Reasons;
};

} // namespace offloadio

#endif // OFFLOADIO_IO_IOREFUSEDFILESYSTEMS_H

// SPDX-License-Identifier: Apache-2.0
//
// The initial device (the host) as libompx_io serves it: its number, the
// system calls of its transfers, and its counters. Its transfers are plain
// pread/pwrite on host memory (HostTransfer.h), all on the host path.
#ifndef OMPX_IO_INITIALDEVICE_H
#define OMPX_IO_INITIALDEVICE_H

#include "HostTransfer.h"
#include "ompx_io.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <sys/types.h>

namespace ompxio {

/// The initial device's transfers and their counters.
class InitialDeviceTy {
public:
  /// The initial device number of the running OpenMP program
  /// (omp_get_initial_device), -1 when no OpenMP runtime is loaded.
  int number();

  /// The system calls of the initial device's transfers and of the
  /// library's checks of a descriptor.
  offloadio::SysTy &sys() { return Sys; }

  /// A transfer of host memory on device \p Device (this one) with
  /// pread/pwrite on the descriptor \p Facts describes, checked and run as
  /// runHostTransfer does it, and counted unless it was refused.
  HostOutcomeTy transfer(const offloadio::DescriptorFactsTy &Facts,
                         bool IsWrite, void *Buf, size_t Count, off_t Offset,
                         int Device);

  /// The counters: its transfers, all on the host path; never a fallback.
  void stats(ompx_io_stats_t &Out) const;

private:
  offloadio::SysTy Sys;
  /// Bytes and requests, reads [0] and writes [1].
  std::atomic<uint64_t> Bytes[2] = {};
  std::atomic<uint64_t> Requests[2] = {};
};

} // namespace ompxio

#endif // OMPX_IO_INITIALDEVICE_H

// SPDX-License-Identifier: Apache-2.0
//
// The parts of libompx_io's state (ompx_io.cpp) that the batch calls
// (Batch.cpp) use: devices resolved to their plugins, and the initial
// device's transfers.
#ifndef OMPX_IO_LIBRARY_H
#define OMPX_IO_LIBRARY_H

#include "HostTransfer.h"
#include "PluginDirectory.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <sys/types.h>

namespace ompxio {

/// The offload-io plugin and local number of OpenMP device \p Device into
/// \p Ref; false when no offload-io plugin serves it.
bool resolveDevice(int Device, DeviceRefTy &Ref);

/// The initial device number of the running OpenMP program.
int initialDeviceNumber();

/// The system calls of the library's own transfers and checks.
offloadio::SysTy &librarySys();

/// A transfer of host memory (the initial device, \p Device) with
/// pread/pwrite on the descriptor \p Facts describes, checked and run as
/// ompx_target_pread does it there, and counted in its statistics unless
/// it was refused.
HostOutcomeTy countedHostTransfer(const offloadio::DescriptorFactsTy &Facts,
                                  bool IsWrite, void *Buf, size_t Count,
                                  off_t Offset, int Device);

/// Why no offload-io plugin serves \p Device for \p Call (and, the first
/// time, the warning on stderr that explainNotServed prints).
std::string notServedMessage(const char *Call, int Device);

} // namespace ompxio

#endif // OMPX_IO_LIBRARY_H

// SPDX-License-Identifier: Apache-2.0
//
// libompx_io's state (Library.cpp), one per process: the plugins found and
// the devices resolved, the initial device, and the requests in flight;
// and what the calls of the other files use of it.
#ifndef OMPX_IO_LIBRARY_H
#define OMPX_IO_LIBRARY_H

#include "HostTransfer.h"
#include "PluginDirectory.h"
#include "Requests.h"
#include "ompx_io.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <sys/types.h>

/// Defines a public call of libompx_io (include/ompx_io*.h): the library's
/// only exported symbols.
#define OMPX_API extern "C" __attribute__((visibility("default")))

namespace ompxio {

/// The offload-io plugin and local number of OpenMP device \p Device into
/// \p Ref; false when no offload-io plugin serves it.
bool resolveDevice(int Device, DeviceRefTy &Ref);

/// The first offload-io plugin libomptarget loaded, or null: for the calls
/// that concern the process rather than a device.
const PluginTy *anyPlugin();

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

/// The counters of the initial device.
void initialDeviceStats(ompx_io_stats_t &Out);

/// The requests in flight.
RequestRegistryTy &requestRegistry();

/// Why no offload-io plugin serves \p Device for \p Call (none: a call
/// about the process), and, the first time, the warning on stderr that
/// explainNotServed prints.
std::string notServedMessage(const char *Call, std::optional<int> Device);

} // namespace ompxio

#endif // OMPX_IO_LIBRARY_H

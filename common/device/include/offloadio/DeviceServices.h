// SPDX-License-Identifier: Apache-2.0
//
// DeviceServicesTy: the plugin-wide services a device uses, each by its own
// narrow type, so that the device framework names what it depends on
// instead of reaching into the whole plugin.
#ifndef OFFLOADIO_DEVICESERVICES_H
#define OFFLOADIO_DEVICESERVICES_H

#include "offloadio/DeviceRuntimeABI.h"
#include "offloadio/HostTopology.h"
#include "offloadio/Info.h"
#include "offloadio/JITCompiler.h"
#include "offloadio/ParallelFor.h"
#include "offloadio/PinnedMemoryMap.h"
#include "offloadio/Profile.h"
#include "offloadio/Settings.h"
#include "offloadio/ThreadAffinity.h"

#include <string>

namespace offloadio {

/// What a device (GenericDeviceTy, its transfers, kernels and file adapter)
/// uses of its plugin. Handed out by GenericPluginTy::getDeviceServices;
/// everything referenced outlives the plugin's devices.
struct DeviceServicesTy {
  /// The plugin's short name ("x86_64", "cuda", "amdgpu").
  const std::string &PluginName;
  /// Info and error lines.
  InfoTy &Info;
  /// Time spent in the stages of staged copies (OFFLOADIO_PROFILE).
  TimeProfileTy &Profile;
  /// The plugin-wide map of locked host regions.
  PinnedMemoryMapTy &PinnedMap;
  /// Pinning of host memory that is not in the map, for one copy (the
  /// backend's call).
  PinningOpsTy &Pinning;
  /// Host threads that share the memcpy side of large staged copies.
  ParallelForTy &CopyThreads;
  /// LIBOMPTARGET_LOCK_MAPPED_HOST_BUFFERS.
  MappedLockPolicyTy MappedLocks;
  /// The device-runtime conventions of the libomptarget served.
  const DeviceRuntimeABITy &RuntimeABI;
  /// The JIT of bitcode images, shared by the plugin's devices so that an
  /// image is compiled once per processor.
  JITCompilerTy &JIT;
  /// Where the host's NUMA nodes and PCI devices are read; null when
  /// OFFLOADIO_NUMA_PLACEMENT is off.
  const HostTopologyTy *Topology;
  /// The affinity system calls of the plugin's threads.
  AffinitySysTy &Affinity;
};

} // namespace offloadio

#endif // OFFLOADIO_DEVICESERVICES_H

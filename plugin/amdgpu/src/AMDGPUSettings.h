// SPDX-License-Identifier: Apache-2.0
//
// Every environment variable of the AMDGPU plugin: those of a device, read
// when the device initialises, and that of the AIS file fastpath, read when
// a device first makes its fastpath (the first file transfer). Each is
// declared, with its default and valid values, in offloadio/Settings.def.
#ifndef OFFLOADIO_AMDGPU_AMDGPUSETTINGS_H
#define OFFLOADIO_AMDGPU_AMDGPUSETTINGS_H

#include "offloadio/SettingTable.h"

#include <cstdint>

namespace offloadio {
namespace amdgpu {

/// The settings of one AMDGPU device.
struct AMDGPUSettingsTy {
  /// LIBOMPTARGET_STACK_SIZE: private bytes per work-item for kernels with
  /// dynamic stacks, as DeviceRuntimeABITy::privateSegmentSize applies it.
  /// A size (K/M/G suffixes) from 0 to 1M; 0 (the default): unset.
  uint64_t DynamicStackSize = settingDecl(SettingId::AMDGPUStackSize).Default;

  /// LIBOMPTARGET_HEAP_SIZE: bytes of device memory each image's
  /// device-side malloc allocates from, under libomptarget 18 (whose device
  /// runtime carves malloc from such a pool). A size; default 512M.
  uint64_t HeapSize = settingDecl(SettingId::AMDGPUHeapSize).Default;

  /// LIBOMPTARGET_AMDGPU_NUM_HSA_QUEUES: HSA queues per device, shared by
  /// the streams round-robin. An integer from 1 to 64; default 4.
  int64_t NumQueues = settingDecl(SettingId::AMDGPUNumQueues).Default;

  /// LIBOMPTARGET_AMDGPU_HSA_QUEUE_SIZE: packets per queue, as asked; the
  /// device rounds it to a power of two within the agent's maximum. An
  /// integer from 64 to queueSizeMax(the agent's maximum); default 512.
  int64_t QueueSize = settingDecl(SettingId::AMDGPUQueueSize).Default;
  /// The largest valid QueueSize for an agent whose queues hold at most
  /// \p AgentQueueMax packets (0 when the agent does not say): never below
  /// the declared minimum.
  static constexpr int64_t queueSizeMax(uint32_t AgentQueueMax) {
    constexpr int64_t Min = settingDecl(SettingId::AMDGPUQueueSize).Min;
    return AgentQueueMax > Min ? AgentQueueMax : Min;
  }

  /// Read every variable above once, in the order they are declared, for an
  /// agent whose queues hold at most \p AgentQueueMax packets; invalid
  /// values are reported on stderr and give the default.
  static AMDGPUSettingsTy fromEnv(uint32_t AgentQueueMax);
};

/// The settings of one device's AIS file fastpath.
struct AMDGPUFastpathSettingsTy {
  /// LIBOMPTARGET_AMDGPU_AIS_ANY_FILESYSTEM: the fastpath also tries
  /// regular files on filesystems it has not been verified on (not only xfs
  /// and ext4 data=ordered). Boolean; default off.
  bool AnyFilesystem = settingDecl(SettingId::AMDGPUAnyFilesystem).Default != 0;

  /// Read the variable above once; an invalid value is reported on stderr
  /// and gives the default.
  static AMDGPUFastpathSettingsTy fromEnv();
};

} // namespace amdgpu
} // namespace offloadio

#endif // OFFLOADIO_AMDGPU_AMDGPUSETTINGS_H

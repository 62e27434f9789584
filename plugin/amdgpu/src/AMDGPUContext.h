// SPDX-License-Identifier: Apache-2.0
//
// What every part of the amdgpu backend shares: the HSA call table, the CPU
// agent and its pools, the GPU agents, the signal pool and the clock.
// Owned by the plugin, which outlives every device, stream and event.
#ifndef OFFLOADIO_AMDGPU_AMDGPUCONTEXT_H
#define OFFLOADIO_AMDGPU_AMDGPUCONTEXT_H

#include "AMDGPUSignal.h"
#include "HSAApi.h"

#include <memory>
#include <string>
#include <vector>

namespace offloadio {
namespace amdgpu {

/// One GPU agent, as discovered at plugin initialisation.
struct AMDGPUAgentInfoTy {
  /// The agent.
  hsa_agent_t Agent = {0};
  /// HSA_AGENT_INFO_NAME, e.g. "gfx90a".
  std::string Name;
  /// The ISA target after "amdgcn-amd-amdhsa--", e.g. "gfx90a:xnack-".
  std::string Target;
  /// Coarse-grained global pool: device memory (DEVICE/DEFAULT kinds).
  hsa_amd_memory_pool_t DevicePool = {0};
  /// Other GPUs that can be granted access to this GPU's device memory.
  std::vector<hsa_agent_t> Peers;
};

/// Plugin-wide HSA state.
struct AMDGPUContextTy {
  explicit AMDGPUContextTy(std::unique_ptr<HSAApiTy> Loaded)
      : ApiStorage(std::move(Loaded)), Api(*ApiStorage), Signals(Api) {}

  /// Keeps the call table alive.
  std::unique_ptr<HSAApiTy> ApiStorage;
  /// The HSA calls.
  const HSAApiTy &Api;
  /// The CPU agent whose pools hold host-side memory.
  hsa_agent_t CpuAgent = {0};
  /// Fine-grained CPU pool: HOST/SHARED allocations and locked memory.
  hsa_amd_memory_pool_t HostPool = {0};
  /// CPU pool for kernel arguments (KERNARG_INIT).
  hsa_amd_memory_pool_t KernargPool = {0};
  /// The GPUs, indexed by device number.
  std::vector<AMDGPUAgentInfoTy> Gpus;
  /// The same agents, contiguous, for calls taking an agent list.
  std::vector<hsa_agent_t> GpuAgents;
  /// Completion signals of every device.
  AMDGPUSignalPoolTy Signals;
  /// System timestamp ticks per millisecond (for wait timeouts).
  uint64_t TicksPerMs = 1000000;
};

} // namespace amdgpu
} // namespace offloadio

#endif // OFFLOADIO_AMDGPU_AMDGPUCONTEXT_H

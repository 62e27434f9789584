// SPDX-License-Identifier: Apache-2.0
//
// hsa-emu: the agents (a CPU and HSA_EMU_NUM_GPUS GPUs), the ISA every GPU
// reports, and the description of their memory pools.
#include "Attributes.h"
#include "Emu.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <unistd.h>

using namespace hsaemu;

namespace {

/// HSA_AMD_AGENT_INFO_TIMESTAMP_FREQUENCY (uint64_t, Hz), newer than the
/// ROCm 5.2 headers the emulation is built against.
constexpr int AgentInfoTimestampFrequency = 0xA016;

/// The rate of the steady counter of a GPU of processor \p Arch, which
/// ROCr reads from the kernel driver: 100 MHz on gfx940-gfx942 and RDNA,
/// 25 MHz on the other GCN 5 and CDNA parts.
uint64_t gpuTimestampFrequency(const std::string &Arch) {
  if (Arch.rfind("gfx9", 0) == 0 && Arch.rfind("gfx94", 0) != 0)
    return 25000000;
  return 100000000;
}

/// The single ISA every GPU agent reports.
struct IsaTy {
  std::string Name;
};
IsaTy *TheIsa = nullptr;

PoolTy *addPool(TopologyTy &T, AgentTy &Owner, hsa_amd_segment_t Segment,
                uint32_t Flags, uint64_t Size, bool AllocAllowed) {
  auto Pool = std::make_unique<PoolTy>();
  Pool->Owner = &Owner;
  Pool->Segment = Segment;
  Pool->GlobalFlags = Flags;
  Pool->Size = Size;
  Pool->AllocAllowed = AllocAllowed;
  Owner.Pools.push_back(Pool.get());
  T.Pools.push_back(std::move(Pool));
  return T.Pools.back().get();
}

} // namespace

TopologyTy *hsaemu::buildTopology(const ConfigTy &C) {
  auto *T = new TopologyTy();
  uint64_t HostMemory =
      C.HostMemory ? C.HostMemory
                   : uint64_t(sysconf(_SC_PHYS_PAGES)) *
                         uint64_t(sysconf(_SC_PAGESIZE));

  // ROCr lists CPU agents first. Its CPU agent has a fine-grained pool that
  // also serves kernel arguments, and a coarse-grained one.
  auto Cpu = std::make_unique<AgentTy>();
  Cpu->Type = HSA_DEVICE_TYPE_CPU;
  Cpu->Node = 0;
  Cpu->Name = "hsa-emu CPU";
  Cpu->ProductName = "hsa-emu CPU";
  addPool(*T, *Cpu, HSA_AMD_SEGMENT_GLOBAL,
          HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT |
              HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED,
          HostMemory, true);
  addPool(*T, *Cpu, HSA_AMD_SEGMENT_GLOBAL,
          HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED, HostMemory, true);
  T->Cpu = Cpu.get();
  T->Agents.push_back(std::move(Cpu));

  // Each GPU: coarse-grained device memory and the group (LDS) segment.
  for (unsigned I = 0; I < C.NumGpus; ++I) {
    auto Gpu = std::make_unique<AgentTy>();
    Gpu->Type = HSA_DEVICE_TYPE_GPU;
    Gpu->Node = I + 1;
    Gpu->GpuIndex = I;
    Gpu->Name = C.GpuArch;
    Gpu->ProductName = "hsa-emu " + C.GpuArch + " (CPU emulation)";
    addPool(*T, *Gpu, HSA_AMD_SEGMENT_GLOBAL,
            HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED, C.GpuMemory, true);
    addPool(*T, *Gpu, HSA_AMD_SEGMENT_GROUP, 0, 64 * 1024, false);
    T->Agents.push_back(std::move(Gpu));
  }
  TheIsa = new IsaTy{"amdgcn-amd-amdhsa--" + C.GpuArch};
  return T;
}

extern "C" {

hsa_status_t hsa_iterate_agents(hsa_status_t (*Callback)(hsa_agent_t, void *),
                                void *Data) {
  CHECK_INIT();
  if (!Callback)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  for (auto &A : topology().Agents) {
    hsa_status_t S = Callback(A->handle(), Data);
    if (S != HSA_STATUS_SUCCESS)
      return S;
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_agent_get_info(hsa_agent_t AgentHandle,
                                hsa_agent_info_t Attribute, void *Value) {
  CHECK_INIT();
  AgentTy *A = lookupAgent(AgentHandle);
  if (!A)
    return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!Value)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  const bool Gpu = A->isGpu();
  switch (rawAttribute(Attribute)) {
  case HSA_AGENT_INFO_NAME:
    return putName(Value, A->Name, 64);
  case HSA_AGENT_INFO_VENDOR_NAME:
    return putName(Value, Gpu ? "AMD" : "CPU", 64);
  case HSA_AGENT_INFO_FEATURE:
    return put<hsa_agent_feature_t>(Value,
                                    Gpu ? HSA_AGENT_FEATURE_KERNEL_DISPATCH
                                        : hsa_agent_feature_t(0));
  case HSA_AGENT_INFO_MACHINE_MODEL:
    return put<hsa_machine_model_t>(Value, HSA_MACHINE_MODEL_LARGE);
  case HSA_AGENT_INFO_PROFILE:
    // Discrete GPUs are base profile in ROCr.
    return put<hsa_profile_t>(Value, Gpu ? HSA_PROFILE_BASE : HSA_PROFILE_FULL);
  case HSA_AGENT_INFO_DEFAULT_FLOAT_ROUNDING_MODE:
  case HSA_AGENT_INFO_BASE_PROFILE_DEFAULT_FLOAT_ROUNDING_MODES:
    return put<hsa_default_float_rounding_mode_t>(
        Value, HSA_DEFAULT_FLOAT_ROUNDING_MODE_NEAR);
  case HSA_AGENT_INFO_FAST_F16_OPERATION:
    return put<bool>(Value, Gpu);
  case HSA_AGENT_INFO_WAVEFRONT_SIZE:
    return put<uint32_t>(Value, Gpu ? 64 : 0);
  case HSA_AGENT_INFO_WORKGROUP_MAX_DIM: {
    uint16_t Dims[3] = {uint16_t(Gpu ? 1024 : 0), uint16_t(Gpu ? 1024 : 0),
                        uint16_t(Gpu ? 1024 : 0)};
    std::memcpy(Value, Dims, sizeof(Dims));
    return HSA_STATUS_SUCCESS;
  }
  case HSA_AGENT_INFO_WORKGROUP_MAX_SIZE:
    return put<uint32_t>(Value, Gpu ? 1024 : 0);
  case HSA_AGENT_INFO_GRID_MAX_DIM:
    return put<hsa_dim3_t>(Value,
                           Gpu ? hsa_dim3_t{UINT32_MAX, UINT32_MAX, UINT32_MAX}
                               : hsa_dim3_t{0, 0, 0});
  case HSA_AGENT_INFO_GRID_MAX_SIZE:
    return put<uint32_t>(Value, Gpu ? UINT32_MAX : 0);
  case HSA_AGENT_INFO_FBARRIER_MAX_SIZE:
    return put<uint32_t>(Value, Gpu ? 32 : 0);
  case HSA_AGENT_INFO_QUEUES_MAX:
    return put<uint32_t>(Value, Gpu ? 128 : 0);
  case HSA_AGENT_INFO_QUEUE_MIN_SIZE:
    return put<uint32_t>(Value, Gpu ? 64 : 0);
  case HSA_AGENT_INFO_QUEUE_MAX_SIZE:
    return put<uint32_t>(Value, Gpu ? 131072 : 0);
  case HSA_AGENT_INFO_QUEUE_TYPE:
    return put<hsa_queue_type32_t>(Value, HSA_QUEUE_TYPE_MULTI);
  case HSA_AGENT_INFO_NODE:
    return put<uint32_t>(Value, A->Node);
  case HSA_AGENT_INFO_DEVICE:
    return put<hsa_device_type_t>(Value, A->Type);
  case HSA_AGENT_INFO_CACHE_SIZE: {
    uint32_t Sizes[4] = {16 * 1024, 8 * 1024 * 1024, 0, 0};
    std::memcpy(Value, Sizes, sizeof(Sizes));
    return HSA_STATUS_SUCCESS;
  }
  case HSA_AGENT_INFO_ISA:
    if (!Gpu)
      return HSA_STATUS_ERROR_INVALID_AGENT;
    return put<hsa_isa_t>(Value, hsa_isa_t{reinterpret_cast<uint64_t>(TheIsa)});
  case HSA_AGENT_INFO_EXTENSIONS:
    std::memset(Value, 0, 128);
    return HSA_STATUS_SUCCESS;
  case HSA_AGENT_INFO_VERSION_MAJOR:
    return put<uint16_t>(Value, 1);
  case HSA_AGENT_INFO_VERSION_MINOR:
    return put<uint16_t>(Value, 1);
  case HSA_AMD_AGENT_INFO_CHIP_ID:
    return put<uint32_t>(Value, Gpu ? 0x740f : 0);
  case HSA_AMD_AGENT_INFO_CACHELINE_SIZE:
    return put<uint32_t>(Value, Gpu ? 128 : 64);
  case HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT:
    return put<uint32_t>(
        Value, Gpu ? config().ComputeUnits
                   : uint32_t(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN))));
  case HSA_AMD_AGENT_INFO_MAX_CLOCK_FREQUENCY:
    return put<uint32_t>(Value, Gpu ? 1700 : 2000);
  case HSA_AMD_AGENT_INFO_DRIVER_NODE_ID:
    return put<uint32_t>(Value, A->Node);
  case HSA_AMD_AGENT_INFO_MAX_ADDRESS_WATCH_POINTS:
    return put<uint32_t>(Value, 0);
  case HSA_AMD_AGENT_INFO_BDFID:
    return put<uint32_t>(Value, Gpu ? 0x0100 + A->GpuIndex * 0x100 : 0);
  case HSA_AMD_AGENT_INFO_MEMORY_WIDTH:
    return put<uint32_t>(Value, Gpu ? 4096 : 0);
  case HSA_AMD_AGENT_INFO_MEMORY_MAX_FREQUENCY:
    return put<uint32_t>(Value, Gpu ? 1600 : 0);
  case HSA_AMD_AGENT_INFO_PRODUCT_NAME:
    return putName(Value, A->ProductName, 64);
  case HSA_AMD_AGENT_INFO_MAX_WAVES_PER_CU:
    return put<uint32_t>(Value, Gpu ? 32 : 0);
  case HSA_AMD_AGENT_INFO_NUM_SIMDS_PER_CU:
    return put<uint32_t>(Value, Gpu ? 4 : 0);
  case HSA_AMD_AGENT_INFO_NUM_SHADER_ENGINES:
    return put<uint32_t>(Value, Gpu ? 8 : 0);
  case HSA_AMD_AGENT_INFO_NUM_SHADER_ARRAYS_PER_SE:
    return put<uint32_t>(Value, Gpu ? 1 : 0);
  case HSA_AMD_AGENT_INFO_DOMAIN:
    return put<uint32_t>(Value, 0);
  case HSA_AMD_AGENT_INFO_COOPERATIVE_QUEUES:
    return put<bool>(Value, false);
  case HSA_AMD_AGENT_INFO_UUID: {
    char Uuid[21];
    std::snprintf(Uuid, sizeof(Uuid), Gpu ? "GPU-EMU%013u" : "CPU-XX",
                  A->GpuIndex);
    std::memcpy(Value, Uuid, sizeof(Uuid));
    return HSA_STATUS_SUCCESS;
  }
  case HSA_AMD_AGENT_INFO_ASIC_REVISION:
    return put<uint32_t>(Value, 1);
  case HSA_AMD_AGENT_INFO_SVM_DIRECT_HOST_ACCESS:
    return put<bool>(Value, false);
  case AgentInfoTimestampFrequency:
    // LLVM 17's plugin fails a device without it. The CPU agent has no
    // such counter.
    if (!Gpu)
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    return put<uint64_t>(Value, gpuTimestampFrequency(A->Name));
  default:
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
}

hsa_status_t hsa_agent_iterate_isas(hsa_agent_t AgentHandle,
                                    hsa_status_t (*Callback)(hsa_isa_t, void *),
                                    void *Data) {
  CHECK_INIT();
  AgentTy *A = lookupAgent(AgentHandle);
  if (!A)
    return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!Callback)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (!A->isGpu())
    return HSA_STATUS_SUCCESS;
  return Callback(hsa_isa_t{reinterpret_cast<uint64_t>(TheIsa)}, Data);
}

hsa_status_t hsa_isa_get_info_alt(hsa_isa_t Isa, hsa_isa_info_t Attribute,
                                  void *Value) {
  CHECK_INIT();
  if (Isa.handle != reinterpret_cast<uint64_t>(TheIsa))
    return HSA_STATUS_ERROR_INVALID_ISA;
  if (!Value)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  switch (int(Attribute)) {
  case HSA_ISA_INFO_NAME_LENGTH:
    // Without the terminating NUL, as documented; a NUL follows the name.
    return put<uint32_t>(Value, uint32_t(TheIsa->Name.size()));
  case HSA_ISA_INFO_NAME:
    std::memcpy(Value, TheIsa->Name.c_str(), TheIsa->Name.size() + 1);
    return HSA_STATUS_SUCCESS;
  case HSA_ISA_INFO_MACHINE_MODELS: {
    bool Models[2] = {false, true};
    std::memcpy(Value, Models, sizeof(Models));
    return HSA_STATUS_SUCCESS;
  }
  case HSA_ISA_INFO_PROFILES: {
    bool Profiles[2] = {true, true};
    std::memcpy(Value, Profiles, sizeof(Profiles));
    return HSA_STATUS_SUCCESS;
  }
  case HSA_ISA_INFO_WORKGROUP_MAX_SIZE:
    return put<uint32_t>(Value, 1024);
  case HSA_ISA_INFO_GRID_MAX_SIZE:
    return put<uint32_t>(Value, UINT32_MAX);
  default:
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
}

hsa_status_t hsa_isa_from_name(const char *Name, hsa_isa_t *Isa) {
  CHECK_INIT();
  if (!Name || !Isa)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  if (TheIsa->Name != Name)
    return HSA_STATUS_ERROR_INVALID_ISA_NAME;
  Isa->handle = reinterpret_cast<uint64_t>(TheIsa);
  return HSA_STATUS_SUCCESS;
}

//===----------------------------------------------------------------------===//
// Memory pool descriptions
//===----------------------------------------------------------------------===//

hsa_status_t hsa_amd_agent_iterate_memory_pools(
    hsa_agent_t AgentHandle,
    hsa_status_t (*Callback)(hsa_amd_memory_pool_t, void *), void *Data) {
  CHECK_INIT();
  AgentTy *A = lookupAgent(AgentHandle);
  if (!A)
    return HSA_STATUS_ERROR_INVALID_AGENT;
  if (!Callback)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  for (PoolTy *P : A->Pools) {
    hsa_status_t S = Callback(P->handle(), Data);
    if (S != HSA_STATUS_SUCCESS)
      return S;
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_memory_pool_get_info(hsa_amd_memory_pool_t PoolHandle,
                                          hsa_amd_memory_pool_info_t Attribute,
                                          void *Value) {
  CHECK_INIT();
  PoolTy *P = lookupPool(PoolHandle);
  if (!P)
    return hsa_status_t(HSA_STATUS_ERROR_INVALID_MEMORY_POOL);
  if (!Value)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  switch (int(Attribute)) {
  case HSA_AMD_MEMORY_POOL_INFO_SEGMENT:
    return put<hsa_amd_segment_t>(Value, P->Segment);
  case HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS:
    // The HSA specification leaves the flags of a non-global segment
    // undefined; ROCr answers 0 with success, and clients (LLVM 16's own
    // plugin among them) read them from every pool.
    return put<uint32_t>(Value, P->Segment == HSA_AMD_SEGMENT_GLOBAL
                                    ? P->GlobalFlags
                                    : 0);
  case HSA_AMD_MEMORY_POOL_INFO_SIZE:
    return put<size_t>(Value, size_t(P->Size));
  case HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED:
    return put<bool>(Value, P->AllocAllowed);
  case HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_GRANULE:
  case HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALIGNMENT:
    return put<size_t>(Value, P->AllocAllowed ? 4096 : 0);
  case HSA_AMD_MEMORY_POOL_INFO_ACCESSIBLE_BY_ALL:
    return put<bool>(Value, false);
  case HSA_AMD_MEMORY_POOL_INFO_ALLOC_MAX_SIZE:
    return put<size_t>(Value, P->AllocAllowed ? size_t(P->Size) : 0);
  default:
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
}

hsa_status_t hsa_amd_agent_memory_pool_get_info(
    hsa_agent_t AgentHandle, hsa_amd_memory_pool_t PoolHandle,
    hsa_amd_agent_memory_pool_info_t Attribute, void *Value) {
  CHECK_INIT();
  AgentTy *A = lookupAgent(AgentHandle);
  if (!A)
    return HSA_STATUS_ERROR_INVALID_AGENT;
  PoolTy *P = lookupPool(PoolHandle);
  if (!P)
    return hsa_status_t(HSA_STATUS_ERROR_INVALID_MEMORY_POOL);
  if (!Value)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  switch (int(Attribute)) {
  case HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS: {
    hsa_amd_memory_pool_access_t Access;
    if (P->Owner == A)
      Access = HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT;
    else if (P->Segment != HSA_AMD_SEGMENT_GLOBAL)
      Access = HSA_AMD_MEMORY_POOL_ACCESS_NEVER_ALLOWED;
    else
      // System memory for GPUs, and peer device memory, once allowed.
      Access = HSA_AMD_MEMORY_POOL_ACCESS_DISALLOWED_BY_DEFAULT;
    return put<hsa_amd_memory_pool_access_t>(Value, Access);
  }
  case HSA_AMD_AGENT_MEMORY_POOL_INFO_NUM_LINK_HOPS:
    // No link topology is emulated (LINK_INFO would need one entry per hop).
    return put<uint32_t>(Value, 0);
  default:
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
}

} // extern "C"

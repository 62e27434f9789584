// SPDX-License-Identifier: Apache-2.0
//
// hsa-emu: initialisation, agents, memory pool descriptions, ISAs, system
// information and status strings.
#include "Emu.h"

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

using namespace hsaemu;

namespace {

std::mutex InitLock;
int InitCount = 0;
/// Built once and never destroyed: hsa_shut_down only marks the runtime
/// uninitialised, so handles stay dereferenceable (ROCr would invalidate
/// them; use after shutdown is an error either way).
TopologyTy *Topology = nullptr;
ConfigTy *Config = nullptr;
std::atomic<bool> Initialized{false};
/// hsa_amd_register_system_event_handler registrations (under InitLock).
std::vector<std::pair<hsa_amd_system_event_callback_t, void *>>
    &SystemEventHandlers =
        *new std::vector<std::pair<hsa_amd_system_event_callback_t, void *>>();
const auto StartTime = std::chrono::steady_clock::now();

uint64_t envU64(const char *Name, uint64_t Default) {
  const char *V = std::getenv(Name);
  if (!V || !*V)
    return Default;
  char *End = nullptr;
  unsigned long long N = std::strtoull(V, &End, 0);
  if (End == V) {
    warn("ignoring %s='%s': not a number", Name, V);
    return Default;
  }
  switch (*End) {
  case 'k':
  case 'K':
    N <<= 10;
    break;
  case 'm':
  case 'M':
    N <<= 20;
    break;
  case 'g':
  case 'G':
    N <<= 30;
    break;
  default:
    break;
  }
  return N;
}

bool envBool(const char *Name) {
  const char *V = std::getenv(Name);
  return V && (!std::strcmp(V, "1") || !strcasecmp(V, "true") ||
               !strcasecmp(V, "on") || !strcasecmp(V, "yes"));
}

/// A boolean setting that may default to on: 1/true/on/yes or
/// 0/false/off/no; anything else is reported and keeps \p Default.
bool envOnOff(const char *Name, bool Default) {
  const char *V = std::getenv(Name);
  if (!V || !*V)
    return Default;
  for (const char *On : {"1", "true", "on", "yes"})
    if (!strcasecmp(V, On))
      return true;
  for (const char *Off : {"0", "false", "off", "no"})
    if (!strcasecmp(V, Off))
      return false;
  warn("ignoring %s='%s': expected on or off", Name, V);
  return Default;
}

ConfigTy *readConfig() {
  auto *C = new ConfigTy();
  C->NumGpus = unsigned(envU64("HSA_EMU_NUM_GPUS", C->NumGpus));
  if (C->NumGpus > 64)
    C->NumGpus = 64;
  if (const char *Arch = std::getenv("HSA_EMU_GPU_ARCH"); Arch && *Arch)
    C->GpuArch = Arch;
  C->ComputeUnits = uint32_t(envU64("HSA_EMU_COMPUTE_UNITS", C->ComputeUnits));
  C->GpuMemory = envU64("HSA_EMU_GPU_MEMORY", C->GpuMemory);
  C->HostMemory = envU64("HSA_EMU_HOST_MEMORY", C->HostMemory);
  C->Strict = envOnOff("HSA_EMU_STRICT", C->Strict);
  if (const char *M = std::getenv("HSA_EMU_MISUSE"); M && *M) {
    if (!std::strcmp(M, "error"))
      C->Misuse = MisuseModeTy::Error;
    else if (!std::strcmp(M, "abort"))
      C->Misuse = MisuseModeTy::Abort;
    else
      warn("ignoring HSA_EMU_MISUSE='%s': expected abort or error", M);
  }
  C->Trace = envBool("HSA_EMU_TRACE");
  if (const char *D = std::getenv("HSA_EMU_DISPATCH"); D && *D) {
    if (!std::strcmp(D, "noop"))
      C->DispatchNoop = true;
    else if (std::strcmp(D, "fail"))
      warn("ignoring HSA_EMU_DISPATCH='%s': expected fail or noop", D);
  }
  C->Ais = aisModeFromEnv(/*Warn=*/true);
  if (const char *Q = std::getenv("HSA_EMU_QUEUE_ERRORS"); Q && *Q) {
    if (!std::strcmp(Q, "stop"))
      C->StopFailedQueues = true;
    else if (std::strcmp(Q, "complete"))
      warn("ignoring HSA_EMU_QUEUE_ERRORS='%s': expected complete or stop", Q);
  }
  return C;
}

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

TopologyTy *buildTopology(const ConfigTy &C) {
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
  return T;
}

/// The single ISA every GPU agent reports.
struct IsaTy {
  std::string Name;
};
IsaTy *TheIsa = nullptr;

template <typename T> hsa_status_t put(void *Value, T V) {
  std::memcpy(Value, &V, sizeof(T));
  return HSA_STATUS_SUCCESS;
}

hsa_status_t putName(void *Value, const std::string &Name, size_t Capacity) {
  // Fixed-size character arrays of the HSA API (64 bytes for names).
  std::memset(Value, 0, Capacity);
  std::memcpy(Value, Name.data(), std::min(Name.size(), Capacity - 1));
  return HSA_STATUS_SUCCESS;
}

/// The attribute \p Attr as an integer. Callers pass extension attributes
/// (hsa_amd_agent_info_t, hsa_amd_system_info_t) through the core enum
/// parameter, outside the range of its enumerators, and reading such a value
/// as the enum type is undefined: copy its bytes instead.
template <typename EnumTy> int rawAttribute(const EnumTy &Attr) {
  static_assert(sizeof(EnumTy) == sizeof(int), "HSA enums are int-sized");
  int Raw;
  std::memcpy(&Raw, &Attr, sizeof(Raw));
  return Raw;
}

} // namespace

void hsaemu::warn(const char *Fmt, ...) {
  char Buffer[1024];
  va_list Args;
  va_start(Args, Fmt);
  std::vsnprintf(Buffer, sizeof(Buffer), Fmt, Args);
  va_end(Args);
  std::fprintf(stderr, "hsa-emu: %s\n", Buffer);
}

bool hsaemu::raiseMemoryFault(const AgentTy *Agent, uintptr_t Address,
                              const std::string &What) {
  std::vector<std::pair<hsa_amd_system_event_callback_t, void *>> Handlers;
  {
    std::lock_guard<std::mutex> Guard(InitLock);
    Handlers = SystemEventHandlers;
  }
  if (Handlers.empty())
    return false;
  // Said first: a handler may end the process (LLVM 16's plugin aborts).
  warn("GPU memory fault at %p: %s", reinterpret_cast<void *>(Address),
       What.c_str());
  hsa_amd_event_t Event;
  std::memset(&Event, 0, sizeof(Event));
  Event.event_type = HSA_AMD_GPU_MEMORY_FAULT_EVENT;
  Event.memory_fault.agent = Agent->handle();
  Event.memory_fault.virtual_address = Address;
  Event.memory_fault.fault_reason_mask = HSA_AMD_MEMORY_FAULT_PAGE_NOT_PRESENT;
  for (auto &[Callback, Data] : Handlers)
    Callback(&Event, Data);
  return !Handlers.empty();
}

const ConfigTy &hsaemu::config() { return *Config; }
const ConfigTy *hsaemu::configOrNull() { return Config; }
bool hsaemu::isInitialized() {
  return Initialized.load(std::memory_order_acquire);
}
TopologyTy &hsaemu::topology() { return *Topology; }

uint64_t hsaemu::timestampNow() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now() - StartTime)
                      .count());
}

AgentTy *hsaemu::lookupAgent(hsa_agent_t Agent) {
  if (!Topology)
    return nullptr;
  for (auto &A : Topology->Agents)
    if (reinterpret_cast<uint64_t>(A.get()) == Agent.handle)
      return A.get();
  return nullptr;
}

PoolTy *hsaemu::lookupPool(hsa_amd_memory_pool_t Pool) {
  if (!Topology)
    return nullptr;
  for (auto &P : Topology->Pools)
    if (reinterpret_cast<uint64_t>(P.get()) == Pool.handle)
      return P.get();
  return nullptr;
}

#define CHECK_INIT()                                                           \
  do {                                                                         \
    if (!isInitialized())                                                      \
      return HSA_STATUS_ERROR_NOT_INITIALIZED;                                 \
  } while (0)

extern "C" {

hsa_status_t hsa_init() {
  std::lock_guard<std::mutex> Guard(InitLock);
  if (InitCount == INT32_MAX)
    return HSA_STATUS_ERROR_REFCOUNT_OVERFLOW;
  if (InitCount++ == 0) {
    if (!Config)
      Config = readConfig();
    if (!Topology) {
      Topology = buildTopology(*Config);
      TheIsa = new IsaTy{"amdgcn-amd-amdhsa--" + Config->GpuArch};
    }
    Initialized.store(true, std::memory_order_release);
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_shut_down() {
  std::lock_guard<std::mutex> Guard(InitLock);
  if (InitCount == 0)
    return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (--InitCount == 0) {
    Initialized.store(false, std::memory_order_release);
    // ROCr drops the handlers with the runtime; their code may be unloaded
    // next (a plugin's dlclose).
    SystemEventHandlers.clear();
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_status_string(hsa_status_t Status, const char **String) {
  if (!String)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  const char *S = nullptr;
  switch (int(Status)) {
  case HSA_STATUS_SUCCESS:
    S = "HSA_STATUS_SUCCESS: The function has been executed successfully.";
    break;
  case HSA_STATUS_INFO_BREAK:
    S = "HSA_STATUS_INFO_BREAK: A traversal over a list of elements has been "
        "interrupted by the application before completing.";
    break;
  case HSA_STATUS_ERROR:
    S = "HSA_STATUS_ERROR: A generic error has occurred.";
    break;
  case HSA_STATUS_ERROR_INVALID_ARGUMENT:
    S = "HSA_STATUS_ERROR_INVALID_ARGUMENT: One of the actual arguments does "
        "not meet a precondition stated in the documentation of the "
        "corresponding formal argument.";
    break;
  case HSA_STATUS_ERROR_INVALID_QUEUE_CREATION:
    S = "HSA_STATUS_ERROR_INVALID_QUEUE_CREATION: The requested queue creation "
        "is not valid.";
    break;
  case HSA_STATUS_ERROR_INVALID_ALLOCATION:
    S = "HSA_STATUS_ERROR_INVALID_ALLOCATION: The requested allocation is not "
        "valid.";
    break;
  case HSA_STATUS_ERROR_INVALID_AGENT:
    S = "HSA_STATUS_ERROR_INVALID_AGENT: The agent is invalid.";
    break;
  case HSA_STATUS_ERROR_INVALID_REGION:
    S = "HSA_STATUS_ERROR_INVALID_REGION: The memory region is invalid.";
    break;
  case HSA_STATUS_ERROR_INVALID_SIGNAL:
    S = "HSA_STATUS_ERROR_INVALID_SIGNAL: The signal is invalid.";
    break;
  case HSA_STATUS_ERROR_INVALID_QUEUE:
    S = "HSA_STATUS_ERROR_INVALID_QUEUE: The queue is invalid.";
    break;
  case HSA_STATUS_ERROR_OUT_OF_RESOURCES:
    S = "HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the "
        "necessary resources.";
    break;
  case HSA_STATUS_ERROR_INVALID_PACKET_FORMAT:
    S = "HSA_STATUS_ERROR_INVALID_PACKET_FORMAT: The AQL packet is malformed.";
    break;
  case HSA_STATUS_ERROR_RESOURCE_FREE:
    S = "HSA_STATUS_ERROR_RESOURCE_FREE: An error has been detected while "
        "releasing a resource.";
    break;
  case HSA_STATUS_ERROR_NOT_INITIALIZED:
    S = "HSA_STATUS_ERROR_NOT_INITIALIZED: An API other than hsa_init has been "
        "invoked while the reference count of the HSA runtime is zero.";
    break;
  case HSA_STATUS_ERROR_REFCOUNT_OVERFLOW:
    S = "HSA_STATUS_ERROR_REFCOUNT_OVERFLOW: The maximum reference count for "
        "the object has been reached.";
    break;
  case HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS:
    S = "HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS: The arguments passed to a "
        "functions are not compatible.";
    break;
  case HSA_STATUS_ERROR_INVALID_INDEX:
    S = "HSA_STATUS_ERROR_INVALID_INDEX: The index is invalid.";
    break;
  case HSA_STATUS_ERROR_INVALID_ISA:
    S = "HSA_STATUS_ERROR_INVALID_ISA: The instruction set architecture is "
        "invalid.";
    break;
  case HSA_STATUS_ERROR_INVALID_ISA_NAME:
    S = "HSA_STATUS_ERROR_INVALID_ISA_NAME: The instruction set architecture "
        "name is invalid.";
    break;
  case HSA_STATUS_ERROR_INVALID_CODE_OBJECT:
    S = "HSA_STATUS_ERROR_INVALID_CODE_OBJECT: The code object is invalid.";
    break;
  case HSA_STATUS_ERROR_INVALID_EXECUTABLE:
    S = "HSA_STATUS_ERROR_INVALID_EXECUTABLE: The executable is invalid.";
    break;
  case HSA_STATUS_ERROR_FROZEN_EXECUTABLE:
    S = "HSA_STATUS_ERROR_FROZEN_EXECUTABLE: The executable is frozen.";
    break;
  case HSA_STATUS_ERROR_INVALID_SYMBOL_NAME:
    S = "HSA_STATUS_ERROR_INVALID_SYMBOL_NAME: There is no symbol with the "
        "given name.";
    break;
  case HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED:
    S = "HSA_STATUS_ERROR_VARIABLE_ALREADY_DEFINED: The variable is already "
        "defined.";
    break;
  case HSA_STATUS_ERROR_VARIABLE_UNDEFINED:
    S = "HSA_STATUS_ERROR_VARIABLE_UNDEFINED: The variable is undefined.";
    break;
  case HSA_STATUS_ERROR_EXCEPTION:
    S = "HSA_STATUS_ERROR_EXCEPTION: An HSAIL operation resulted in a hardware "
        "exception.";
    break;
  case HSA_STATUS_ERROR_INVALID_CODE_SYMBOL:
    S = "HSA_STATUS_ERROR_INVALID_CODE_SYMBOL: The code object symbol is "
        "invalid.";
    break;
  case HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL:
    S = "HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL: The executable symbol is "
        "invalid.";
    break;
  case HSA_STATUS_ERROR_INVALID_FILE:
    S = "HSA_STATUS_ERROR_INVALID_FILE: The file descriptor is invalid.";
    break;
  case HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER:
    S = "HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER: The code object reader "
        "is invalid.";
    break;
  case HSA_STATUS_ERROR_INVALID_CACHE:
    S = "HSA_STATUS_ERROR_INVALID_CACHE: The cache is invalid.";
    break;
  case HSA_STATUS_ERROR_INVALID_WAVEFRONT:
    S = "HSA_STATUS_ERROR_INVALID_WAVEFRONT: The wavefront is invalid.";
    break;
  case HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP:
    S = "HSA_STATUS_ERROR_INVALID_SIGNAL_GROUP: The signal group is invalid.";
    break;
  case HSA_STATUS_ERROR_INVALID_RUNTIME_STATE:
    S = "HSA_STATUS_ERROR_INVALID_RUNTIME_STATE: The HSA runtime is not in the "
        "configuration state.";
    break;
  case HSA_STATUS_ERROR_FATAL:
    S = "HSA_STATUS_ERROR_FATAL: The queue received an error that may require "
        "process termination.";
    break;
  case HSA_STATUS_ERROR_INVALID_MEMORY_POOL:
    S = "HSA_STATUS_ERROR_INVALID_MEMORY_POOL: The memory pool is invalid.";
    break;
  case HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION:
    S = "HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION: The agent attempted to "
        "access memory beyond the largest legal address.";
    break;
  case HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION:
    S = "HSA_STATUS_ERROR_ILLEGAL_INSTRUCTION: The agent executed an illegal "
        "shader instruction.";
    break;
  case HSA_STATUS_ERROR_MEMORY_FAULT:
    S = "HSA_STATUS_ERROR_MEMORY_FAULT: The agent attempted to access an "
        "inaccessible address.";
    break;
  default:
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
  *String = S;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_system_get_info(hsa_system_info_t Attribute, void *Value) {
  CHECK_INIT();
  if (!Value)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  switch (rawAttribute(Attribute)) {
  case HSA_SYSTEM_INFO_VERSION_MAJOR:
    return put<uint16_t>(Value, 1);
  case HSA_SYSTEM_INFO_VERSION_MINOR:
    return put<uint16_t>(Value, 1);
  case HSA_SYSTEM_INFO_TIMESTAMP:
    return put<uint64_t>(Value, timestampNow());
  case HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY:
    // Timestamps and wait timeouts are in nanoseconds.
    return put<uint64_t>(Value, 1000000000ull);
  case HSA_SYSTEM_INFO_SIGNAL_MAX_WAIT:
    return put<uint64_t>(Value, UINT64_MAX);
  case HSA_SYSTEM_INFO_ENDIANNESS:
    return put<hsa_endianness_t>(Value, HSA_ENDIANNESS_LITTLE);
  case HSA_SYSTEM_INFO_MACHINE_MODEL:
    return put<hsa_machine_model_t>(Value, HSA_MACHINE_MODEL_LARGE);
  case HSA_SYSTEM_INFO_EXTENSIONS:
    // No finalizer or image extension is emulated.
    std::memset(Value, 0, 128);
    return HSA_STATUS_SUCCESS;
  default:
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
}

hsa_status_t
hsa_amd_register_system_event_handler(hsa_amd_system_event_callback_t Callback,
                                      void *Data) {
  CHECK_INIT();
  if (!Callback)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  // ROCr calls these handlers for GPU memory faults and HW exceptions. The
  // emulation has no hardware to raise either (a copy it cannot make fails
  // its completion signal instead), so a registration is accepted and kept
  // only to be answered like ROCr's.
  std::lock_guard<std::mutex> Guard(InitLock);
  SystemEventHandlers.push_back({Callback, Data});
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_iterate_agents(hsa_status_t (*Callback)(hsa_agent_t, void *),
                                void *Data) {
  CHECK_INIT();
  if (!Callback)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  for (auto &A : Topology->Agents) {
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

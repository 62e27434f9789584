// SPDX-License-Identifier: Apache-2.0
//
// hsa-emu: initialisation and the settings it reads, system information,
// system event handlers and status strings. The agents, their ISA and their
// memory pools are Agents.cpp's.
#include "Attributes.h"
#include "Emu.h"

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <strings.h>

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

extern "C" {

hsa_status_t hsa_init() {
  std::lock_guard<std::mutex> Guard(InitLock);
  if (InitCount == INT32_MAX)
    return HSA_STATUS_ERROR_REFCOUNT_OVERFLOW;
  if (InitCount++ == 0) {
    if (!Config)
      Config = readConfig();
    if (!Topology)
      Topology = buildTopology(*Config);
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

} // extern "C"

// SPDX-License-Identifier: Apache-2.0
//
// hsa-emu: a CPU emulation of the subset of the HSA runtime (ROCm 5.2 API)
// that the offload-io amdgpu plugin uses. Built as libhsa-runtime64.so.1 for
// tests only. See ../README.md for what is emulated and how it differs from
// ROCr.
//
// Internal declarations shared by the emulator's translation units. Nothing
// here is exported: the library exports only the hsa_* C functions.
#ifndef HSAEMU_EMU_H
#define HSAEMU_EMU_H

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

namespace hsaemu {

/// HSA_EMU_AIS: whether the AMD Infinity Storage calls (HSA_AMD interface
/// 1.14, ROCm 7) exist and how they behave.
enum class AisModeTy {
  Off,       ///< Absent, as in ROCm 5.2: dlsym finds no hsa_amd_ais_file_*.
  On,        ///< Present; pread/pwrite between the file and device memory.
  Enodev,    ///< Present, but every transfer fails with ENODEV (no P2PDMA).
  Eremoteio, ///< Present, transfers fail with EREMOTEIO (the block layer
             ///< refuses peer-to-peer pages).
  Enotty,    ///< Present, but the driver has no AIS ioctl: ENOTTY in errno,
             ///< status and size untouched.
};

/// HSA_EMU_AIS parsed from the environment. Callable before hsa_init (the
/// AIS symbols are resolved at dlsym time); \p Warn reports a bad value.
AisModeTy aisModeFromEnv(bool Warn);

/// Settings read from the environment at the first hsa_init.
struct ConfigTy {
  /// HSA_EMU_NUM_GPUS: number of GPU agents (0 is allowed).
  unsigned NumGpus = 2;
  /// HSA_EMU_GPU_ARCH: processor name of every GPU agent.
  std::string GpuArch = "gfx90a";
  /// HSA_EMU_COMPUTE_UNITS: reported compute unit count.
  uint32_t ComputeUnits = 104;
  /// HSA_EMU_GPU_MEMORY: bytes each GPU's device pool reports and enforces.
  uint64_t GpuMemory = uint64_t(16) << 30;
  /// HSA_EMU_HOST_MEMORY: bytes each CPU pool reports and enforces (pinned
  /// host memory, kernel arguments included); 0: the machine's memory.
  uint64_t HostMemory = 0;
  /// HSA_EMU_STRICT=1: async copies and fills fail unless every pointer is
  /// agent-accessible (a pool allocation the agent may access, or a locked
  /// alias). Default off: plain host pointers are copied as ROCr never would.
  bool Strict = false;
  /// HSA_EMU_DISPATCH=noop: kernel dispatch packets complete without running
  /// anything. Default (fail): reported as unsupported.
  bool DispatchNoop = false;
  /// HSA_EMU_QUEUE_ERRORS=stop: a queue that failed stops processing, and
  /// the failed packet's signal never completes (what ROCr does). Default
  /// (complete): it and every later packet complete with -1.
  bool StopFailedQueues = false;
  /// HSA_EMU_TRACE=1: print dispatch packets and their kernel arguments.
  bool Trace = false;
  /// Number of copy worker threads.
  unsigned CopyWorkers = 4;
  /// HSA_EMU_AIS: off (default, as ROCm 5.2), on, enodev, eremoteio, enotty.
  AisModeTy Ais = AisModeTy::Off;
};

/// The configuration of the running emulation.
const ConfigTy &config();

struct AgentTy;

/// Deliver an HSA_AMD_GPU_MEMORY_FAULT_EVENT (page not present at
/// \p Address, taken by \p Agent's engine) to every handler registered with
/// hsa_amd_register_system_event_handler, on the calling thread. Returns
/// whether any handler was registered.
bool raiseMemoryFault(const AgentTy *Agent, uintptr_t Address);

/// Print a diagnostic line prefixed "hsa-emu: " on stderr.
void warn(const char *Fmt, ...) __attribute__((format(printf, 1, 2)));

struct PoolTy;

/// A CPU or GPU agent.
struct AgentTy {
  hsa_device_type_t Type = HSA_DEVICE_TYPE_CPU;
  /// Node number (HSA_AGENT_INFO_NODE); also the index in the agent list.
  uint32_t Node = 0;
  /// Index among the GPUs (GPU agents only).
  uint32_t GpuIndex = 0;
  /// HSA_AGENT_INFO_NAME.
  std::string Name;
  /// HSA_AMD_AGENT_INFO_PRODUCT_NAME.
  std::string ProductName;
  /// The memory pools of the agent, in iteration order.
  std::vector<PoolTy *> Pools;

  bool isGpu() const { return Type == HSA_DEVICE_TYPE_GPU; }
  hsa_agent_t handle() const {
    return hsa_agent_t{reinterpret_cast<uint64_t>(this)};
  }
};

/// A memory pool of one agent.
struct PoolTy {
  AgentTy *Owner = nullptr;
  hsa_amd_segment_t Segment = HSA_AMD_SEGMENT_GLOBAL;
  /// hsa_amd_memory_pool_global_flag_t bits.
  uint32_t GlobalFlags = 0;
  /// Capacity in bytes.
  uint64_t Size = 0;
  /// Whether hsa_amd_memory_pool_allocate may allocate from it.
  bool AllocAllowed = true;
  /// Bytes currently allocated from it.
  std::atomic<uint64_t> Used{0};

  hsa_amd_memory_pool_t handle() const {
    return hsa_amd_memory_pool_t{reinterpret_cast<uint64_t>(this)};
  }
};

/// The runtime's agents and pools; built by the first hsa_init.
struct TopologyTy {
  std::vector<std::unique_ptr<AgentTy>> Agents;
  std::vector<std::unique_ptr<PoolTy>> Pools;
  AgentTy *Cpu = nullptr;
};

/// Whether hsa_init has been called more often than hsa_shut_down.
bool isInitialized();
/// The topology (valid while initialised).
TopologyTy &topology();
/// The agent behind \p Agent, or null when it is not one of ours.
AgentTy *lookupAgent(hsa_agent_t Agent);
/// The pool behind \p Pool, or null when it is not one of ours.
PoolTy *lookupPool(hsa_amd_memory_pool_t Pool);
/// Nanoseconds since the emulation started (HSA_SYSTEM_INFO_TIMESTAMP).
uint64_t timestampNow();

//===----------------------------------------------------------------------===//
// Signals
//===----------------------------------------------------------------------===//

/// An HSA signal: a 64-bit value plus a condition variable for waiters.
struct SignalTy {
  explicit SignalTy(hsa_signal_value_t Initial) : Value(Initial) {}

  /// Apply \p Op to the value under the lock and wake every waiter.
  /// Returns the value before the operation.
  hsa_signal_value_t
  update(const std::function<hsa_signal_value_t(hsa_signal_value_t)> &Op);
  /// Current value.
  hsa_signal_value_t load() const {
    return Value.load(std::memory_order_acquire);
  }
  /// Block until \p Cond against \p Compare holds or \p TimeoutNs passes
  /// (UINT64_MAX: forever). Returns the value last observed.
  hsa_signal_value_t wait(hsa_signal_condition_t Cond,
                          hsa_signal_value_t Compare, uint64_t TimeoutNs);

  hsa_signal_t handle() {
    return hsa_signal_t{reinterpret_cast<uint64_t>(this)};
  }

  std::atomic<hsa_signal_value_t> Value;
  std::mutex Lock;
  std::condition_variable Changed;
};

/// Whether \p Value satisfies \p Cond against \p Compare.
bool conditionHolds(hsa_signal_condition_t Cond, hsa_signal_value_t Value,
                    hsa_signal_value_t Compare);

/// The signal behind \p Signal, or null for a zero handle. Handles are not
/// validated beyond that on the hot paths (ROCr does not either).
inline SignalTy *toSignal(hsa_signal_t Signal) {
  return reinterpret_cast<SignalTy *>(Signal.handle);
}

/// Runs callbacks when signal conditions hold, on its own thread. Used for
/// hsa_amd_signal_async_handler and, separately, for copy dependencies, so
/// that a user handler that blocks cannot stall the copy engine.
class WatcherTy {
public:
  /// Returns true to stay registered (re-armed).
  using CallbackTy = std::function<bool(hsa_signal_value_t)>;

  WatcherTy();
  ~WatcherTy();
  /// Call \p Fn once \p Signal satisfies \p Cond against \p Compare.
  void watch(SignalTy *Signal, hsa_signal_condition_t Cond,
             hsa_signal_value_t Compare, CallbackTy Fn);

private:
  struct WatchTy {
    SignalTy *Signal;
    hsa_signal_condition_t Cond;
    hsa_signal_value_t Compare;
    CallbackTy Fn;
  };
  void loop();

  std::mutex Lock;
  std::vector<WatchTy> Watches;
  bool Stop = false;
  std::thread Thread;
};

/// Wake every watcher: some signal changed or a watch was added.
void notifySignalChange();

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

/// Where a pointer range lives, as seen by an agent.
struct ResolvedRangeTy {
  /// The host address to touch for the range (aliases translated).
  char *HostPtr = nullptr;
  /// Whether the CPU may touch [HostPtr, HostPtr+Size) at all. False for a
  /// range that runs past the end of a locked alias, whose tail is unmapped.
  bool Usable = true;
  /// Whether the range is accessible by the agent the query named: a pool
  /// allocation the agent may access, or a locked alias granted to it.
  bool Accessible = false;
  /// Whether the range is HSA memory at all (allocation or locked alias).
  bool Known = false;
  /// The pool of the allocation holding the range; null for locked memory
  /// and unknown pointers.
  PoolTy *Pool = nullptr;
  /// Why not, for diagnostics.
  std::string Why;
  /// When not Usable: the first address past the mapping the range starts
  /// in, where a GPU would take its page fault.
  uintptr_t FaultAddress = 0;
};

/// Resolve [Ptr, Ptr+Size) for access by \p Agent (may be null: CPU).
ResolvedRangeTy resolveRange(const void *Ptr, size_t Size, AgentTy *Agent);

/// Record an allocation made by the loader (code object segments) so that
/// pointer_info and strict checks know it.
void registerInternalAllocation(void *Ptr, size_t Size, PoolTy *Pool);
/// Undo registerInternalAllocation.
void unregisterInternalAllocation(void *Ptr);

/// The kernarg-capable pool for \p Ptr: whether [Ptr, Ptr+Size) lies in an
/// allocation from a pool with the KERNARG_INIT flag accessible by \p Agent.
bool isKernargMemory(const void *Ptr, size_t Size, AgentTy *Agent);

/// Enqueue an asynchronous job run by the copy workers once every signal in
/// \p Deps is below 1. \p Job returns false on failure (completion -1).
void submitAsync(std::vector<SignalTy *> Deps, SignalTy *Completion,
                 std::function<bool()> Job);

//===----------------------------------------------------------------------===//
// Code objects
//===----------------------------------------------------------------------===//

/// One argument of a kernel, from the AMDGPU metadata note.
struct KernelArgInfoTy {
  uint32_t Offset = 0;
  uint32_t Size = 0;
  std::string ValueKind;
};

/// What a dispatch needs to know about a kernel.
struct KernelInfoTy {
  std::string Name;
  uint32_t KernargSize = 0;
  uint32_t GroupSize = 0;
  uint32_t PrivateSize = 0;
  bool DynamicCallStack = false;
  std::vector<KernelArgInfoTy> Args;
};

/// The kernel whose descriptor lives at \p KernelObject, or null.
const KernelInfoTy *lookupKernel(uint64_t KernelObject);

} // namespace hsaemu

#endif // HSAEMU_EMU_H

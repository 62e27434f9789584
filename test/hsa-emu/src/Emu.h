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

/// HSA_EMU_MISUSE: what the emulation does when its caller misuses the API
/// (a destroyed signal or queue used, memory freed twice, a copy of memory
/// the engine cannot reach). Either way one line "hsa-emu: misuse: ..." goes
/// to stderr first.
enum class MisuseModeTy {
  Abort, ///< abort(): CI notices even if the caller ignores the status.
  Error, ///< Return what ROCr returns (its error status where it has one).
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
  /// HSA_EMU_STRICT: on (default) or off. On: an async copy of memory its
  /// engine agent cannot access (plain host memory, the host address of
  /// locked memory, device memory not granted to it), or a fill of memory
  /// that is neither allocated nor locked, is a misuse, as ROCr's DMA engine
  /// faults on it. Off: any pointer the CPU can read is copied.
  bool Strict = true;
  /// HSA_EMU_MISUSE: abort (default) or error.
  MisuseModeTy Misuse = MisuseModeTy::Abort;
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
/// The configuration, or null before the first hsa_init read it.
const ConfigTy *configOrNull();

struct AgentTy;

/// Deliver an HSA_AMD_GPU_MEMORY_FAULT_EVENT (page not present at
/// \p Address, taken by \p Agent's engine) to every handler registered with
/// hsa_amd_register_system_event_handler, on the calling thread, after a
/// line on stderr that says \p What faulted. Returns whether any handler
/// was registered; with none, it prints and delivers nothing.
bool raiseMemoryFault(const AgentTy *Agent, uintptr_t Address,
                      const std::string &What);

/// Print a diagnostic line prefixed "hsa-emu: " on stderr.
void warn(const char *Fmt, ...) __attribute__((format(printf, 1, 2)));

/// Report a misuse of the API by the caller of \p Call: one line
/// "hsa-emu: misuse: <Call>: <what>" on stderr, then abort() unless
/// HSA_EMU_MISUSE=error. Returns only in error mode; the caller then returns
/// what ROCr returns (see README.md, "Checks on callers").
void misuse(const char *Call, const char *Fmt, ...)
    __attribute__((format(printf, 2, 3)));

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

/// In an hsa_* function: return HSA_STATUS_ERROR_NOT_INITIALIZED unless
/// the runtime is initialised.
#define CHECK_INIT()                                                           \
  do {                                                                         \
    if (!isInitialized())                                                      \
      return HSA_STATUS_ERROR_NOT_INITIALIZED;                                 \
  } while (0)

/// Build the agents and pools (and the GPUs' ISA) that \p C describes; done
/// once, by the first hsa_init.
TopologyTy *buildTopology(const ConfigTy &C);

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
/// Signals handed out are never freed: a destroyed one stays in memory,
/// marked Destroyed, so that a stale handle is reported instead of touching
/// memory a later signal reuses (see checkSignal).
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
  /// Block until \p Cond against \p Compare holds, \p TimeoutNs pass
  /// (UINT64_MAX: forever) or the signal is destroyed. Returns the value
  /// last observed.
  hsa_signal_value_t wait(hsa_signal_condition_t Cond,
                          hsa_signal_value_t Compare, uint64_t TimeoutNs);

  hsa_signal_t handle() {
    return hsa_signal_t{reinterpret_cast<uint64_t>(this)};
  }

  /// Whether the signal was destroyed (or its queue, for a doorbell).
  bool isDestroyed() const { return Destroyed.load(std::memory_order_acquire); }
  /// What destroyed it, for messages; written before Destroyed is set.
  const char *destroyedBy() const { return DestroyedBy; }

  std::atomic<hsa_signal_value_t> Value;
  std::mutex Lock;
  std::condition_variable Changed;

private:
  friend void retireSignal(SignalTy *S, const char *By);
  std::atomic<bool> Destroyed{false};
  const char *DestroyedBy = "";
};

/// Whether \p Value satisfies \p Cond against \p Compare.
bool conditionHolds(hsa_signal_condition_t Cond, hsa_signal_value_t Value,
                    hsa_signal_value_t Compare);

/// The signal behind \p Signal, or null for a zero handle, unchecked: for
/// handles the emulation made itself. Handles from callers go through
/// checkSignal.
inline SignalTy *toSignal(hsa_signal_t Signal) {
  return reinterpret_cast<SignalTy *>(Signal.handle);
}

/// The live signal behind a caller's \p Signal, or null after reporting a
/// misuse by \p Call: a zero handle, one no signal was created for, or a
/// destroyed signal. Callers return what ROCr returns for an invalid signal
/// (HSA_STATUS_ERROR_INVALID_SIGNAL where the call has a status).
SignalTy *checkSignal(hsa_signal_t Signal, const char *Call);
/// Make \p S a valid handle for callers (signals the emulation hands out
/// itself, such as queue doorbells).
void registerSignal(SignalTy *S);
/// Mark \p S destroyed by \p By (a string literal) and wake everything
/// that waits on or watches it. \p S is never freed.
void retireSignal(SignalTy *S, const char *By);

/// Runs callbacks when signal conditions hold, on its own thread. Used for
/// hsa_amd_signal_async_handler and, separately, for copy dependencies, so
/// that a user handler that blocks cannot stall the copy engine.
class WatcherTy {
public:
  /// Returns true to stay registered (re-armed).
  using CallbackTy = std::function<bool(hsa_signal_value_t)>;

  WatcherTy();
  ~WatcherTy();
  /// Called instead of the callback when the signal is destroyed while the
  /// condition does not hold: the callback could never run.
  using DestroyedTy = std::function<void(hsa_signal_value_t)>;

  /// Call \p Fn once \p Signal satisfies \p Cond against \p Compare, or
  /// \p OnDestroyed (if any) once it is destroyed before that.
  void watch(SignalTy *Signal, hsa_signal_condition_t Cond,
             hsa_signal_value_t Compare, CallbackTy Fn,
             DestroyedTy OnDestroyed = nullptr);

private:
  struct WatchTy {
    SignalTy *Signal;
    hsa_signal_condition_t Cond;
    hsa_signal_value_t Compare;
    CallbackTy Fn;
    DestroyedTy OnDestroyed;
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
  /// Whether the range lies in the host address range of locked memory
  /// (which the CPU, and hsa_amd_memory_fill, may use; agents may not).
  bool LockedHost = false;
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
/// \p Call (a string literal) and \p What ("copy of N bytes from S to D")
/// name the job in misuse reports: a dependency or the completion signal
/// destroyed before the job is done.
void submitAsync(std::vector<SignalTy *> Deps, SignalTy *Completion,
                 std::function<bool()> Job, const char *Call, std::string What);

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

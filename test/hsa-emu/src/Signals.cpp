// SPDX-License-Identifier: Apache-2.0
//
// hsa-emu: signals, blocking waits and asynchronous signal handlers.
//
// A signal is a 64-bit value guarded by a mutex and a condition variable, so
// waits really block. Every change also bumps a process-wide generation
// counter that wakes the watcher threads (async handlers, copy
// dependencies), which then re-evaluate their conditions.
//
// Every call that takes a caller's handle checks it (checkSignal): a signal
// destroyed, never created, or the null handle is a misuse. Destroyed
// signals are kept, never freed, so that the check stays reliable (ROCr
// recycles the memory, and a stale handle silently reaches another signal).
#include "Emu.h"

#include <chrono>
#include <cinttypes>
#include <unordered_set>

using namespace hsaemu;

namespace {

/// Wakes the watcher threads. Leaked on purpose: destroying a condition
/// variable at exit while watcher threads still wait on it blocks forever.
struct ChangeStateTy {
  std::mutex Lock;
  std::condition_variable CV;
  uint64_t Generation = 0;
};
ChangeStateTy &changeState() {
  static ChangeStateTy *State = new ChangeStateTy();
  return *State;
}

/// Every signal handed out, live or destroyed. Leaked, like all global
/// state of the emulation: the plugin may call in from libomptarget's
/// destructor, after this library's static destructors.
std::shared_mutex &RegistryLock = *new std::shared_mutex();
std::unordered_set<const SignalTy *> &KnownSignals =
    *new std::unordered_set<const SignalTy *>();

/// Runs the handlers of hsa_amd_signal_async_handler, one at a time, as
/// ROCr's async-events thread does. Never destroyed: its thread may still be
/// blocked when the process exits.
WatcherTy &userWatcher() {
  static WatcherTy *W = new WatcherTy();
  return *W;
}

/// Waits longer than a day are treated as unbounded (and avoid overflowing
/// std::chrono arithmetic for UINT64_MAX-like hints).
constexpr uint64_t ForeverNs = uint64_t(86400) * 1000000000ull;

hsa_status_t createSignal(hsa_signal_value_t Initial, hsa_signal_t *Out) {
  if (!isInitialized())
    return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!Out)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  auto *S = new SignalTy(Initial);
  registerSignal(S);
  *Out = S->handle();
  return HSA_STATUS_SUCCESS;
}

/// What ROCr returns for a bad handle: the null handle is an invalid
/// argument, any other one an invalid signal.
hsa_status_t invalidSignalStatus(hsa_signal_t Signal) {
  return Signal.handle ? HSA_STATUS_ERROR_INVALID_SIGNAL
                       : HSA_STATUS_ERROR_INVALID_ARGUMENT;
}

/// Apply \p Op to the signal of \p Call, if live. A misuse in error mode
/// changes nothing and returns -1 (ROCr aborts instead: these calls have no
/// status).
template <typename OpTy>
hsa_signal_value_t rmw(hsa_signal_t Signal, const char *Call, OpTy Op) {
  SignalTy *S = checkSignal(Signal, Call);
  return S ? S->update(Op) : hsa_signal_value_t(-1);
}

hsa_signal_value_t load(hsa_signal_t Signal, const char *Call,
                        std::memory_order Order) {
  SignalTy *S = checkSignal(Signal, Call);
  return S ? S->Value.load(Order) : hsa_signal_value_t(-1);
}

/// A blocking wait of \p Call. The signal destroyed while the wait was
/// unsatisfied is a misuse too: ROCr wakes such a waiter and returns 0, as
/// if the operation it waited for had completed.
hsa_signal_value_t waitOn(hsa_signal_t Signal, const char *Call,
                          hsa_signal_condition_t Cond,
                          hsa_signal_value_t Compare, uint64_t TimeoutNs) {
  SignalTy *S = checkSignal(Signal, Call);
  if (!S)
    return -1;
  hsa_signal_value_t V = S->wait(Cond, Compare, TimeoutNs);
  if (S->isDestroyed() && !conditionHolds(Cond, V, Compare)) {
    misuse(Call,
           "signal 0x%" PRIx64 " was destroyed (%s) while this wait on it was "
           "pending, at value %" PRId64,
           Signal.handle, S->destroyedBy(), int64_t(V));
    return -1;
  }
  return V;
}

} // namespace

void hsaemu::registerSignal(SignalTy *S) {
  std::unique_lock<std::shared_mutex> Guard(RegistryLock);
  KnownSignals.insert(S);
}

void hsaemu::retireSignal(SignalTy *S, const char *By) {
  {
    std::lock_guard<std::mutex> Guard(S->Lock);
    S->DestroyedBy = By;
    S->Destroyed.store(true, std::memory_order_release);
  }
  // Blocked waiters and watchers re-check, and find it destroyed.
  S->Changed.notify_all();
  notifySignalChange();
}

SignalTy *hsaemu::checkSignal(hsa_signal_t Signal, const char *Call) {
  auto *S = reinterpret_cast<SignalTy *>(Signal.handle);
  if (!S) {
    misuse(Call, "signal 0x0 is the null handle");
    return nullptr;
  }
  bool Known;
  {
    std::shared_lock<std::shared_mutex> Guard(RegistryLock);
    Known = KnownSignals.count(S) != 0;
  }
  if (!Known) {
    misuse(Call, "0x%" PRIx64 " is not a signal handle (none was created)",
           Signal.handle);
    return nullptr;
  }
  if (S->isDestroyed()) {
    misuse(Call, "signal 0x%" PRIx64 " was destroyed (%s)", Signal.handle,
           S->destroyedBy());
    return nullptr;
  }
  return S;
}

void hsaemu::notifySignalChange() {
  ChangeStateTy &C = changeState();
  {
    std::lock_guard<std::mutex> Guard(C.Lock);
    ++C.Generation;
  }
  C.CV.notify_all();
}

bool hsaemu::conditionHolds(hsa_signal_condition_t Cond,
                            hsa_signal_value_t Value,
                            hsa_signal_value_t Compare) {
  switch (Cond) {
  case HSA_SIGNAL_CONDITION_EQ:
    return Value == Compare;
  case HSA_SIGNAL_CONDITION_NE:
    return Value != Compare;
  case HSA_SIGNAL_CONDITION_LT:
    return Value < Compare;
  case HSA_SIGNAL_CONDITION_GTE:
    return Value >= Compare;
  }
  return false;
}

hsa_signal_value_t SignalTy::update(
    const std::function<hsa_signal_value_t(hsa_signal_value_t)> &Op) {
  hsa_signal_value_t Old;
  {
    std::lock_guard<std::mutex> Guard(Lock);
    Old = Value.load(std::memory_order_relaxed);
    Value.store(Op(Old), std::memory_order_release);
  }
  Changed.notify_all();
  notifySignalChange();
  return Old;
}

hsa_signal_value_t SignalTy::wait(hsa_signal_condition_t Cond,
                                  hsa_signal_value_t Compare,
                                  uint64_t TimeoutNs) {
  std::unique_lock<std::mutex> Guard(Lock);
  auto Holds = [&] {
    return conditionHolds(Cond, Value.load(std::memory_order_acquire),
                          Compare) ||
           isDestroyed();
  };
  if (TimeoutNs >= ForeverNs)
    Changed.wait(Guard, Holds);
  else
    Changed.wait_for(Guard, std::chrono::nanoseconds(TimeoutNs), Holds);
  return Value.load(std::memory_order_acquire);
}

WatcherTy::WatcherTy() : Thread([this] { loop(); }) {}

WatcherTy::~WatcherTy() {
  {
    std::lock_guard<std::mutex> Guard(Lock);
    Stop = true;
  }
  notifySignalChange();
  Thread.join();
}

void WatcherTy::watch(SignalTy *Signal, hsa_signal_condition_t Cond,
                      hsa_signal_value_t Compare, CallbackTy Fn,
                      DestroyedTy OnDestroyed) {
  {
    std::lock_guard<std::mutex> Guard(Lock);
    Watches.push_back(
        {Signal, Cond, Compare, std::move(Fn), std::move(OnDestroyed)});
  }
  notifySignalChange();
}

void WatcherTy::loop() {
  uint64_t Seen = ~uint64_t(0);
  while (true) {
    {
      ChangeStateTy &C = changeState();
      std::unique_lock<std::mutex> Guard(C.Lock);
      C.CV.wait(Guard, [&] { return C.Generation != Seen; });
      Seen = C.Generation;
    }
    std::vector<WatchTy> Ready;
    std::vector<WatchTy> Orphans;
    {
      std::lock_guard<std::mutex> Guard(Lock);
      if (Stop)
        return;
      for (size_t I = 0; I < Watches.size();) {
        WatchTy &W = Watches[I];
        // A signal destroyed after its condition held still fires: its
        // memory is kept, and whoever destroyed it may have seen it hold.
        bool Holds = conditionHolds(W.Cond, W.Signal->load(), W.Compare);
        if (Holds || W.Signal->isDestroyed()) {
          (Holds ? Ready : Orphans).push_back(std::move(W));
          Watches[I] = std::move(Watches.back());
          Watches.pop_back();
        } else {
          ++I;
        }
      }
    }
    // Run without the lock: callbacks may register new watches.
    for (WatchTy &W : Orphans)
      if (W.OnDestroyed)
        W.OnDestroyed(W.Signal->load());
    for (WatchTy &W : Ready) {
      if (W.Fn(W.Signal->load())) {
        std::lock_guard<std::mutex> Guard(Lock);
        Watches.push_back(std::move(W));
      }
    }
  }
}

extern "C" {

hsa_status_t hsa_signal_create(hsa_signal_value_t Initial,
                               uint32_t NumConsumers,
                               const hsa_agent_t *Consumers,
                               hsa_signal_t *Signal) {
  if (NumConsumers && !Consumers)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  return createSignal(Initial, Signal);
}

hsa_status_t hsa_amd_signal_create(hsa_signal_value_t Initial,
                                   uint32_t NumConsumers,
                                   const hsa_agent_t *Consumers,
                                   uint64_t Attributes, hsa_signal_t *Signal) {
  if (NumConsumers && !Consumers)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  return createSignal(Initial, Signal);
}

hsa_status_t hsa_signal_destroy(hsa_signal_t Signal) {
  if (!isInitialized())
    return HSA_STATUS_ERROR_NOT_INITIALIZED;
  // Checked and retired under one lock, so that two racing destroys of
  // the same signal cannot both succeed.
  static std::mutex &DestroyLock = *new std::mutex();
  std::lock_guard<std::mutex> Guard(DestroyLock);
  SignalTy *S = checkSignal(Signal, __func__);
  if (!S)
    return invalidSignalStatus(Signal);
  retireSignal(S, "by hsa_signal_destroy");
  return HSA_STATUS_SUCCESS;
}

hsa_signal_value_t hsa_signal_load_scacquire(hsa_signal_t Signal) {
  return load(Signal, __func__, std::memory_order_acquire);
}

hsa_signal_value_t hsa_signal_load_relaxed(hsa_signal_t Signal) {
  return load(Signal, __func__, std::memory_order_relaxed);
}

void hsa_signal_store_relaxed(hsa_signal_t Signal, hsa_signal_value_t V) {
  rmw(Signal, __func__, [V](hsa_signal_value_t) { return V; });
}

void hsa_signal_store_screlease(hsa_signal_t Signal, hsa_signal_value_t V) {
  rmw(Signal, __func__, [V](hsa_signal_value_t) { return V; });
}

void hsa_signal_silent_store_relaxed(hsa_signal_t Signal,
                                     hsa_signal_value_t V) {
  rmw(Signal, __func__, [V](hsa_signal_value_t) { return V; });
}

void hsa_signal_silent_store_screlease(hsa_signal_t Signal,
                                       hsa_signal_value_t V) {
  rmw(Signal, __func__, [V](hsa_signal_value_t) { return V; });
}

// Every memory order maps to the same locked update: the emulation is
// sequentially consistent, which is stronger than any order HSA offers.
#define HSAEMU_SIGNAL_RMW(Op, Expr)                                            \
  void hsa_signal_##Op##_relaxed(hsa_signal_t S, hsa_signal_value_t V) {       \
    rmw(S, __func__, [V](hsa_signal_value_t Old) { return Expr; });            \
  }                                                                            \
  void hsa_signal_##Op##_scacquire(hsa_signal_t S, hsa_signal_value_t V) {     \
    rmw(S, __func__, [V](hsa_signal_value_t Old) { return Expr; });            \
  }                                                                            \
  void hsa_signal_##Op##_screlease(hsa_signal_t S, hsa_signal_value_t V) {     \
    rmw(S, __func__, [V](hsa_signal_value_t Old) { return Expr; });            \
  }                                                                            \
  void hsa_signal_##Op##_scacq_screl(hsa_signal_t S, hsa_signal_value_t V) {   \
    rmw(S, __func__, [V](hsa_signal_value_t Old) { return Expr; });            \
  }

HSAEMU_SIGNAL_RMW(add, Old + V)
HSAEMU_SIGNAL_RMW(subtract, Old - V)
HSAEMU_SIGNAL_RMW(and, Old &V)
HSAEMU_SIGNAL_RMW(or, Old | V)
HSAEMU_SIGNAL_RMW(xor, Old ^ V)
#undef HSAEMU_SIGNAL_RMW

#define HSAEMU_SIGNAL_EXCHANGE(Order)                                          \
  hsa_signal_value_t hsa_signal_exchange_##Order(hsa_signal_t S,               \
                                                 hsa_signal_value_t V) {       \
    return rmw(S, __func__, [V](hsa_signal_value_t) { return V; });            \
  }                                                                            \
  hsa_signal_value_t hsa_signal_cas_##Order(                                   \
      hsa_signal_t S, hsa_signal_value_t Expected, hsa_signal_value_t V) {     \
    return rmw(S, __func__, [Expected, V](hsa_signal_value_t Old) {            \
      return Old == Expected ? V : Old;                                        \
    });                                                                        \
  }

HSAEMU_SIGNAL_EXCHANGE(relaxed)
HSAEMU_SIGNAL_EXCHANGE(scacquire)
HSAEMU_SIGNAL_EXCHANGE(screlease)
HSAEMU_SIGNAL_EXCHANGE(scacq_screl)
#undef HSAEMU_SIGNAL_EXCHANGE

hsa_signal_value_t hsa_signal_wait_scacquire(hsa_signal_t Signal,
                                             hsa_signal_condition_t Cond,
                                             hsa_signal_value_t Compare,
                                             uint64_t TimeoutHint,
                                             hsa_wait_state_t WaitState) {
  return waitOn(Signal, __func__, Cond, Compare, TimeoutHint);
}

hsa_signal_value_t hsa_signal_wait_relaxed(hsa_signal_t Signal,
                                           hsa_signal_condition_t Cond,
                                           hsa_signal_value_t Compare,
                                           uint64_t TimeoutHint,
                                           hsa_wait_state_t WaitState) {
  return waitOn(Signal, __func__, Cond, Compare, TimeoutHint);
}

uint32_t hsa_amd_signal_wait_any(uint32_t Count, hsa_signal_t *Signals,
                                 hsa_signal_condition_t *Conds,
                                 hsa_signal_value_t *Values,
                                 uint64_t TimeoutHint,
                                 hsa_wait_state_t WaitHint,
                                 hsa_signal_value_t *SatisfyingValue) {
  auto Deadline = std::chrono::steady_clock::now() +
                  std::chrono::nanoseconds(std::min(TimeoutHint, ForeverNs));
  std::vector<SignalTy *> List(Count);
  for (uint32_t I = 0; I < Count; ++I)
    if (!(List[I] = checkSignal(Signals[I], __func__)))
      return UINT32_MAX;
  ChangeStateTy &C = changeState();
  std::unique_lock<std::mutex> Guard(C.Lock);
  while (true) {
    for (uint32_t I = 0; I < Count; ++I) {
      hsa_signal_value_t V = List[I]->load();
      if (conditionHolds(Conds[I], V, Values[I])) {
        if (SatisfyingValue)
          *SatisfyingValue = V;
        return I;
      }
    }
    // None holds: one destroyed meanwhile would wake this waiter in ROCr
    // as if its condition held.
    for (uint32_t I = 0; I < Count; ++I) {
      if (List[I]->isDestroyed()) {
        Guard.unlock();
        misuse(__func__,
               "signal 0x%" PRIx64 " (index %u) was destroyed (%s) while this "
               "wait on it was pending, at value %" PRId64,
               Signals[I].handle, I, List[I]->destroyedBy(),
               int64_t(List[I]->load()));
        return UINT32_MAX;
      }
    }
    uint64_t Seen = C.Generation;
    if (TimeoutHint >= ForeverNs)
      C.CV.wait(Guard, [&] { return C.Generation != Seen; });
    else if (!C.CV.wait_until(Guard, Deadline,
                              [&] { return C.Generation != Seen; }))
      return UINT32_MAX;
  }
}

hsa_status_t hsa_amd_signal_async_handler(hsa_signal_t Signal,
                                          hsa_signal_condition_t Cond,
                                          hsa_signal_value_t Value,
                                          hsa_amd_signal_handler Handler,
                                          void *Arg) {
  if (!isInitialized())
    return HSA_STATUS_ERROR_NOT_INITIALIZED;
  SignalTy *S = checkSignal(Signal, __func__);
  if (!S)
    return invalidSignalStatus(Signal);
  if (!Handler)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  // A signal destroyed before its condition holds leaves the handler
  // registered on a signal that no longer exists; ROCr never runs it.
  auto OnDestroyed = [Signal, S, Handler, Arg](hsa_signal_value_t V) {
    misuse("hsa_amd_signal_async_handler",
           "signal 0x%" PRIx64 " was destroyed (%s) at value %" PRId64
           " while handler %p (arg %p) waited on it: the handler can never run",
           Signal.handle, S->destroyedBy(), int64_t(V),
           reinterpret_cast<void *>(Handler), Arg);
  };
  userWatcher().watch(
      S, Cond, Value,
      [Handler, Arg](hsa_signal_value_t V) { return Handler(V, Arg); },
      OnDestroyed);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_amd_async_function(void (*Callback)(void *), void *Arg) {
  if (!isInitialized())
    return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!Callback)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  // A signal that is always 0 makes the watch fire at once, on the handler
  // thread, as ROCr runs async functions on its runtime thread.
  static SignalTy *Zero = new SignalTy(0);
  userWatcher().watch(Zero, HSA_SIGNAL_CONDITION_EQ, 0,
                      [Callback, Arg](hsa_signal_value_t) {
                        Callback(Arg);
                        return false;
                      });
  return HSA_STATUS_SUCCESS;
}

} // extern "C"

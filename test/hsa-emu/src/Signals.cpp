// SPDX-License-Identifier: Apache-2.0
//
// hsa-emu: signals, blocking waits and asynchronous signal handlers.
//
// A signal is a 64-bit value guarded by a mutex and a condition variable, so
// waits really block. Every change also bumps a process-wide generation
// counter that wakes the watcher threads (async handlers, copy
// dependencies), which then re-evaluate their conditions.
#include "Emu.h"

#include <chrono>
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

/// Leaked, like all global state of the emulation: the plugin may call in
/// from libomptarget's destructor, after this library's static destructors.
std::mutex &LiveLock = *new std::mutex();
std::unordered_set<SignalTy *> &LiveSignals =
    *new std::unordered_set<SignalTy *>();

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

bool isLive(SignalTy *S) {
  std::lock_guard<std::mutex> Guard(LiveLock);
  return LiveSignals.count(S) != 0;
}

hsa_status_t createSignal(hsa_signal_value_t Initial, hsa_signal_t *Out) {
  if (!isInitialized())
    return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!Out)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  auto *S = new SignalTy(Initial);
  {
    std::lock_guard<std::mutex> Guard(LiveLock);
    LiveSignals.insert(S);
  }
  *Out = S->handle();
  return HSA_STATUS_SUCCESS;
}

template <typename OpTy> hsa_signal_value_t rmw(hsa_signal_t Signal, OpTy Op) {
  return toSignal(Signal)->update(Op);
}

} // namespace

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
    return conditionHolds(Cond, Value.load(std::memory_order_acquire), Compare);
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
                      hsa_signal_value_t Compare, CallbackTy Fn) {
  {
    std::lock_guard<std::mutex> Guard(Lock);
    Watches.push_back({Signal, Cond, Compare, std::move(Fn)});
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
    {
      std::lock_guard<std::mutex> Guard(Lock);
      if (Stop)
        return;
      for (size_t I = 0; I < Watches.size();) {
        WatchTy &W = Watches[I];
        if (conditionHolds(W.Cond, W.Signal->load(), W.Compare)) {
          Ready.push_back(std::move(W));
          Watches[I] = std::move(Watches.back());
          Watches.pop_back();
        } else {
          ++I;
        }
      }
    }
    // Run without the lock: callbacks may register new watches.
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
  SignalTy *S = toSignal(Signal);
  {
    std::lock_guard<std::mutex> Guard(LiveLock);
    if (!S || !LiveSignals.erase(S))
      return HSA_STATUS_ERROR_INVALID_SIGNAL;
  }
  delete S;
  return HSA_STATUS_SUCCESS;
}

hsa_signal_value_t hsa_signal_load_scacquire(hsa_signal_t Signal) {
  return toSignal(Signal)->Value.load(std::memory_order_acquire);
}

hsa_signal_value_t hsa_signal_load_relaxed(hsa_signal_t Signal) {
  return toSignal(Signal)->Value.load(std::memory_order_relaxed);
}

void hsa_signal_store_relaxed(hsa_signal_t Signal, hsa_signal_value_t V) {
  rmw(Signal, [V](hsa_signal_value_t) { return V; });
}

void hsa_signal_store_screlease(hsa_signal_t Signal, hsa_signal_value_t V) {
  rmw(Signal, [V](hsa_signal_value_t) { return V; });
}

void hsa_signal_silent_store_relaxed(hsa_signal_t Signal,
                                     hsa_signal_value_t V) {
  rmw(Signal, [V](hsa_signal_value_t) { return V; });
}

void hsa_signal_silent_store_screlease(hsa_signal_t Signal,
                                       hsa_signal_value_t V) {
  rmw(Signal, [V](hsa_signal_value_t) { return V; });
}

// Every memory order maps to the same locked update: the emulation is
// sequentially consistent, which is stronger than any order HSA offers.
#define HSAEMU_SIGNAL_RMW(Op, Expr)                                            \
  void hsa_signal_##Op##_relaxed(hsa_signal_t S, hsa_signal_value_t V) {       \
    rmw(S, [V](hsa_signal_value_t Old) { return Expr; });                      \
  }                                                                            \
  void hsa_signal_##Op##_scacquire(hsa_signal_t S, hsa_signal_value_t V) {     \
    rmw(S, [V](hsa_signal_value_t Old) { return Expr; });                      \
  }                                                                            \
  void hsa_signal_##Op##_screlease(hsa_signal_t S, hsa_signal_value_t V) {     \
    rmw(S, [V](hsa_signal_value_t Old) { return Expr; });                      \
  }                                                                            \
  void hsa_signal_##Op##_scacq_screl(hsa_signal_t S, hsa_signal_value_t V) {   \
    rmw(S, [V](hsa_signal_value_t Old) { return Expr; });                      \
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
    return rmw(S, [V](hsa_signal_value_t) { return V; });                      \
  }                                                                            \
  hsa_signal_value_t hsa_signal_cas_##Order(                                   \
      hsa_signal_t S, hsa_signal_value_t Expected, hsa_signal_value_t V) {     \
    return rmw(S, [Expected, V](hsa_signal_value_t Old) {                      \
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
  return toSignal(Signal)->wait(Cond, Compare, TimeoutHint);
}

hsa_signal_value_t hsa_signal_wait_relaxed(hsa_signal_t Signal,
                                           hsa_signal_condition_t Cond,
                                           hsa_signal_value_t Compare,
                                           uint64_t TimeoutHint,
                                           hsa_wait_state_t WaitState) {
  return toSignal(Signal)->wait(Cond, Compare, TimeoutHint);
}

uint32_t hsa_amd_signal_wait_any(uint32_t Count, hsa_signal_t *Signals,
                                 hsa_signal_condition_t *Conds,
                                 hsa_signal_value_t *Values,
                                 uint64_t TimeoutHint,
                                 hsa_wait_state_t WaitHint,
                                 hsa_signal_value_t *SatisfyingValue) {
  auto Deadline = std::chrono::steady_clock::now() +
                  std::chrono::nanoseconds(std::min(TimeoutHint, ForeverNs));
  ChangeStateTy &C = changeState();
  std::unique_lock<std::mutex> Guard(C.Lock);
  while (true) {
    for (uint32_t I = 0; I < Count; ++I) {
      hsa_signal_value_t V = toSignal(Signals[I])->load();
      if (conditionHolds(Conds[I], V, Values[I])) {
        if (SatisfyingValue)
          *SatisfyingValue = V;
        return I;
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
  SignalTy *S = toSignal(Signal);
  if (!S || !isLive(S))
    return HSA_STATUS_ERROR_INVALID_SIGNAL;
  if (!Handler)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  userWatcher().watch(S, Cond, Value, [Handler, Arg](hsa_signal_value_t V) {
    return Handler(V, Arg);
  });
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

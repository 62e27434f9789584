// SPDX-License-Identifier: Apache-2.0
//
// HSA completion signals: a reference-counted wrapper and a recycling pool.
//
// A signal starts at 1 and is complete when it drops below 1: 0 is success,
// a negative value is a failure reported by the runtime (async copies) or
// by the queue. A signal is shared by whoever still needs it (the op that
// produced it, the ops depending on it, events, the stream's tail) and goes
// back to the pool, never to hsa_signal_destroy, when the last one lets go;
// recycling it earlier would let a waiter observe an unrelated operation.
#ifndef OFFLOADIO_AMDGPU_AMDGPUSIGNAL_H
#define OFFLOADIO_AMDGPU_AMDGPUSIGNAL_H

#include "HSAApi.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

namespace offloadio {
namespace amdgpu {

class AMDGPUQueueTy;
class AMDGPUSignalPoolTy;

/// One pooled HSA signal.
class AMDGPUSignalTy {
public:
  AMDGPUSignalTy(AMDGPUSignalPoolTy &Pool, const HSAApiTy &Api,
                 hsa_signal_t Signal)
      : Pool(Pool), Api(Api), Signal(Signal) {}

  /// The HSA handle.
  hsa_signal_t get() const { return Signal; }
  /// Current value (acquire).
  hsa_signal_value_t load() const {
    return Api.hsa_signal_load_scacquire(Signal);
  }
  /// Whether the operation it tracks has finished (successfully or not).
  bool isDone() const { return load() < 1; }
  /// Block until done or \p TimeoutTicks (system timestamp units) pass;
  /// returns the value last seen.
  hsa_signal_value_t waitDone(uint64_t TimeoutTicks) const {
    return Api.hsa_signal_wait_scacquire(Signal, HSA_SIGNAL_CONDITION_LT, 1,
                                         TimeoutTicks, HSA_WAIT_STATE_BLOCKED);
  }

  /// The AQL queue whose packet completes the signal, if any, so that
  /// waiters can notice that the queue died instead of waiting forever.
  const AMDGPUQueueTy *getProducer() const {
    return Producer.load(std::memory_order_acquire);
  }
  void setProducer(const AMDGPUQueueTy *Queue) {
    Producer.store(Queue, std::memory_order_release);
  }

  /// Take one more reference.
  void retain() { Refs.fetch_add(1, std::memory_order_relaxed); }
  /// Drop one reference; the last one returns the signal to its pool.
  inline void release();

private:
  friend class AMDGPUSignalPoolTy;
  AMDGPUSignalPoolTy &Pool;
  const HSAApiTy &Api;
  hsa_signal_t Signal;
  std::atomic<uint32_t> Refs{0};
  std::atomic<const AMDGPUQueueTy *> Producer{nullptr};
};

/// An owning reference to a pooled signal (copy = retain, destroy = release).
class AMDGPUSignalRefTy {
public:
  AMDGPUSignalRefTy() = default;
  /// Adopt one reference already taken on \p S.
  static AMDGPUSignalRefTy adopt(AMDGPUSignalTy *S) {
    AMDGPUSignalRefTy R;
    R.S = S;
    return R;
  }
  AMDGPUSignalRefTy(const AMDGPUSignalRefTy &O) : S(O.S) {
    if (S)
      S->retain();
  }
  AMDGPUSignalRefTy(AMDGPUSignalRefTy &&O) noexcept : S(O.S) { O.S = nullptr; }
  AMDGPUSignalRefTy &operator=(AMDGPUSignalRefTy O) noexcept {
    std::swap(S, O.S);
    return *this;
  }
  ~AMDGPUSignalRefTy() { reset(); }

  /// Drop the reference.
  void reset() {
    if (S)
      S->release();
    S = nullptr;
  }
  AMDGPUSignalTy *get() const { return S; }
  AMDGPUSignalTy *operator->() const { return S; }
  AMDGPUSignalTy &operator*() const { return *S; }
  explicit operator bool() const { return S != nullptr; }

private:
  AMDGPUSignalTy *S = nullptr;
};

/// Creates signals on demand and recycles released ones. Thread-safe.
class AMDGPUSignalPoolTy {
public:
  explicit AMDGPUSignalPoolTy(const HSAApiTy &Api) : Api(Api) {}
  AMDGPUSignalPoolTy(const AMDGPUSignalPoolTy &) = delete;
  AMDGPUSignalPoolTy &operator=(const AMDGPUSignalPoolTy &) = delete;
  ~AMDGPUSignalPoolTy() {
    for (auto &S : All)
      Api.hsa_signal_destroy(S->Signal);
  }

  /// A signal set to \p Initial, with one reference owned by the result.
  Expected<AMDGPUSignalRefTy> acquire(hsa_signal_value_t Initial = 1) {
    AMDGPUSignalTy *S = nullptr;
    {
      std::lock_guard<std::mutex> Guard(Lock);
      if (!Free.empty()) {
        S = Free.back();
        Free.pop_back();
      }
    }
    if (S) {
      Api.hsa_signal_store_relaxed(S->Signal, Initial);
    } else {
      hsa_signal_t Signal;
      if (auto Err =
              checkHSA(Api, Api.hsa_signal_create(Initial, 0, nullptr, &Signal),
                       "hsa_signal_create", "initial value {0}", Initial))
        return std::move(Err);
      auto Owned = std::make_unique<AMDGPUSignalTy>(*this, Api, Signal);
      S = Owned.get();
      std::lock_guard<std::mutex> Guard(Lock);
      All.push_back(std::move(Owned));
      // Keep release() allocation-free: Free can hold every signal.
      Free.reserve(All.size());
    }
    S->Refs.store(1, std::memory_order_relaxed);
    S->setProducer(nullptr);
    return AMDGPUSignalRefTy::adopt(S);
  }

  /// Number of signals created so far.
  size_t capacity() const {
    std::lock_guard<std::mutex> Guard(Lock);
    return All.size();
  }

private:
  friend class AMDGPUSignalTy;
  void recycle(AMDGPUSignalTy *S) {
    std::lock_guard<std::mutex> Guard(Lock);
    Free.push_back(S);
  }

  const HSAApiTy &Api;
  mutable std::mutex Lock;
  std::vector<std::unique_ptr<AMDGPUSignalTy>> All;
  std::vector<AMDGPUSignalTy *> Free;
};

void AMDGPUSignalTy::release() {
  // acq_rel: every use of the signal happens before it is recycled.
  if (Refs.fetch_sub(1, std::memory_order_acq_rel) == 1)
    Pool.recycle(this);
}

} // namespace amdgpu
} // namespace offloadio

#endif // OFFLOADIO_AMDGPU_AMDGPUSIGNAL_H

// SPDX-License-Identifier: Apache-2.0
//
// Pools of device resources (streams, events, staging buffers). Resources are
// created once and recycled: the hot path only pops and pushes pointers.
#ifndef OFFLOADIO_RESOURCEPOOL_H
#define OFFLOADIO_RESOURCEPOOL_H

#include "offloadio/Error.h"

#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace offloadio {

/// A growable pool that owns every resource it ever created.
///
/// @code
///   ResourcePoolTy<StreamTy> Streams([&] { return createStream(); });
///   if (auto Err = Streams.grow(4)) return Err;
///   Expected<StreamTy *> S = Streams.acquire();   // no allocation
///   Streams.release(*S);
/// @endcode
template <typename ResourceTy> class ResourcePoolTy {
public:
  /// Creates one new resource.
  using FactoryTy = std::function<Expected<std::unique_ptr<ResourceTy>>()>;

  explicit ResourcePoolTy(FactoryTy Factory) : Factory(std::move(Factory)) {}
  ResourcePoolTy(const ResourcePoolTy &) = delete;
  ResourcePoolTy &operator=(const ResourcePoolTy &) = delete;

  /// Create \p N more resources and make them available.
  Error grow(size_t N) {
    std::lock_guard<std::mutex> Guard(Lock);
    return growLocked(N);
  }

  /// Take a resource; the pool doubles when it runs out.
  Expected<ResourceTy *> acquire() {
    std::lock_guard<std::mutex> Guard(Lock);
    if (Free.empty())
      if (auto Err = growLocked(All.empty() ? 1 : All.size()))
        return std::move(Err);
    ResourceTy *R = Free.back();
    Free.pop_back();
    return R;
  }

  /// Give \p R back. It must have come from acquire() of this pool.
  void release(ResourceTy *R) {
    std::lock_guard<std::mutex> Guard(Lock);
    // Free has capacity for every resource, so this never allocates.
    Free.push_back(R);
  }

  /// Number of resources owned.
  size_t capacity() const {
    std::lock_guard<std::mutex> Guard(Lock);
    return All.size();
  }

  /// Number of resources not handed out.
  size_t available() const {
    std::lock_guard<std::mutex> Guard(Lock);
    return Free.size();
  }

  /// Apply \p Fn to every owned resource, handed out or not.
  template <typename FnTy> void forEach(FnTy Fn) {
    std::lock_guard<std::mutex> Guard(Lock);
    for (auto &R : All)
      Fn(*R);
  }

  /// Destroy every resource. Resources still handed out become dangling,
  /// so this runs only at device teardown.
  void clear() {
    std::lock_guard<std::mutex> Guard(Lock);
    Free.clear();
    All.clear();
  }

private:
  Error growLocked(size_t N) {
    All.reserve(All.size() + N);
    Free.reserve(All.size() + N);
    for (size_t I = 0; I < N; ++I) {
      auto R = Factory();
      if (!R)
        return R.takeError();
      Free.push_back(R->get());
      All.push_back(std::move(*R));
    }
    return Error::success();
  }

  FactoryTy Factory;
  mutable std::mutex Lock;
  std::vector<std::unique_ptr<ResourceTy>> All;
  std::vector<ResourceTy *> Free;
};

/// A move-only handle on a pooled resource that returns it on destruction.
template <typename ResourceTy> class PoolLeaseTy {
public:
  PoolLeaseTy() = default;
  PoolLeaseTy(ResourcePoolTy<ResourceTy> &Pool, ResourceTy *R)
      : Pool(&Pool), R(R) {}
  PoolLeaseTy(PoolLeaseTy &&O) noexcept : Pool(O.Pool), R(O.R) {
    O.R = nullptr;
  }
  PoolLeaseTy &operator=(PoolLeaseTy &&O) noexcept {
    if (this != &O) {
      reset();
      Pool = O.Pool;
      R = O.R;
      O.R = nullptr;
    }
    return *this;
  }
  PoolLeaseTy(const PoolLeaseTy &) = delete;
  PoolLeaseTy &operator=(const PoolLeaseTy &) = delete;
  ~PoolLeaseTy() { reset(); }

  /// Return the resource to its pool now.
  void reset() {
    if (R)
      Pool->release(R);
    R = nullptr;
  }
  /// The leased resource.
  ResourceTy *get() const { return R; }
  ResourceTy *operator->() const { return R; }
  ResourceTy &operator*() const { return *R; }
  explicit operator bool() const { return R != nullptr; }

private:
  ResourcePoolTy<ResourceTy> *Pool = nullptr;
  ResourceTy *R = nullptr;
};

} // namespace offloadio

#endif // OFFLOADIO_RESOURCEPOOL_H

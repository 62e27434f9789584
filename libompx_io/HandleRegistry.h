// SPDX-License-Identifier: Apache-2.0
//
// The handles libompx_io gives the program for work in flight (requests,
// batches): numbers, never reused, looked up in a registry of what is in
// flight. A handle waited for twice, or never returned by a submission, is
// found in no registry and refused with EINVAL instead of touching freed
// memory; what the program never waited for is finished and released when
// the registry is destroyed at exit.
#ifndef OMPX_IO_HANDLEREGISTRY_H
#define OMPX_IO_HANDLEREGISTRY_H

#include "Diagnostics.h"
#include "offloadio/CreatorProcess.h"

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <unistd.h>
#include <unordered_map>
#include <utility>

namespace ompxio {

/// The work in flight behind the handles of type \p HandleTy (an opaque
/// pointer type of ompx_io.h), each with its \p PayloadTy.
template <typename HandleTy, typename PayloadTy> class HandleRegistryTy {
public:
  /// Finish the work of a payload left at exit, dropping its results.
  using FinishFnTy = void (*)(PayloadTy &);

  /// \p Noun names the payloads in the exit message ("request(s)");
  /// \p Finish finishes each payload left at exit.
  HandleRegistryTy(const char *Noun, FinishFnTy Finish)
      : Noun(Noun), Finish(Finish) {}

  /// What the program never waited for is finished and released here, at
  /// exit: its transfers run to completion (no data is left half written
  /// behind the program's back) and nothing stays allocated.
  ~HandleRegistryTy() {
    // A child forked from the program inherits the registry, but the
    // transfers are the parent's, and a parent thread may have held the
    // registry's lock at the fork: the child leaves it alone.
    if (!Creator.isCurrent())
      return;
    std::unordered_map<uintptr_t, PayloadTy> Left;
    {
      std::lock_guard<std::mutex> Guard(Lock);
      Left.swap(InFlight);
    }
    if (!Left.empty() && infoEnabled())
      std::fprintf(stderr,
                   "%s: %zu %s never waited for: finishing and releasing "
                   "them at exit\n",
                   linePrefix().c_str(), Left.size(), Noun);
    // Their results, errors included, have no one left to read them.
    for (auto &[Id, Payload] : Left)
      Finish(Payload);
  }

  HandleRegistryTy(const HandleRegistryTy &) = delete;
  HandleRegistryTy &operator=(const HandleRegistryTy &) = delete;

  /// Register \p Payload; its handle.
  HandleTy track(PayloadTy Payload) {
    std::lock_guard<std::mutex> Guard(Lock);
    uintptr_t Id = ++LastId;
    InFlight.emplace(Id, std::move(Payload));
    return reinterpret_cast<HandleTy>(Id);
  }

  /// Take the payload of \p Handle out of the registry into \p Out; false
  /// when \p Handle is not in flight. A second claim, even a concurrent
  /// one, finds nothing.
  bool claim(HandleTy Handle, PayloadTy &Out) {
    std::lock_guard<std::mutex> Guard(Lock);
    auto It = InFlight.find(reinterpret_cast<uintptr_t>(Handle));
    if (It == InFlight.end())
      return false;
    Out = std::move(It->second);
    InFlight.erase(It);
    return true;
  }

  /// Run \p Fn on the payload of \p Handle under the registry's lock, so
  /// that no concurrent claim releases its work meanwhile; false, and no
  /// call, when \p Handle is not in flight. \p Fn must not wait.
  template <typename FnTy> bool withTracked(HandleTy Handle, FnTy Fn) {
    std::lock_guard<std::mutex> Guard(Lock);
    auto It = InFlight.find(reinterpret_cast<uintptr_t>(Handle));
    if (It == InFlight.end())
      return false;
    Fn(It->second);
    return true;
  }

private:
  const char *Noun;
  FinishFnTy Finish;
  /// The process that created the registry (see the destructor).
  offloadio::CreatorProcessTy Creator;
  /// Guards InFlight and LastId; never held while waiting.
  std::mutex Lock;
  /// Handle numbers are never reused: a stale handle cannot name newer
  /// work.
  uintptr_t LastId = 0;
  std::unordered_map<uintptr_t, PayloadTy> InFlight;
};

} // namespace ompxio

#endif // OMPX_IO_HANDLEREGISTRY_H

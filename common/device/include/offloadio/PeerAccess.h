// SPDX-License-Identifier: Apache-2.0
//
// Whether a device copies straight into each peer device's memory. The
// backend is asked, and enables the access, once per peer; the answer is
// kept for every later copy, as LLVM's plugin keeps it. A backend error is
// returned to the copy that asked, once, and kept as "no peer access":
// copies still have the vendor's route through the host.
#ifndef OFFLOADIO_PEERACCESS_H
#define OFFLOADIO_PEERACCESS_H

#include "offloadio/Error.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstdint>
#include <mutex>
#include <vector>

namespace offloadio {

/// One device's answers, by peer device number.
class PeerAccessTableTy {
public:
  /// Whether copies to peer \p PeerId go straight to its memory. The first
  /// call for a peer runs \p Enable (which asks the vendor and enables the
  /// access) and keeps its answer, or false if it failed (that call gets
  /// the error); callers for the same peer meanwhile wait for the answer.
  Expected<bool> hasPeerAccess(int32_t PeerId,
                               llvm::function_ref<Expected<bool>()> Enable);

private:
  enum class StateTy : uint8_t { Unknown, PeerAccess, ThroughHost };
  std::mutex Lock;
  std::vector<StateTy> States;
};

} // namespace offloadio

#endif // OFFLOADIO_PEERACCESS_H

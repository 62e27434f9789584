// SPDX-License-Identifier: Apache-2.0
#include "offloadio/PeerAccess.h"

using namespace offloadio;

Expected<bool>
PeerAccessTableTy::hasPeerAccess(int32_t PeerId,
                                 llvm::function_ref<Expected<bool>()> Enable) {
  if (PeerId < 0)
    return makeError(ErrorCode::InvalidArgument, "peer device {0}", PeerId);
  // Held across Enable: enabling twice is an error of its own in some
  // vendor APIs, and it happens once per peer.
  std::lock_guard<std::mutex> Guard(Lock);
  if (States.size() <= size_t(PeerId))
    States.resize(size_t(PeerId) + 1, StateTy::Unknown);
  if (States[PeerId] != StateTy::Unknown)
    return States[PeerId] == StateTy::PeerAccess;
  auto Answer = Enable();
  States[PeerId] =
      Answer && *Answer ? StateTy::PeerAccess : StateTy::ThroughHost;
  return Answer;
}

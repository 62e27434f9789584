// SPDX-License-Identifier: Apache-2.0
#include "offloadio/io/IOPathBackend.h"
#include "offloadio/io/IORequest.h"
#include "offloadio/io/IOStats.h"

using namespace offloadio;

IOPathBackendTy::~IOPathBackendTy() = default;

void offloadio::countBytes(IOStatsTy &Stats, const IORequestTy &R,
                           IOPathTy Path, size_t Bytes) {
  auto &Counter = R.isWrite() ? Stats.BytesWritten : Stats.BytesRead;
  Counter[unsigned(Path)].fetch_add(Bytes, std::memory_order_relaxed);
}

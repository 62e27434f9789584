// SPDX-License-Identifier: Apache-2.0
#include "offloadio/io/IORefusedFileSystems.h"

using namespace offloadio;

bool IORefusedFileSystemsTy::refuse(dev_t Key, std::string Reason) {
  std::lock_guard<std::mutex> Guard(Lock);
  return Reasons.emplace(Key, std::move(Reason)).second;
}

std::optional<std::string> IORefusedFileSystemsTy::reasonFor(dev_t Key) const {
  std::lock_guard<std::mutex> Guard(Lock);
  auto It = Reasons.find(Key);
  if (It == Reasons.end())
    return std::nullopt;
  return It->second;
}

size_t IORefusedFileSystemsTy::size() const {
  std::lock_guard<std::mutex> Guard(Lock);
  return Reasons.size();
}

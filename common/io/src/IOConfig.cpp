// SPDX-License-Identifier: Apache-2.0
//
// The file engine's settings from OMPX_IO_*, and the names of its paths.
#include "offloadio/io/IOConfig.h"
#include "offloadio/Envar.h"
#include "offloadio/ProcessShare.h"

#include <algorithm>

using namespace offloadio;

const char *offloadio::ioPathName(IOPathTy Path) {
  switch (Path) {
  case IOPathTy::HostAddressable:
    return "direct";
  case IOPathTy::Fastpath:
    return "fastpath";
  case IOPathTy::Staged:
    return "staged";
  case IOPathTy::Count:
    break;
  }
  return "unknown";
}

unsigned IOConfigTy::defaultThreads(const ProcessShareTy &Share) {
  return std::min(DefaultMaxThreads, Share.cpus());
}

std::string IOConfigTy::defaultThreadsOrigin(const ProcessShareTy &Share) {
  return "min(" + std::to_string(DefaultMaxThreads) + ", " +
         Share.cpusOrigin() + ")";
}

IOConfigTy IOConfigTy::fromEnv() { return fromEnv(ProcessShareTy::detect()); }

IOConfigTy IOConfigTy::fromEnv(const ProcessShareTy &Share) {
  IOConfigTy C;
  C.Threads =
      readIntEnv("OMPX_IO_THREADS", defaultThreads(Share), 1, MaxThreads);
  C.ChunkSize = readSizeEnv("OMPX_IO_CHUNK_SIZE", DefaultChunkSize,
                            MinChunkSize, MaxChunkSize);
  C.DirectChunkSize = readSizeEnv("OMPX_IO_DIRECT_CHUNK_SIZE",
                                  DefaultDirectChunkSize, MinChunkSize,
                                  MaxChunkSize);
  C.RingDepth =
      readIntEnv("OMPX_IO_RING_DEPTH", DefaultRingDepth, 1, MaxRingDepth);
  static const char *const Paths[] = {"auto", "direct", "fastpath", "staged"};
  C.ForcedPath = int(readChoiceEnv("OMPX_IO_PATH", Paths, 0)) - 1;
  C.Info = readBoolEnv("OMPX_IO_INFO", false);
  static const char *const Policies[] = {"auto", "on", "off"};
  C.ODirect = IODirectPolicyTy(readChoiceEnv("OMPX_IO_ODIRECT", Policies, 0));
  C.MaxRequests = readIntEnv("OMPX_IO_MAX_REQUESTS", DefaultMaxRequests, 1,
                             MaxMaxRequests);
  return C;
}

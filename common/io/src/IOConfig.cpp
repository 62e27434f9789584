// SPDX-License-Identifier: Apache-2.0
//
// The file engine's settings from OMPX_IO_*, and the names of its paths.
#include "offloadio/io/IOConfig.h"
#include "offloadio/io/IOPathNames.h"
#include "offloadio/Envar.h"
#include "offloadio/ProcessShare.h"

#include <algorithm>

using namespace offloadio;

const char *offloadio::ioPathName(IOPathTy Path) {
  // Count is not a path of the engine; its number names the host's.
  return Path == IOPathTy::Count ? "unknown" : ioPathNameOf(int(Path));
}

unsigned IOConfigTy::defaultThreads(const ProcessShareTy &Share) {
  return std::min(DefaultMaxThreads, Share.cpus());
}

std::string IOConfigTy::defaultThreadsOrigin(const ProcessShareTy &Share) {
  return "min(" + std::to_string(DefaultMaxThreads) + ", " +
         Share.cpusOrigin() + ") per device in use, at most " +
         std::to_string(Share.cpus()) + " in all";
}

IOConfigTy IOConfigTy::fromEnv() { return fromEnv(ProcessShareTy::detect()); }

IOConfigTy IOConfigTy::fromEnv(const ProcessShareTy &Share) {
  IOConfigTy C;
  // In the order of Settings.def, which is the order ompx_io_get_settings
  // reports them in.
  C.Threads = unsigned(readIntSetting<SettingId::IOThreads>(
      {defaultThreads(Share), std::nullopt, std::nullopt}));
  // More workers than CPUs make reads slower, not faster.
  C.ThreadsCap = std::max(C.Threads, Share.cpus());
  C.ChunkSize = readSizeSetting<SettingId::IOChunkSize>();
  C.DirectChunkSize = readSizeSetting<SettingId::IODirectChunkSize>();
  C.RingDepth = unsigned(readIntSetting<SettingId::IORingDepth>());
  // auto is -1, the paths their IOPathTy.
  C.ForcedPath = int(readChoiceSetting<SettingId::IOPath>()) - 1;
  C.Info = readBoolSetting<SettingId::IOInfo>();
  C.ODirect = IODirectPolicyTy(readChoiceSetting<SettingId::IODirect>());
  C.MaxRequests = unsigned(readIntSetting<SettingId::IOMaxRequests>());
  return C;
}

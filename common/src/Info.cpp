// SPDX-License-Identifier: Apache-2.0
#include "offloadio/Info.h"
#include "offloadio/Envar.h"

#include <cstdio>

using namespace offloadio;

InfoTy::InfoTy(std::string Name) : PluginName(std::move(Name)), Flags(0) {
  // libomptarget accepts decimal or hex; -1 means everything.
  if (auto Raw = getEnv("LIBOMPTARGET_INFO")) {
    if (auto N = parseInt(*Raw))
      Flags = static_cast<uint32_t>(*N);
    else
      reportInvalidEnv("LIBOMPTARGET_INFO", *Raw, "an integer", "0");
  }
}

void InfoTy::emit(int32_t DeviceId, const std::string &Msg,
                  bool IsError) const {
  std::string Line = "offload-io(" + PluginName + ")";
  if (DeviceId >= 0)
    Line += " device " + std::to_string(DeviceId);
  Line += IsError ? ": error: " : ": ";
  Line += Msg;
  Line += '\n';
  std::lock_guard<std::mutex> Guard(OutputLock);
  // stderr is unbuffered; one fwrite keeps the line whole.
  std::fwrite(Line.data(), 1, Line.size(), stderr);
}

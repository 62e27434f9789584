// SPDX-License-Identifier: Apache-2.0
#include "offloadio/Info.h"
#include "offloadio/MessagePrefix.h"

#include <cstdio>
#include <unistd.h>

using namespace offloadio;

InfoTy::InfoTy(std::string Name, uint32_t StockFlags, uint32_t OwnFlags)
    : PluginName(std::move(Name)), StockFlags(StockFlags), OwnFlags(OwnFlags) {}

void InfoTy::emit(int32_t DeviceId, const std::string &Msg,
                  bool IsError) const {
  std::string Line = linePrefix(PluginName, DeviceId);
  Line += IsError ? ": error: " : ": ";
  Line += Msg;
  writeLine(std::move(Line));
}

void InfoTy::emitStock(int32_t DeviceId, const std::string &Msg) const {
  writeLine(stockInfoLinePrefix(DeviceId) + Msg);
}

void InfoTy::writeLine(std::string Line) {
  Line += '\n';
  // stderr is unbuffered and fwrite holds the stream's own lock for the
  // whole call, so lines from concurrent threads never interleave. No lock
  // of ours: glibc resets stdio locks in a forked child, so the child can
  // still report errors even if a parent thread was printing at the fork.
  std::fwrite(Line.data(), 1, Line.size(), stderr);
}

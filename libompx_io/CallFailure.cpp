// SPDX-License-Identifier: Apache-2.0
#include "CallFailure.h"
#include "Diagnostics.h"
#include "Library.h"

#include <cerrno>
#include <cstring>

using namespace ompxio;

int ompxio::invalidArgument(const char *Call, const char *What) {
  return fail(EINVAL, std::string(Call) + ": " + What);
}

int ompxio::notServed(const char *Call, std::optional<int> Device) {
  return fail(ENODEV, notServedMessage(Call, Device));
}

std::string ompxio::callHead(const char *Call, std::optional<int> Device) {
  std::string Head = Call;
  if (Device)
    Head += " on device " + std::to_string(*Device);
  return Head;
}

std::string ompxio::pluginMessage(const PluginTy &Plugin, int Errno,
                                  const char *Call,
                                  std::optional<int> Device) {
  std::string Message = callHead(Call, Device);
  char Text[512];
  if (Plugin.takeLastError(Text, sizeof(Text)))
    Message += std::string(": ") + Text;
  else
    Message += std::string(": ") + std::strerror(Errno);
  return Message;
}

int ompxio::pluginFailure(const PluginTy &Plugin, int Errno, const char *Call,
                          std::optional<int> Device) {
  return fail(Errno, pluginMessage(Plugin, Errno, Call, Device));
}

int ompxio::lackingExtension(const PluginTy &Plugin, const char *Name,
                             const char *Call, std::optional<int> Device) {
  return fail(ENOSYS, callHead(Call, Device) + ": " + Plugin.lacking(Name));
}

// SPDX-License-Identifier: Apache-2.0
#include "Diagnostics.h"
#include "PluginDirectory.h"
#include "offloadio/Envar.h"
#include "offloadio/MessagePrefix.h"

#include <atomic>
#include <climits>
#include <cstdint>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <unistd.h>

using namespace ompxio;

int ompxio::fail(int Errno, std::string Message) {
  LibraryErrorsTy::record(std::move(Message));
  errno = Errno;
  return -1;
}

std::string ompxio::linePrefix() { return offloadio::libraryLinePrefix(); }

bool ompxio::infoEnabled() {
  // The plugins' readers (Settings.def): a value they refuse is refused
  // here too, with the same warning, printed once per process by whichever
  // reads it first.
  using namespace offloadio;
  return readBoolSetting<SettingId::IOInfo>() ||
         readInfoMaskSetting<SettingId::OwnInfo>() != 0;
}

namespace {
/// The libomptarget function \p Name of the running program, or null.
template <typename FnTy> FnTy openmpFunction(const char *Name) {
  return reinterpret_cast<FnTy>(processSymbol(Name));
}

/// The ", "-separated paths of the loaded offload plugins that have devices
/// but not the offload-io extensions.
std::string foreignPlugins() {
  std::string List;
  for (const OffloadPluginObjectTy &P : loadedOffloadPlugins()) {
    if (P.Ours)
      continue;
    // A plugin without devices (no GPU) serves nothing: left out.
    // libomptarget asked every plugin it loaded for its count already.
    std::optional<int32_t> NumDevices = numberOfDevices(P.Object);
    if (NumDevices && *NumDevices <= 0)
      continue;
    List += List.empty() ? "" : ", ";
    List += P.Object.Path;
  }
  return List;
}

/// The file of this libompx_io, as the dynamic loader names it.
std::string ownFile() {
  Dl_info Where;
  if (dladdr(reinterpret_cast<void *>(&explainNotServed), &Where) &&
      Where.dli_fname)
    return Where.dli_fname;
  return "libompx_io";
}

/// The documentation page \p Page of the prefix \p Library is installed
/// in (<prefix>/share/doc/offload-io/, from lib/ or a multiarch lib/<arch>/),
/// else where the sources keep it.
std::string docPath(const std::string &Library, const char *Page) {
  size_t Slash = Library.rfind('/');
  if (Slash != std::string::npos) {
    for (const char *Up : {"/../share/doc/offload-io/", "/../../share/doc/offload-io/"}) {
      std::string Candidate = Library.substr(0, Slash) + Up + Page;
      char Real[PATH_MAX];
      if (realpath(Candidate.c_str(), Real))
        return Real;
    }
  }
  return std::string("docs/") + Page + " of the offload-io sources";
}
} // namespace

std::string ompxio::explainNotServed(const char *Call,
                                     std::optional<int> Device,
                                     std::atomic<bool> &Warned) {
  std::string Head = std::string(Call) + ": ";
  if (Device) {
    auto NumDevices = openmpFunction<int (*)()>("omp_get_num_devices");
    int Count = NumDevices ? NumDevices() : -1;
    if (*Device == Count)
      return Head + "device " + std::to_string(*Device) +
             " is the initial device (the host), which no plugin serves";
    if (*Device < 0 || (Count >= 0 && *Device >= Count))
      return Head + "device " + std::to_string(*Device) +
             " does not exist (omp_get_num_devices() is " +
             std::to_string(Count) + ")";
  }
  std::string Foreign = foreignPlugins();
  std::string Library = ownFile();
  std::string Subject =
      Device ? "OpenMP device " + std::to_string(*Device) +
                   " is not served by an offload-io plugin"
             : std::string("no offload-io plugin is loaded");
  std::string Why =
      ": libomptarget loaded " +
      (Foreign.empty() ? std::string("no other offload plugin")
                       : Foreign + ", not offload-io's") +
      ". This libompx_io (" + Library +
      ") does not load ours: link the installed libompx_io, which does, or "
      "the package's plugins target, or put the directory of offload-io's "
      "plugins first in LD_LIBRARY_PATH (see " +
      docPath(Library, "install.md") + ")";
  // Once per process: every ompx call fails the same way here, and
  // ompx_io_last_error has the message for each of them.
  if (!Warned.exchange(true))
    std::fprintf(stderr, "%s: warning: %s%s\n", linePrefix().c_str(),
                 Subject.c_str(), Why.c_str());
  return Head + Subject + Why;
}

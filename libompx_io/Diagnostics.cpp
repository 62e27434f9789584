// SPDX-License-Identifier: Apache-2.0
#include "Diagnostics.h"
#include "offloadio/Envar.h"
#include "offloadio/LaunchRank.h"
#include "offloadio/StaticTLS.h"

#include <atomic>
#include <cstdint>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

using namespace ompxio;

namespace {
/// This thread's innermost ErrorDiversionTy, or null.
ErrorDiversionTy *&innermostDiversion() {
  OFFLOADIO_STATIC_TLS thread_local ErrorDiversionTy *Innermost = nullptr;
  return Innermost;
}
} // namespace

std::string &ompxio::lastError() {
  if (ErrorDiversionTy *D = innermostDiversion())
    return D->Message;
  // Per thread, as errno: a failure of one thread must not replace the
  // message another thread is about to read.
  OFFLOADIO_STATIC_TLS thread_local std::string Message;
  return Message;
}

ErrorDiversionTy::ErrorDiversionTy()
    : Outer(innermostDiversion()), SavedErrno(errno) {
  innermostDiversion() = this;
}

ErrorDiversionTy::~ErrorDiversionTy() {
  innermostDiversion() = Outer;
  errno = SavedErrno;
}

int ompxio::fail(int Errno, std::string Message) {
  lastError() = std::move(Message);
  errno = Errno;
  return -1;
}

std::string ompxio::linePrefix() {
  return "ompx-io" + offloadio::processTag(::getpid());
}

bool ompxio::infoEnabled() {
  // The plugins' readers (Settings.def): a value they refuse is refused
  // here too, with the same warning, printed once per process by whichever
  // reads it first.
  using namespace offloadio;
  return readBoolSetting<SettingId::IOInfo>() ||
         readInfoMaskSetting<SettingId::Info>() != 0;
}

namespace {

/// The libomptarget function \p Name of the running program, or null.
template <typename FnTy> FnTy openmpFunction(const char *Name) {
  return reinterpret_cast<FnTy>(dlsym(RTLD_DEFAULT, Name));
}

/// Adds the path of each loaded offload plugin with devices but without the
/// offload-io extensions to the ", "-separated list in \p Data.
int collectForeignPlugin(struct dl_phdr_info *Info, size_t, void *Data) {
  const char *Name = Info->dlpi_name;
  if (!Name || !*Name)
    return 0;
  const char *Base = std::strrchr(Name, '/');
  Base = Base ? Base + 1 : Name;
  if (std::strncmp(Base, "libomptarget.rtl.", 17))
    return 0;
  // RTLD_NOLOAD only finds what is loaded already; the handle is a
  // reference of ours, closed at once.
  void *H = dlopen(Name, RTLD_LAZY | RTLD_NOLOAD);
  if (!H)
    return 0;
  bool Ours = dlsym(H, "__tgt_rtl_ompx_resolve_device") != nullptr;
  // A plugin without devices (no GPU) serves nothing: left out. libomptarget
  // asked every plugin it loaded for its count already.
  using NumDevicesFnTy = int32_t (*)();
  auto NumDevices = reinterpret_cast<NumDevicesFnTy>(
      dlsym(H, "__tgt_rtl_number_of_devices"));
  bool HasDevices = !NumDevices || NumDevices() > 0;
  dlclose(H);
  if (Ours || !HasDevices)
    return 0;
  auto &List = *static_cast<std::string *>(Data);
  List += List.empty() ? "" : ", ";
  List += Name;
  return 0;
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
  std::string Foreign;
  dl_iterate_phdr(collectForeignPlugin, &Foreign);
  std::string Subject =
      Device ? "OpenMP device " + std::to_string(*Device) +
                   " is not served by an offload-io plugin"
             : std::string("no offload-io plugin is loaded");
  std::string Why =
      ": libomptarget loaded " +
      (Foreign.empty() ? std::string("no other offload plugin")
                       : Foreign + ", not offload-io's") +
      ". To load ours, put the offload-io library directory first in "
      "LD_LIBRARY_PATH or link the package's plugins target (see "
      "docs/install.md)";
  // Once per process: every ompx call fails the same way here, and
  // ompx_io_last_error has the message for each of them.
  if (!Warned.exchange(true))
    std::fprintf(stderr, "%s: warning: %s%s\n", linePrefix().c_str(),
                 Subject.c_str(), Why.c_str());
  return Head + Subject + Why;
}

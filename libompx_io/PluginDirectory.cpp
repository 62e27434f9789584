// SPDX-License-Identifier: Apache-2.0
#include "PluginDirectory.h"

#include "offloadio/ExtensionLookup.h"

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <dlfcn.h>
#include <link.h>

using namespace ompxio;

std::string PluginTy::lacking(const char *Name) const {
  return "plugin " + Path + " answers extension table version " +
         std::to_string(Fns.Version) + ", which lacks " + Name +
         ": update the plugin";
}

std::string ompxio::pluginTarget(const std::string &Path) {
  static constexpr const char Prefix[] = "libomptarget.rtl.";
  size_t Slash = Path.rfind('/');
  size_t Start = Slash == std::string::npos ? 0 : Slash + 1;
  if (Path.compare(Start, sizeof(Prefix) - 1, Prefix) != 0)
    return "";
  Start += sizeof(Prefix) - 1;
  size_t End = Path.find('.', Start);
  return Path.substr(Start, End == std::string::npos ? std::string::npos
                                                     : End - Start);
}

std::optional<PluginTy> ompxio::askPlugin(const std::string &Path,
                                          DiscoveryFnTy Discover,
                                          std::string &Why) {
  PluginTy P;
  P.Path = Path;
  // The one reading of a table (ExtensionLookup.h): ours as the request,
  // entries past the plugin's size null.
  int Err = offloadio_ask_extensions(Discover, &P.Fns);
  if (Err == EPROTO) {
    Why = Path + ": " + DiscoverySymbol + " answered a table of " +
          std::to_string(P.Fns.Size) + " bytes, less than its header";
    return std::nullopt;
  }
  if (Err) {
    Why = Path + ": " + DiscoverySymbol + " failed: " + std::strerror(Err);
    return std::nullopt;
  }
  return P;
}

namespace {
int collectObject(struct dl_phdr_info *Info, size_t, void *Data) {
  // The program itself has no name; it is no plugin.
  if (Info->dlpi_name && *Info->dlpi_name)
    static_cast<std::vector<LoadedObjectTy> *>(Data)->push_back(
        {Info->dlpi_name});
  return 0;
}
} // namespace

std::vector<LoadedObjectTy> ompxio::loadedObjects() {
  // Listed first, opened after: no loader call runs under the loader's
  // lock that dl_iterate_phdr holds.
  std::vector<LoadedObjectTy> Objects;
  dl_iterate_phdr(collectObject, &Objects);
  return Objects;
}

void *ompxio::ownSymbol(const LoadedObjectTy &Object, const char *Symbol,
                        bool Keep) {
  // RTLD_NOLOAD only finds what is loaded already: nothing is loaded here.
  void *H = dlopen(Object.Path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (!H)
    return nullptr;
  // dlsym also searches the object's dependencies: an object linked
  // against a plugin would answer with the plugin's symbol.
  void *Sym = dlsym(H, Symbol);
  Dl_info Where;
  if (Sym && !(dladdr(Sym, &Where) && Where.dli_fname &&
               Object.Path == Where.dli_fname))
    Sym = nullptr;
  if (!Sym || !Keep)
    dlclose(H);
  return Sym;
}

void *ompxio::processSymbol(const char *Symbol) {
  return dlsym(RTLD_DEFAULT, Symbol);
}

std::vector<OffloadPluginObjectTy> ompxio::loadedOffloadPlugins() {
  std::vector<OffloadPluginObjectTy> Found;
  for (LoadedObjectTy &Object : loadedObjects()) {
    const char *Base = std::strrchr(Object.Path.c_str(), '/');
    Base = Base ? Base + 1 : Object.Path.c_str();
    if (std::strncmp(Base, "libomptarget.rtl.", 17))
      continue;
    bool Ours = ownSymbol(Object, DiscoverySymbol, /*Keep=*/false);
    Found.push_back({std::move(Object), Ours});
  }
  return Found;
}

std::optional<int32_t> ompxio::numberOfDevices(const LoadedObjectTy &Object) {
  using NumDevicesFnTy = int32_t (*)();
  // The reference dlopen took is dropped at once: libomptarget keeps the
  // object loaded, so the function stays callable.
  auto NumDevices = reinterpret_cast<NumDevicesFnTy>(
      ownSymbol(Object, "__tgt_rtl_number_of_devices", /*Keep=*/false));
  if (!NumDevices)
    return std::nullopt;
  return NumDevices();
}

std::vector<PluginTy> ompxio::findPlugins() {
  std::vector<PluginTy> Found;
  for (const LoadedObjectTy &Object : loadedObjects()) {
    // A plugin's reference stays: its calls are used until exit.
    auto *Discover = reinterpret_cast<DiscoveryFnTy>(
        ownSymbol(Object, DiscoverySymbol, /*Keep=*/true));
    if (!Discover)
      continue;
    std::string Why;
    if (std::optional<PluginTy> P = askPlugin(Object.Path, Discover, Why))
      Found.push_back(std::move(*P));
  }
  return Found;
}

void PluginDirectoryTy::loadPlugins() {
  if (Loaded)
    return;
  Loaded = true;
  for (PluginTy &P : findPlugins())
    Plugins.push_back(std::make_unique<PluginTy>(std::move(P)));
}

bool PluginDirectoryTy::resolve(int Device, DeviceRefTy &Ref) {
  std::lock_guard<std::mutex> Guard(Lock);
  auto It = Devices.find(Device);
  if (It != Devices.end()) {
    Ref = It->second;
    return true;
  }
  loadPlugins();
  for (const std::unique_ptr<PluginTy> &P : Plugins) {
    // A plugin that cannot say which devices are its own serves none.
    if (!P->Fns.ResolveDevice)
      continue;
    int32_t Local = P->Fns.ResolveDevice(Device);
    if (Local >= 0) {
      Ref = {P.get(), Local};
      Devices[Device] = Ref;
      return true;
    }
  }
  return false;
}

const PluginTy *PluginDirectoryTy::anyPlugin() {
  std::lock_guard<std::mutex> Guard(Lock);
  loadPlugins();
  return Plugins.empty() ? nullptr : Plugins.front().get();
}

// SPDX-License-Identifier: Apache-2.0
//
// The offload-io plugins of the process and the devices they serve. A
// plugin is any loaded object that exports the discovery entry point
// __tgt_rtl_ompx_extensions (offloadio/ExtensionABI.h), whatever its file
// is called: libomptarget loaded it already, so this only looks. Its table
// may be older or newer than this library's; the entries its size covers
// are used, and a call whose entry is missing fails naming it.
#ifndef OMPX_IO_PLUGINDIRECTORY_H
#define OMPX_IO_PLUGINDIRECTORY_H

#include "offloadio/ExtensionABI.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace ompxio {

/// The discovery entry point's type.
using DiscoveryFnTy = decltype(&__tgt_rtl_ompx_extensions);

/// The name of the discovery entry point.
inline constexpr const char *DiscoverySymbol = OFFLOADIO_DISCOVERY_SYMBOL;

/// One offload-io plugin: the object that answered and the table it gave.
struct PluginTy {
  std::string Path; ///< The object's file, as the dynamic loader names it.
  /// The plugin's calls; an entry past what the plugin filled is null.
  offloadio::ExtensionTableTy Fns;

  /// Why the call \p Name (an offloadio::ExtensionNames entry) cannot be
  /// made: "plugin <path> answers extension table version N, which lacks
  /// <name>: update the plugin".
  std::string lacking(const char *Name) const;

  /// The message of this thread's last failed call of the plugin, taken
  /// (__tgt_rtl_ompx_take_last_error) into \p Buf: its full length, 0 when
  /// there is none or the table lacks the call.
  uint64_t takeLastError(char *Buf, uint64_t Len) const {
    return Fns.TakeLastError ? Fns.TakeLastError(Buf, Len) : 0;
  }
};

/// The target a plugin's file name says it serves, as libomptarget names
/// its plugins: "cuda" of ".../libomptarget.rtl.cuda.nextgen.so" or
/// "libomptarget.rtl.cuda.so.18.1"; "" for another name.
std::string pluginTarget(const std::string &Path);

/// Ask \p Discover, the discovery entry point of the object \p Path, for
/// its table; the plugin, or nullopt and the reason in \p Why when it
/// refuses.
std::optional<PluginTy> askPlugin(const std::string &Path,
                                  DiscoveryFnTy Discover, std::string &Why);

/// One object the dynamic loader has loaded, the program excepted.
struct LoadedObjectTy {
  std::string Path; ///< As the loader names it (dl_phdr_info::dlpi_name).
};

/// The objects loaded now, in load order.
std::vector<LoadedObjectTy> loadedObjects();

/// \p Symbol as \p Object itself defines it, or null: a definition found in
/// one of its dependencies is not its own. \p Keep: the reference that
/// dlopen took is kept (for symbols used later), otherwise dropped.
void *ownSymbol(const LoadedObjectTy &Object, const char *Symbol, bool Keep);

/// The definition of \p Symbol that a reference of the program itself
/// resolves to (RTLD_DEFAULT: libomp's and libomptarget's entry points), or
/// null.
void *processSymbol(const char *Symbol);

/// The offload-io plugins loaded now: every loaded object that defines the
/// discovery entry point and answers it.
std::vector<PluginTy> findPlugins();

/// A loaded libomptarget plugin, offload-io's or another (stock).
struct OffloadPluginObjectTy {
  LoadedObjectTy Object;
  /// It defines the discovery entry point, as findPlugins asks.
  bool Ours = false;
};

/// The loaded objects named as libomptarget names its plugins
/// (libomptarget.rtl.*), in load order: the plugins libomptarget loaded.
std::vector<OffloadPluginObjectTy> loadedOffloadPlugins();

/// What \p Object's own __tgt_rtl_number_of_devices answers; nullopt when
/// it defines none.
std::optional<int32_t> numberOfDevices(const LoadedObjectTy &Object);

/// A device: its plugin and local number.
struct DeviceRefTy {
  const PluginTy *Plugin = nullptr;
  int32_t Local = -1;
};

/// The plugins found once, at the first look-up (libomptarget loads them
/// before the program can name a device), and the devices resolved so far.
class PluginDirectoryTy {
public:
  /// The plugin that serves OpenMP device \p Device and its local number;
  /// false when none does.
  bool resolve(int Device, DeviceRefTy &Ref);

  /// The first offload-io plugin found, or null: for the calls that concern
  /// the process rather than a device.
  const PluginTy *anyPlugin();

  /// Order every look-up made so far before this object is destroyed (see
  /// the library state's destructor).
  void fence() { std::lock_guard<std::mutex> Guard(Lock); }

private:
  void loadPlugins();

  std::mutex Lock;
  bool Loaded = false;
  /// Stable addresses: devices and requests point to their plugin.
  std::vector<std::unique_ptr<PluginTy>> Plugins;
  std::unordered_map<int, DeviceRefTy> Devices;
};

} // namespace ompxio

#endif // OMPX_IO_PLUGINDIRECTORY_H

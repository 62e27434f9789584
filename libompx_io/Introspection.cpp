// SPDX-License-Identifier: Apache-2.0
//
// The calls that describe rather than transfer: the counters and paths of a
// device, the settings, budgets and lock map of the process, the names of
// paths, the last error and the library's version.
#include "CallFailure.h"
#include "Diagnostics.h"
#include "Library.h"
#include "offloadio/io/IOPathNames.h"
#include "ompx_io.h"
#include "ompx_version.h"
#include "offloadio/ExtensionABI.h"

#include <cstdio>
#include <optional>


using namespace ompxio;
using offloadio::ExtensionNames;

OMPX_API const char *ompx_io_path_name(int Path) {
  return offloadio::ioPathNameOf(Path);
}

OMPX_API int ompx_io_get_stats(int Device, ompx_io_stats_t *Stats) {
  const char *Call = "ompx_io_get_stats";
  DeviceRefTy Ref;
  if (!Stats)
    return invalidArgument(Call, "stats is NULL");
  if (Device == initialDeviceNumber()) {
    initialDeviceStats(*Stats);
    return 0;
  }
  if (!resolveDevice(Device, Ref))
    return notServed(Call, Device);
  const PluginTy &Plugin = *Ref.Plugin;
  if (!Plugin.Fns.IOStats)
    return lackingExtension(Plugin, ExtensionNames::IOStats, Call, Device);
  if (int32_t Err = Plugin.Fns.IOStats(Ref.Local, Stats))
    return pluginFailure(Plugin, Err, Call, Device);
  return 0;
}

OMPX_API int ompx_io_paths(int Device, unsigned *Mask, char *Why,
                           size_t WhyLen) {
  const char *Call = "ompx_io_paths";
  DeviceRefTy Ref;
  if (!Mask)
    return invalidArgument(Call, "mask is NULL");
  if (Device == initialDeviceNumber()) {
    *Mask = 1u << OMPX_IO_PATH_HOST;
    if (Why && WhyLen)
      std::snprintf(Why, WhyLen, "initial device: plain pread/pwrite\n");
    return 0;
  }
  if (!resolveDevice(Device, Ref))
    return notServed(Call, Device);
  uint32_t M = 0;
  const PluginTy &Plugin = *Ref.Plugin;
  if (!Plugin.Fns.IOPaths)
    return lackingExtension(Plugin, ExtensionNames::IOPaths, Call, Device);
  if (int32_t Err = Plugin.Fns.IOPaths(Ref.Local, &M, Why, WhyLen))
    return pluginFailure(Plugin, Err, Call, Device);
  *Mask = M;
  return 0;
}

OMPX_API int ompx_io_device_ref(int Device, ompx_io_device_ref_t *Out) {
  const char *Call = "ompx_io_device_ref";
  if (!Out)
    return invalidArgument(Call, "ref is NULL");
  ompx_io_device_ref_t Ref{};
  if (Device == initialDeviceNumber()) {
    std::snprintf(Ref.target, sizeof(Ref.target), "host");
    Ref.local = -1;
  } else {
    DeviceRefTy Found;
    if (!resolveDevice(Device, Found))
      return notServed(Call, Device);
    std::snprintf(Ref.target, sizeof(Ref.target), "%s",
                  pluginTarget(Found.Plugin->Path).c_str());
    Ref.local = Found.Local;
  }
  *Out = Ref;
  return 0;
}

/// Call \p Fn, which returns 0 or an errno value, on any loaded plugin of
/// ours (for what is the same in all of them) for \p Call; 0, or -1 with
/// errno (ENODEV without such a plugin, ENOSYS when its table lacks
/// \p Entry, named \p Name).
template <typename EntryTy, typename FnTy>
static int onAnyPlugin(const char *Call,
                       EntryTy offloadio_extension_table::*Entry,
                       const char *Name, FnTy Fn) {
  const PluginTy *Plugin = anyPlugin();
  if (!Plugin)
    return notServed(Call, std::nullopt);
  if (!(Plugin->Fns.*Entry))
    return lackingExtension(*Plugin, Name, Call, std::nullopt);
  if (int32_t Err = Fn(Plugin->Fns.*Entry))
    return pluginFailure(*Plugin, Err, Call, std::nullopt);
  return 0;
}

OMPX_API int ompx_io_get_settings(ompx_io_setting_t *Settings,
                                  size_t Capacity, size_t *Count) {
  const char *Call = "ompx_io_get_settings";
  if (!Count)
    return invalidArgument(Call, "count is NULL");
  if (!Settings && Capacity)
    return invalidArgument(Call, "settings is NULL and capacity is not 0");
  uint64_t Total = 0;
  if (onAnyPlugin(Call, &offloadio::ExtensionTableTy::IOSettings,
                  ExtensionNames::IOSettings, [&](auto IOSettings) {
                    return IOSettings(Settings, Capacity, &Total);
                  }))
    return -1;
  *Count = size_t(Total);
  return 0;
}

OMPX_API int ompx_io_get_all_settings(int Device,
                                      ompx_io_setting_info_t *Settings,
                                      size_t Capacity, size_t *Count) {
  const char *Call = "ompx_io_get_all_settings";
  if (!Count)
    return invalidArgument(Call, "count is NULL");
  if (!Settings && Capacity)
    return invalidArgument(Call, "settings is NULL and capacity is not 0");
  // The stride of the caller's array: its own version of the struct.
  uint64_t EntrySize = Capacity ? Settings[0].size : 0;
  if (Capacity && EntrySize < offloadio::SettingInfoFirstSize)
    return invalidArgument(Call, "settings[0].size is less than the first "
                                 "version of ompx_io_setting_info_t (set it "
                                 "to sizeof(ompx_io_setting_info_t))");
  // The settings are the process's: the initial device asks any plugin,
  // another device the plugin that serves it (its build's Settings.def).
  DeviceRefTy Ref;
  std::optional<int> Named = Device;
  if (Device == initialDeviceNumber()) {
    Ref.Plugin = anyPlugin();
    Named = std::nullopt;
  } else if (!resolveDevice(Device, Ref)) {
    Ref.Plugin = nullptr;
  }
  if (!Ref.Plugin)
    return notServed(Call, Named);
  const PluginTy &Plugin = *Ref.Plugin;
  if (!Plugin.Fns.SettingsInfo)
    return lackingExtension(Plugin, ExtensionNames::SettingsInfo, Call, Named);
  uint64_t Total = 0;
  if (int32_t Err =
          Plugin.Fns.SettingsInfo(Settings, EntrySize, Capacity, &Total))
    return pluginFailure(Plugin, Err, Call, Named);
  *Count = size_t(Total);
  return 0;
}

OMPX_API int ompx_io_get_pinned_budget(ompx_pinned_budget_t *Budget) {
  const char *Call = "ompx_io_get_pinned_budget";
  if (!Budget)
    return invalidArgument(Call, "budget is NULL");
  return onAnyPlugin(Call, &offloadio::ExtensionTableTy::PinnedBudget,
                     ExtensionNames::PinnedBudget,
                     [&](auto PinnedBudget) { return PinnedBudget(Budget); });
}

OMPX_API int ompx_io_get_process_budget(ompx_io_process_budget_t *Budget) {
  const char *Call = "ompx_io_get_process_budget";
  if (!Budget)
    return invalidArgument(Call, "budget is NULL");
  return onAnyPlugin(Call, &offloadio::ExtensionTableTy::ProcessBudget,
                     ExtensionNames::ProcessBudget,
                     [&](auto ProcessBudget) { return ProcessBudget(Budget); });
}

OMPX_API int ompx_target_lock_info(const void *Ptr, int Device,
                                   ompx_lock_region_t *Region) {
  const char *Call = "ompx_target_lock_info";
  DeviceRefTy Ref;
  if (!Region || !Ptr)
    return invalidArgument(Call, Ptr ? "region is NULL" : "ptr is NULL");
  if (!resolveDevice(Device, Ref))
    return notServed(Call, Device);
  if (!Ref.Plugin->Fns.LockInfo)
    return lackingExtension(*Ref.Plugin, ExtensionNames::LockInfo, Call,
                            Device);
  return Ref.Plugin->Fns.LockInfo(Ptr, Region);
}

OMPX_API int ompx_target_copy_counters(int Device,
                                       uint64_t Bytes[OMPX_COPY_NUM_PATHS],
                                       uint64_t Copies[OMPX_COPY_NUM_PATHS]) {
  const char *Call = "ompx_target_copy_counters";
  DeviceRefTy Ref;
  if (!Bytes || !Copies)
    return invalidArgument(Call, Bytes ? "copies is NULL" : "bytes is NULL");
  if (!resolveDevice(Device, Ref))
    return notServed(Call, Device);
  const PluginTy &Plugin = *Ref.Plugin;
  if (!Plugin.Fns.CopyCounters)
    return lackingExtension(Plugin, ExtensionNames::CopyCounters, Call, Device);
  if (int32_t Err = Plugin.Fns.CopyCounters(Ref.Local, Bytes, Copies))
    return pluginFailure(Plugin, Err, Call, Device);
  return 0;
}

OMPX_API const char *ompx_copy_path_name(int Path) {
  static const char *const Names[] = {
      "pinned-to-device", "pinned-from-device", "staged-to-device",
      "staged-from-device", "locked-to-device", "locked-from-device",
      "device-to-device"};
  return Path >= 0 && Path < OMPX_COPY_NUM_PATHS ? Names[Path] : "unknown";
}

OMPX_API const char *ompx_io_last_error(void) {
  return LibraryErrorsTy::text().c_str();
}

OMPX_API const char *ompx_io_version(int *Major, int *Minor, int *Patch) {
  if (Major)
    *Major = OFFLOADIO_VERSION_MAJOR;
  if (Minor)
    *Minor = OFFLOADIO_VERSION_MINOR;
  if (Patch)
    *Patch = OFFLOADIO_VERSION_PATCH;
  return OFFLOADIO_VERSION_STRING;
}

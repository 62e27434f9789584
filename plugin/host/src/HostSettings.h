// SPDX-License-Identifier: Apache-2.0
//
// Every environment variable of the host plugin, read once when the plugin
// initialises; each is declared, with its default and valid values, in
// offloadio/Settings.def.
#ifndef OFFLOADIO_HOST_HOSTSETTINGS_H
#define OFFLOADIO_HOST_HOSTSETTINGS_H

#include "offloadio/SettingTable.h"

#include <cstdint>

namespace offloadio {
namespace host {

/// The settings of the host plugin.
struct HostSettingsTy {
  /// OFFLOADIO_HOST_NUM_DEVICES: devices of the plugin; four like the stock
  /// plugin, more or fewer for tests. An integer from 1 to 64; default 4.
  int64_t NumDevices = settingDecl(SettingId::HostNumDevices).Default;

  /// Read every variable above once; invalid values are reported on stderr
  /// and give the default.
  static HostSettingsTy fromEnv();
};

} // namespace host
} // namespace offloadio

#endif // OFFLOADIO_HOST_HOSTSETTINGS_H

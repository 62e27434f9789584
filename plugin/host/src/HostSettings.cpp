// SPDX-License-Identifier: Apache-2.0
#include "HostSettings.h"

#include "offloadio/Envar.h"

using namespace offloadio;
using namespace offloadio::host;

HostSettingsTy HostSettingsTy::fromEnv() {
  HostSettingsTy Settings;
  Settings.NumDevices = readIntSetting<SettingId::HostNumDevices>();
  return Settings;
}

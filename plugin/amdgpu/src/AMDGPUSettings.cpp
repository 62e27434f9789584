// SPDX-License-Identifier: Apache-2.0
#include "AMDGPUSettings.h"

#include "offloadio/Envar.h"

using namespace offloadio;
using namespace offloadio::amdgpu;

AMDGPUSettingsTy AMDGPUSettingsTy::fromEnv(uint32_t AgentQueueMax) {
  AMDGPUSettingsTy Settings;
  Settings.DynamicStackSize = readSizeSetting<SettingId::AMDGPUStackSize>();
  Settings.HeapSize = readSizeSetting<SettingId::AMDGPUHeapSize>();
  Settings.NumQueues = readIntSetting<SettingId::AMDGPUNumQueues>();
  Settings.QueueSize = readIntSetting<SettingId::AMDGPUQueueSize>(
      {std::nullopt, std::nullopt, uint64_t(queueSizeMax(AgentQueueMax))});
  return Settings;
}

AMDGPUFastpathSettingsTy AMDGPUFastpathSettingsTy::fromEnv() {
  AMDGPUFastpathSettingsTy Settings;
  Settings.AnyFilesystem = readBoolSetting<SettingId::AMDGPUAnyFilesystem>();
  return Settings;
}

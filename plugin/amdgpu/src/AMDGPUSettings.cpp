// SPDX-License-Identifier: Apache-2.0
#include "AMDGPUSettings.h"

#include "offloadio/Envar.h"

using namespace offloadio;
using namespace offloadio::amdgpu;

AMDGPUSettingsTy AMDGPUSettingsTy::fromEnv(uint32_t AgentQueueMax) {
  AMDGPUSettingsTy Settings;
  Settings.DynamicStackSize =
      readSizeEnv(DynamicStackSizeVar, DynamicStackSizeDefault,
                  DynamicStackSizeMin, DynamicStackSizeMax);
  Settings.NumQueues =
      readIntEnv(NumQueuesVar, NumQueuesDefault, NumQueuesMin, NumQueuesMax);
  Settings.QueueSize = readIntEnv(QueueSizeVar, QueueSizeDefault, QueueSizeMin,
                                  queueSizeMax(AgentQueueMax));
  return Settings;
}

AMDGPUFastpathSettingsTy AMDGPUFastpathSettingsTy::fromEnv() {
  AMDGPUFastpathSettingsTy Settings;
  Settings.AnyFilesystem = readBoolEnv(AnyFilesystemVar, AnyFilesystemDefault);
  return Settings;
}

// SPDX-License-Identifier: Apache-2.0
#include "CUDASettings.h"

#include "offloadio/Envar.h"

using namespace offloadio;
using namespace offloadio::cuda;

CUDASettingsTy CUDASettingsTy::fromEnv() {
  CUDASettingsTy Settings;
  Settings.Graphs = readBoolSetting<SettingId::CUDAGraphs>();
  Settings.CompletionFlag = readBoolSetting<SettingId::CUDACompletionFlag>();
  Settings.StackSize = readSizeSetting<SettingId::CUDAStackSize>();
  Settings.HeapSize = readSizeSetting<SettingId::CUDAHeapSize>();
  return Settings;
}

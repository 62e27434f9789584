// SPDX-License-Identifier: Apache-2.0
#include "CUDASettings.h"

#include "offloadio/Envar.h"

using namespace offloadio;
using namespace offloadio::cuda;

CUDASettingsTy CUDASettingsTy::fromEnv() {
  CUDASettingsTy Settings;
  Settings.Graphs = readBoolEnv(GraphsVar, GraphsDefault);
  Settings.CompletionFlag =
      readBoolEnv(CompletionFlagVar, CompletionFlagDefault);
  Settings.StackSize =
      readSizeEnv(StackSizeVar, StackSizeDefault, StackSizeMin, StackSizeMax);
  Settings.HeapSize =
      readSizeEnv(HeapSizeVar, HeapSizeDefault, HeapSizeMin, HeapSizeMax);
  return Settings;
}

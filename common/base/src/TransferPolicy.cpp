// SPDX-License-Identifier: Apache-2.0
#include "offloadio/TransferPolicy.h"
#include "offloadio/Envar.h"

#include <cstdint>

using namespace offloadio;

const char *offloadio::copyRouteName(CopyRouteTy Route) {
  switch (Route) {
  case CopyRouteTy::PinnedDMA:
    return "pinned-dma";
  case CopyRouteTy::LockForCopy:
    return "lock-for-copy";
  case CopyRouteTy::BackendCaptures:
    return "backend-captures";
  case CopyRouteTy::Staged:
    return "staged";
  case CopyRouteTy::StagedParallel:
    return "staged-parallel";
  }
  return "unknown";
}

TransferSettingsTy TransferSettingsTy::fromEnv() {
  TransferSettingsTy Settings;
  Settings.Pageable =
      PageablePolicyTy(readChoiceSetting<SettingId::PageablePath>());
  // The old name said "lock", but in auto mode nothing is locked: the
  // threshold only brings in the copy threads. It is still honoured when
  // the new name is unset.
  const SettingDeclTy &New = settingDecl(SettingId::ParallelStagingThreshold);
  const SettingDeclTy &Old = settingDecl(SettingId::LockThreshold);
  bool UseOld = false;
  if (getEnv(Old.Name)) {
    reportDeprecatedEnv(Old.Name, New.Name);
    UseOld = !getEnv(New.Name);
  }
  Settings.ParallelStagingThreshold =
      UseOld ? readSizeSetting<SettingId::LockThreshold>()
             : readSizeSetting<SettingId::ParallelStagingThreshold>();
  return Settings;
}

CopyRouteTy TransferPolicyTy::route(bool Locked, size_t Size) const {
  if (Locked)
    return CopyRouteTy::PinnedDMA;
  switch (Settings.Pageable) {
  case PageablePolicyTy::Lock:
    return CopyRouteTy::LockForCopy;
  case PageablePolicyTy::Staged:
    return CopyRouteTy::Staged;
  case PageablePolicyTy::Auto:
    break;
  }
  if (Size <= CaptureLimit)
    return CopyRouteTy::BackendCaptures;
  return Size >= Settings.ParallelStagingThreshold
             ? CopyRouteTy::StagedParallel
             : CopyRouteTy::Staged;
}

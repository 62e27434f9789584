// SPDX-License-Identifier: Apache-2.0
#include "offloadio/SettingReport.h"

using namespace offloadio;

std::vector<SettingReportTy>
offloadio::reportEverySetting(const std::vector<EnvReadTy> &RunTimeReads) {
  std::vector<SettingReportTy> Report;
  Report.reserve(NumSettings);
  for (const SettingDeclTy &D : SettingDecls) {
    SettingReportTy R;
    R.Decl = &D;
    const EnvReadTy *Known = nullptr;
    for (const EnvReadTy &Read : RunTimeReads)
      if (Read.Name == D.Name) {
        Known = &Read;
        break;
      }
    if (Known) {
      R.Read = *Known;
    } else {
      // The kind's reader, observed: the texts of the value in force, the
      // default and the valid values are the readers' own.
      EnvReadLogTy Log;
      (void)readSettingText(D);
      if (!Log.reads().empty())
        R.Read = Log.reads().front();
      else
        R.Read.Name = D.Name;
    }
    Report.push_back(std::move(R));
  }
  return Report;
}

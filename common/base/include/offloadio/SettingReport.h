// SPDX-License-Identifier: Apache-2.0
//
// Every setting of Settings.def as it reads now: the run-time introspection
// behind ompx_io_get_all_settings. Free of LLVM, beside the readers.
#ifndef OFFLOADIO_SETTINGREPORT_H
#define OFFLOADIO_SETTINGREPORT_H

#include "offloadio/Envar.h"
#include "offloadio/SettingTable.h"

#include <vector>

namespace offloadio {

/// One setting and what reading it found.
struct SettingReportTy {
  const SettingDeclTy *Decl = nullptr; ///< Its line of Settings.def.
  EnvReadTy Read; ///< Its value in force, default, valid values, origin.
};

/// Every setting of Settings.def, in its order, read now by the reader of
/// its kind with the table's defaults and bounds; except that where
/// \p RunTimeReads (what the readers that know a run-time default or bound
/// read, observed through EnvReadLogTy) read the same variable, the first
/// such read stands instead. An invalid value is reported as the readers
/// report it (once per process).
std::vector<SettingReportTy>
reportEverySetting(const std::vector<EnvReadTy> &RunTimeReads = {});

} // namespace offloadio

#endif // OFFLOADIO_SETTINGREPORT_H

// SPDX-License-Identifier: Apache-2.0
//
// Every variable of Settings.def unset for a test's duration, so that what
// a reader returns is the table's default, whatever the environment that
// ran the test set.
#ifndef OFFLOADIO_TEST_SUPPORT_ALLSETTINGSUNSET_H
#define OFFLOADIO_TEST_SUPPORT_ALLSETTINGSUNSET_H

#include "ScopedEnv.h"
#include "offloadio/SettingTable.h"

#include <initializer_list>
#include <memory>
#include <vector>

namespace offloadio::test {

/// Every variable of the table, unset (with its report marker) while alive.
struct AllSettingsUnsetTy {
  std::vector<std::unique_ptr<ScopedEnvTy>> Scopes;
  AllSettingsUnsetTy() {
    for (const SettingDeclTy &D : SettingDecls)
      Scopes.push_back(std::make_unique<ScopedEnvTy>(
          std::initializer_list<const char *>{D.Name}));
  }
};

} // namespace offloadio::test

#endif // OFFLOADIO_TEST_SUPPORT_ALLSETTINGSUNSET_H

// SPDX-License-Identifier: Apache-2.0
//
// What Settings.def declares for a layer, and what a reader read, for the
// tests that check a layer's reader reads every setting of the table.
#ifndef OFFLOADIO_TEST_SUPPORT_DECLAREDSETTINGS_H
#define OFFLOADIO_TEST_SUPPORT_DECLAREDSETTINGS_H

#include "offloadio/Envar.h"
#include "offloadio/SettingTable.h"

#include <string>
#include <vector>

namespace offloadio::test {

/// The names Settings.def declares for layer \p Layer, in its order.
inline std::vector<std::string> declaredNames(SettingLayerTy Layer) {
  std::vector<std::string> Names;
  for (const SettingDeclTy &D : SettingDecls)
    if (D.Layer == Layer)
      Names.push_back(D.Name);
  return Names;
}

/// The names of the variables \p Log saw read, in order.
inline std::vector<std::string> namesRead(const EnvReadLogTy &Log) {
  std::vector<std::string> Names;
  for (const EnvReadTy &Read : Log.reads())
    Names.push_back(Read.Name);
  return Names;
}

} // namespace offloadio::test

#endif // OFFLOADIO_TEST_SUPPORT_DECLAREDSETTINGS_H

// SPDX-License-Identifier: Apache-2.0
//
// HostSettingsTy::fromEnv with real setenv/unsetenv: the default when
// nothing is set, valid values at the ends of the range, out-of-range and
// unparsable values falling back to the default with a report, and the
// variable read exactly once.
#include "HostSettings.h"

#include "DeclaredSettings.h"
#include "ScopedEnv.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace offloadio;
using namespace offloadio::test;
using namespace offloadio::host;
using offloadio::test::contains;
using offloadio::test::ScopedEnvTy;

namespace {
constexpr const char *NumDevicesVar =
    settingDecl(SettingId::HostNumDevices).Name;

class HostSettingsTest : public ::testing::Test {
protected:
  ScopedEnvTy Env{NumDevicesVar};
  std::string Stderr;

  HostSettingsTy read() {
    return ScopedEnvTy::captured([] { return HostSettingsTy::fromEnv(); },
                                 Stderr);
  }
};

TEST_F(HostSettingsTest, DefaultWhenUnset) {
  EXPECT_EQ(read().NumDevices, 4);
  EXPECT_EQ(Stderr, "");
  EXPECT_EQ(HostSettingsTy().NumDevices, 4);
}

TEST_F(HostSettingsTest, ValidValues) {
  for (auto [Text, Value] : {std::pair<const char *, int64_t>{"1", 1},
                             {"2", 2},
                             {"0x10", 16},
                             {"64", 64}}) {
    ScopedEnvTy::set(NumDevicesVar, Text);
    EXPECT_EQ(read().NumDevices, Value) << Text;
    EXPECT_EQ(Stderr, "") << Text;
  }
}

TEST_F(HostSettingsTest, InvalidValuesGiveTheDefaultAndAreReported) {
  for (const char *Text : {"0", "65", "-3", "four", ""}) {
    ScopedEnvTy::set(NumDevicesVar, Text);
    EXPECT_EQ(read().NumDevices, 4) << Text;
    EXPECT_TRUE(contains(Stderr, std::string("OFFLOADIO_HOST_NUM_DEVICES='") +
                                     Text + "'"));
  }
}

TEST_F(HostSettingsTest, ReadsTheVariableOnce) {
  EnvReadLogTy Log;
  HostSettingsTy::fromEnv();
  ASSERT_EQ(Log.reads().size(), 1u);
  EXPECT_EQ(Log.reads()[0].Name, "OFFLOADIO_HOST_NUM_DEVICES");
}


TEST_F(HostSettingsTest, ReadsEverySettingTheTableDeclaresForTheHostPlugin) {
  EnvReadLogTy Log;
  HostSettingsTy::fromEnv();
  EXPECT_EQ(namesRead(Log), declaredNames(SettingLayerTy::Host));
}

} // namespace

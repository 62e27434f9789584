// SPDX-License-Identifier: Apache-2.0
//
// The table of every setting (Settings.def) and its readers: the table is
// sound, the framework's readers read every setting of its layers through
// it, the LLVM-free parseInt agrees with llvm::StringRef::getAsInteger, and
// libompx_io's reader of OMPX_IO_INFO and OFFLOADIO_INFO agrees with the
// plugins' on every value, bad ones included.
#include "offloadio/SettingTable.h"
#include "Diagnostics.h"
#include "AllSettingsUnset.h"
#include "DeclaredSettings.h"
#include "ScopedEnv.h"
#include "offloadio/Envar.h"
#include "offloadio/ProcessShare.h"
#include "offloadio/Settings.h"
#include "offloadio/io/IOConfig.h"

#include "llvm/ADT/StringRef.h"

#include "gtest/gtest.h"

#include <set>
#include <string>
#include <vector>

using namespace offloadio;
using namespace offloadio::test;

namespace {

TEST(SettingTableTest, EveryDeclarationIsSound) {
  std::set<std::pair<std::string, SettingLayerTy>> Seen;
  // Each id names its own line, whichever line is last.
  size_t Lines = 0;
#define OFFLOADIO_SETTING(Id, Var, Kind, Layer, Default, Min, Max, Choices,    \
                          Doc)                                                 \
  EXPECT_STREQ(settingDecl(SettingId::Id).Name, Var);                          \
  EXPECT_EQ(size_t(SettingId::Id), Lines++);
#include "offloadio/Settings.def"
  EXPECT_EQ(NumSettings, Lines);
  for (const SettingDeclTy &D : SettingDecls) {
    std::string Name = D.Name;
    EXPECT_FALSE(Name.empty());
    EXPECT_GT(std::string(D.Doc).size(), 10u) << Name;
    EXPECT_TRUE(Seen.insert({Name, D.Layer}).second) << "duplicate " << Name;
    switch (D.Kind) {
    case SettingKindTy::Bool:
      EXPECT_LE(D.Default, 1u) << Name;
      break;
    case SettingKindTy::Int:
    case SettingKindTy::Size:
      EXPECT_LE(D.Min, D.Default) << Name;
      EXPECT_LE(D.Default, D.Max) << Name;
      if (D.Kind == SettingKindTy::Int)
        EXPECT_LE(D.Max, uint64_t(INT64_MAX)) << Name;
      break;
    case SettingKindTy::Choice:
      EXPECT_LT(D.Default, settingChoices(D).size()) << Name;
      break;
    case SettingKindTy::InfoMask:
      break;
    case SettingKindTy::Path:
      EXPECT_EQ(D.Default, 0u) << Name;
      break;
    }
    EXPECT_EQ(D.Kind == SettingKindTy::Choice, *D.Choices != '\0') << Name;
    EXPECT_STRNE(settingLayerName(D.Layer), "unknown") << Name;
  }
}

TEST(SettingTableTest, ChoicesSplitAtCommas) {
  EXPECT_EQ(settingChoices(settingDecl(SettingId::PageablePath)),
            (std::vector<std::string>{"auto", "staged", "lock"}));
  EXPECT_EQ(settingChoices(settingDecl(SettingId::IOInfo)),
            std::vector<std::string>{});
}

/// The names the framework's readers read, in order.
std::vector<std::string> frameworkReads() {
  EnvReadLogTy Log;
  ProcessShareTy Share = ProcessShareTy::detect();
  (void)PluginSettingsTy::fromEnv(Share);
  (void)DeviceSettingsTy::fromEnv(48 * 1024);
  (void)IOConfigTy::fromEnv(Share);
  return namesRead(Log);
}

TEST(SettingTableTest,
     TheFrameworkReadsEverySettingOfItsLayersThroughTheTable) {
  AllSettingsUnsetTy Unset;
  std::vector<std::string> Read = frameworkReads();
  // The deprecated name is read in place of the new one when only it is
  // set.
  ScopedEnvTy::set(settingDecl(SettingId::LockThreshold).Name, "2M");
  std::string Stderr;
  std::vector<std::string> ReadOld =
      ScopedEnvTy::captured([] { return frameworkReads(); }, Stderr);
  EXPECT_TRUE(contains(Stderr, "OFFLOADIO_LOCK_THRESHOLD is deprecated"));
  std::multiset<std::string> Got(Read.begin(), Read.end());
  Got.insert(settingDecl(SettingId::LockThreshold).Name);
  std::multiset<std::string> Want;
  for (const SettingDeclTy &D : SettingDecls)
    if (D.Layer == SettingLayerTy::Plugin ||
        D.Layer == SettingLayerTy::Device ||
        D.Layer == SettingLayerTy::IOEngine)
      Want.insert(D.Name);
  EXPECT_EQ(Got, Want);
  EXPECT_EQ(std::count(ReadOld.begin(), ReadOld.end(),
                       "OFFLOADIO_PARALLEL_STAGING_THRESHOLD"),
            0);
}

TEST(SettingTableTest, TheEngineReadsItsSettingsInTableOrder) {
  // ompx_io_get_settings reports them in the order the engine reads them.
  AllSettingsUnsetTy Unset;
  EnvReadLogTy Log;
  (void)IOConfigTy::fromEnv();
  std::vector<std::string> Names, Want;
  for (const EnvReadTy &R : Log.reads())
    Names.push_back(R.Name);
  for (const SettingDeclTy &D : SettingDecls)
    if (D.Layer == SettingLayerTy::IOEngine)
      Want.push_back(D.Name);
  EXPECT_EQ(Names, Want);
}

TEST(SettingTableTest, EveryReaderKindReadsItsDefaultWhenUnset) {
  AllSettingsUnsetTy Unset;
  for (const SettingDeclTy &D : SettingDecls) {
    std::string Text = readSettingText(D);
    switch (D.Kind) {
    case SettingKindTy::Bool:
      EXPECT_EQ(Text, D.Default ? "on" : "off") << D.Name;
      break;
    case SettingKindTy::Int:
    case SettingKindTy::InfoMask:
      EXPECT_EQ(Text, std::to_string(D.Default)) << D.Name;
      break;
    case SettingKindTy::Size:
      EXPECT_EQ(Text, formatSizeSetting(D.Default)) << D.Name;
      break;
    case SettingKindTy::Choice:
      EXPECT_EQ(Text, settingChoices(D)[D.Default]) << D.Name;
      break;
    case SettingKindTy::Path:
      EXPECT_EQ(Text, "") << D.Name;
      break;
    }
  }
}

TEST(SettingTableTest, ParseIntAgreesWithGetAsInteger) {
  std::vector<std::string> Texts = {"0",
                                    "-0",
                                    "7",
                                    "-7",
                                    "010",
                                    "08",
                                    "0o17",
                                    "0O17",
                                    "0x1f",
                                    "0X1F",
                                    "0xg",
                                    "0b101",
                                    "0B101",
                                    "0b2",
                                    "0x",
                                    "0b",
                                    "0o",
                                    "-",
                                    "--1",
                                    "+1",
                                    " 12 ",
                                    "\t-0x10\n",
                                    "1 2",
                                    "12a",
                                    "a12",
                                    "9223372036854775807",
                                    "9223372036854775808",
                                    "-9223372036854775808",
                                    "-9223372036854775809",
                                    "0x7fffffffffffffff",
                                    "0x8000000000000000",
                                    "-0x8000000000000000",
                                    "0xffffffffffffffff",
                                    "0x10000000000000000",
                                    "18446744073709551615",
                                    "99999999999999999999",
                                    "0777",
                                    "0789",
                                    "00",
                                    "000x1",
                                    "1e3",
                                    "",
                                    "   ",
                                    "0z",
                                    "ZZ",
                                    "0xZZ",
                                    "-0b",
                                    "0b11111111111111111111111111111111111"
                                    "11111111111111111111111111111"};
  for (const std::string &T : Texts) {
    int64_t Want;
    bool Bad = llvm::StringRef(T).trim().getAsInteger(0, Want);
    std::optional<int64_t> Got = parseInt(T);
    EXPECT_EQ(Got.has_value(), !Bad) << "'" << T << "'";
    if (Got && !Bad)
      EXPECT_EQ(*Got, Want) << "'" << T << "'";
  }
}

/// What the plugins make of OMPX_IO_INFO and OFFLOADIO_INFO: whether
/// either asks for their own info lines.
bool pluginsInfo() {
  return IOConfigTy::fromEnv().Info ||
         PluginSettingsTy::fromEnv().OwnInfoFlags;
}

TEST(SettingTableTest, LibraryInfoReaderAgreesWithThePlugins) {
  const char *IOInfo = settingDecl(SettingId::IOInfo).Name;
  const char *Info = settingDecl(SettingId::OwnInfo).Name;
  const char *IOValues[] = {nullptr, "1",  "on", "YES",     " true ", "0",
                            "off",   "no", "2",  "verbose", "",       "x"};
  const char *InfoValues[] = {nullptr, "0",     "1", "0x10", "-1",
                              "abc",   "10abc", "",  " 16 ", "0x"};
  for (const char *IO : IOValues) {
    for (const char *Lib : InfoValues) {
      AllSettingsUnsetTy Unset;
      if (IO)
        ScopedEnvTy::set(IOInfo, IO);
      if (Lib)
        ScopedEnvTy::set(Info, Lib);
      std::string Stderr;
      bool Plugins =
          ScopedEnvTy::captured([] { return pluginsInfo(); }, Stderr);
      bool Library =
          ScopedEnvTy::captured([] { return ompxio::infoEnabled(); }, Stderr);
      EXPECT_EQ(Library, Plugins)
          << "OMPX_IO_INFO=" << (IO ? IO : "(unset)")
          << " OFFLOADIO_INFO=" << (Lib ? Lib : "(unset)");
    }
  }
  // The values the library's own parser took as on before.
  AllSettingsUnsetTy Unset;
  ScopedEnvTy::set(IOInfo, "verbose");
  std::string Stderr;
  EXPECT_FALSE(
      ScopedEnvTy::captured([] { return ompxio::infoEnabled(); }, Stderr));
  EXPECT_TRUE(contains(Stderr, "ignoring OMPX_IO_INFO='verbose'"));
  ScopedEnvTy::set(IOInfo, "0");
  ScopedEnvTy::set(Info, "10abc");
  EXPECT_FALSE(
      ScopedEnvTy::captured([] { return ompxio::infoEnabled(); }, Stderr));
  EXPECT_TRUE(contains(Stderr, "ignoring OFFLOADIO_INFO='10abc'"));
  // LIBOMPTARGET_INFO is the stock lines' alone: it turns on none of ours.
  AllSettingsUnsetTy None;
  ScopedEnvTy::set(settingDecl(SettingId::Info).Name, "-1");
  EXPECT_FALSE(
      ScopedEnvTy::captured([] { return ompxio::infoEnabled(); }, Stderr));
  EXPECT_FALSE(ScopedEnvTy::captured([] { return pluginsInfo(); }, Stderr));
}

} // namespace

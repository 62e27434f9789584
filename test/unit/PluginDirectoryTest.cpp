// SPDX-License-Identifier: Apache-2.0
//
// The versioned extension table (offloadio/ExtensionABI.h) from both sides,
// and how libompx_io finds the plugins (libompx_io/PluginDirectory.cpp):
//  - a reader newer than the plugin (an older, shorter table) gets the
//    entries the plugin has; the others are null and named when needed;
//  - a reader older than the plugin (a newer, longer table) gets the entries
//    it knows, and nothing is written past its table;
//  - the plugin's discovery entry point honours the caller's size;
//  - a plugin is found by its discovery symbol, under any file name, and
//    LLVM's stock plugin (no such symbol) is not.
#include "PluginDirectory.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace ompxio;
using offloadio::ExtensionNames;
using offloadio::ExtensionTableTy;

namespace {

int32_t fakeResolve(int32_t GlobalId) { return GlobalId == 7 ? 0 : -1; }
uint64_t fakeTakeLastError(char *, uint64_t) { return 0; }

/// A complete table of this header's version, its entries fakes or null.
ExtensionTableTy fakeTable() {
  ExtensionTableTy T;
  T.ResolveDevice = fakeResolve;
  T.TakeLastError = fakeTakeLastError;
  return T;
}

/// A plugin of table version 1 that had only the entries up to IOTest:
/// copies min(caller's size, its own) bytes, as the rules say.
int32_t olderPluginDiscovery(offloadio_extension_table *Table) {
  constexpr uint32_t OwnSize =
      offsetof(ExtensionTableTy, IOTest) + sizeof(ExtensionTableTy::IOTest);
  ExtensionTableTy Own = fakeTable();
  Own.Version = 1;
  uint32_t Filled = std::min(Table->Size, OwnSize);
  std::memcpy(static_cast<void *>(Table), &Own, Filled);
  Table->Size = Filled;
  return 0;
}

/// A table two calls newer than this header's.
struct NewerTableTy {
  ExtensionTableTy Known;
  void (*Later1)() = nullptr;
  void (*Later2)() = nullptr;
};

void laterCall() {}

/// The plugin of NewerTableTy, at the next two versions.
int32_t newerPluginDiscovery(offloadio_extension_table *Table) {
  NewerTableTy Own;
  Own.Known = fakeTable();
  Own.Known.Size = sizeof(NewerTableTy);
  Own.Known.Version = OFFLOADIO_EXTENSION_TABLE_VERSION + 2;
  Own.Later1 = laterCall;
  Own.Later2 = laterCall;
  uint32_t Filled = std::min<uint32_t>(Table->Size, sizeof(NewerTableTy));
  std::memcpy(static_cast<void *>(Table), &Own, Filled);
  Table->Size = Filled;
  return 0;
}

/// A plugin that ignores the caller's size in its answer.
int32_t oversizedAnswerDiscovery(offloadio_extension_table *Table) {
  *Table = fakeTable();
  Table->Size = 1u << 20;
  return 0;
}

int32_t refusingDiscovery(offloadio_extension_table *) { return EINVAL; }

} // namespace

TEST(PluginDirectoryTest, NewerReaderUsesWhatAnOlderTableHas) {
  std::string Why;
  auto P = askPlugin("/lib/old-plugin.so", olderPluginDiscovery, Why);
  ASSERT_TRUE(P) << Why;
  EXPECT_EQ(P->Fns.Version, 1u);
  EXPECT_EQ(P->Fns.ResolveDevice(7), 0);
  EXPECT_EQ(P->Fns.ResolveDevice(3), -1);
  // Past the plugin's size: null, whatever the reader's table held.
  EXPECT_EQ(P->Fns.IOWait, nullptr);
  EXPECT_EQ(P->Fns.IOBatchCreate, nullptr);
  EXPECT_EQ(P->Fns.TakeLastError, nullptr);
  char Buf[8] = "x";
  EXPECT_EQ(P->takeLastError(Buf, sizeof(Buf)), 0u);
  EXPECT_EQ(P->lacking(ExtensionNames::IOBatchCreate),
            "plugin /lib/old-plugin.so answers extension table version 1, "
            "which lacks __tgt_rtl_ompx_io_batch_create: update the plugin");
}

TEST(PluginDirectoryTest, OlderReaderIgnoresTheEntriesOfANewerTable) {
  // The reader's table, then what a newer plugin would write past it.
  struct {
    ExtensionTableTy Table;
    char Canary[16];
  } Reader;
  std::memset(Reader.Canary, 0x5a, sizeof(Reader.Canary));
  ASSERT_EQ(newerPluginDiscovery(&Reader.Table), 0);
  EXPECT_EQ(Reader.Table.Size, sizeof(ExtensionTableTy));
  for (char C : Reader.Canary)
    ASSERT_EQ(C, 0x5a) << "the plugin wrote past the caller's table";

  std::string Why;
  auto P = askPlugin("/lib/new-plugin.so", newerPluginDiscovery, Why);
  ASSERT_TRUE(P) << Why;
  EXPECT_EQ(P->Fns.Version, OFFLOADIO_EXTENSION_TABLE_VERSION + 2);
  EXPECT_EQ(P->Fns.Size, sizeof(ExtensionTableTy));
  EXPECT_EQ(P->Fns.ResolveDevice(7), 0);
  EXPECT_NE(P->Fns.TakeLastError, nullptr);
}

TEST(PluginDirectoryTest, AnAnswerPastTheCallersSizeIsCut) {
  std::string Why;
  auto P = askPlugin("/lib/odd.so", oversizedAnswerDiscovery, Why);
  ASSERT_TRUE(P) << Why;
  EXPECT_EQ(P->Fns.Size, sizeof(ExtensionTableTy));
}

TEST(PluginDirectoryTest, ARefusedDiscoveryIsNoPlugin) {
  std::string Why;
  EXPECT_FALSE(askPlugin("/lib/odd.so", refusingDiscovery, Why));
  EXPECT_EQ(Why, "/lib/odd.so: __tgt_rtl_ompx_extensions failed: " +
                     std::string(std::strerror(EINVAL)));
}

namespace {

/// The x86_64 plugin of this build, copied under a name no list knows, and
/// loaded as libomptarget loads a plugin.
class BuiltPluginTest : public ::testing::Test {
protected:
  void SetUp() override {
    char Dir[] = "/tmp/offloadio-plugin-XXXXXX";
    ASSERT_NE(::mkdtemp(Dir), nullptr);
    Copy = std::string(Dir) + "/" + fileName();
    {
      std::ifstream In(OFFLOADIO_TEST_PLUGIN, std::ios::binary);
      ASSERT_TRUE(In) << OFFLOADIO_TEST_PLUGIN;
      std::ofstream Out(Copy, std::ios::binary);
      Out << In.rdbuf();
    }
    Handle = ::dlopen(Copy.c_str(), RTLD_LAZY | RTLD_LOCAL);
    ASSERT_NE(Handle, nullptr) << ::dlerror();
    Discover =
        reinterpret_cast<DiscoveryFnTy>(::dlsym(Handle, DiscoverySymbol));
    ASSERT_NE(Discover, nullptr);
  }
  void TearDown() override {
    // The plugin is linked -z nodelete: it stays, its file may go.
    if (Handle)
      ::dlclose(Handle);
    ::unlink(Copy.c_str());
    ::rmdir(Copy.substr(0, Copy.rfind('/')).c_str());
  }

  /// The name the copy is loaded under.
  virtual const char *fileName() const { return "libsome-renamed-plugin.so"; }

  std::string Copy;
  void *Handle = nullptr;
  DiscoveryFnTy Discover = nullptr;
};

} // namespace

TEST_F(BuiltPluginTest, IsFoundUnderAnyName) {
  bool Found = false;
  for (const PluginTy &P : findPlugins())
    if (P.Path == Copy) {
      Found = true;
      EXPECT_EQ(P.Fns.Version, OFFLOADIO_EXTENSION_TABLE_VERSION);
      EXPECT_EQ(P.Fns.Size, sizeof(ExtensionTableTy));
#define OFFLOADIO_EXPECT_ENTRY(Field, Symbol)                                  \
  EXPECT_NE(P.Fns.Field, nullptr) << #Symbol;
      OFFLOADIO_EXTENSIONS(OFFLOADIO_EXPECT_ENTRY)
#undef OFFLOADIO_EXPECT_ENTRY
    }
  EXPECT_TRUE(Found) << Copy << " was not found";
}

namespace {
/// The built plugin under a name of libomptarget's plugins.
class PluginNamedAsLibomptargetsTest : public BuiltPluginTest {
protected:
  const char *fileName() const override {
    return "libomptarget.rtl.offloadio-renamed.so";
  }
};
} // namespace

TEST_F(PluginNamedAsLibomptargetsTest, IsListedAsOursWithItsDevices) {
  bool Listed = false;
  for (const OffloadPluginObjectTy &P : loadedOffloadPlugins())
    if (P.Object.Path == Copy) {
      Listed = true;
      EXPECT_TRUE(P.Ours);
      std::optional<int32_t> NumDevices = numberOfDevices(P.Object);
      ASSERT_TRUE(NumDevices.has_value());
      EXPECT_GE(*NumDevices, 0);
    }
  EXPECT_TRUE(Listed) << Copy << " is loaded but not listed";
}

TEST_F(BuiltPluginTest, IsNoOffloadPluginUnderAnotherName) {
  for (const OffloadPluginObjectTy &P : loadedOffloadPlugins())
    EXPECT_NE(P.Object.Path, Copy) << "not named libomptarget.rtl.*";
}

TEST(PluginDirectoryTest, ProcessSymbolsAreTheProgramsView) {
  EXPECT_EQ(processSymbol("dlopen"), reinterpret_cast<void *>(&::dlopen));
  EXPECT_EQ(processSymbol("offloadio_no_such_symbol"), nullptr);
}

TEST_F(BuiltPluginTest, FillsOnlyTheCallersSize) {
  // An older reader, of a table with two entries, and what follows it.
  struct {
    uint32_t Size, Version;
    void *Entries[2];
    char Canary[32];
  } Old;
  Old.Size = offsetof(decltype(Old), Canary);
  Old.Version = 1;
  std::memset(Old.Entries, 0, sizeof(Old.Entries));
  std::memset(Old.Canary, 0x5a, sizeof(Old.Canary));
  ASSERT_EQ(Discover(reinterpret_cast<ExtensionTableTy *>(&Old)), 0);
  EXPECT_EQ(Old.Size, offsetof(decltype(Old), Canary));
  EXPECT_EQ(Old.Version, OFFLOADIO_EXTENSION_TABLE_VERSION);
  EXPECT_NE(Old.Entries[0], nullptr);
  EXPECT_NE(Old.Entries[1], nullptr);
  for (char C : Old.Canary)
    ASSERT_EQ(C, 0x5a) << "the plugin wrote past the caller's table";

  // A newer reader: the plugin says where its table ends.
  NewerTableTy New;
  New.Known.Size = sizeof(NewerTableTy);
  ASSERT_EQ(Discover(&New.Known), 0);
  EXPECT_EQ(New.Known.Size, sizeof(ExtensionTableTy));
  EXPECT_EQ(New.Later1, nullptr);
  EXPECT_EQ(New.Later2, nullptr);
}

TEST_F(BuiltPluginTest, RefusesATableWithoutItsHeader) {
  ExtensionTableTy T;
  T.Size = offloadio::ExtensionTableHeaderSize - 1;
  EXPECT_EQ(Discover(&T), EINVAL);
  EXPECT_EQ(Discover(nullptr), EINVAL);
}

TEST(PluginDirectoryTest, TheStockPluginIsNotFound) {
  const char *Stock = OFFLOADIO_TEST_STOCK_PLUGIN;
  if (::access(Stock, R_OK))
    GTEST_SKIP() << "no stock plugin at " << Stock;
  void *H = ::dlopen(Stock, RTLD_LAZY | RTLD_LOCAL);
  if (!H)
    GTEST_SKIP() << "the stock plugin does not load here: " << ::dlerror();
  bool Listed = false;
  for (const LoadedObjectTy &O : loadedObjects())
    Listed |= O.Path == Stock;
  EXPECT_TRUE(Listed) << Stock << " is loaded but not listed";
  for (const PluginTy &P : findPlugins())
    EXPECT_NE(P.Path, Stock) << "a plugin without the discovery symbol";
  EXPECT_EQ(ownSymbol({Stock}, DiscoverySymbol, /*Keep=*/false), nullptr);
  bool Foreign = false;
  for (const OffloadPluginObjectTy &P : loadedOffloadPlugins())
    if (P.Object.Path == Stock)
      Foreign = !P.Ours;
  EXPECT_TRUE(Foreign) << Stock << " is not listed as another plugin";
}

namespace {
/// A plugin of table version 1, complete: the 20 calls up to TakeLastError,
/// without SettingsInfo, which version 2 appended.
int32_t version1PluginDiscovery(offloadio_extension_table *Table) {
  constexpr uint32_t OwnSize = offsetof(ExtensionTableTy, SettingsInfo);
  ExtensionTableTy Own = fakeTable();
  Own.Version = 1;
  uint32_t Filled = std::min(Table->Size, OwnSize);
  std::memcpy(static_cast<void *>(Table), &Own, Filled);
  Table->Size = Filled;
  return 0;
}
} // namespace

TEST(PluginDirectoryTest, AVersion1PluginLacksTheSettingsInfo) {
  std::string Why;
  auto P = askPlugin("/lib/v1-plugin.so", version1PluginDiscovery, Why);
  ASSERT_TRUE(P) << Why;
  EXPECT_EQ(P->Fns.Version, 1u);
  EXPECT_NE(P->Fns.TakeLastError, nullptr);
  EXPECT_EQ(P->Fns.SettingsInfo, nullptr);
  EXPECT_EQ(P->lacking(ExtensionNames::SettingsInfo),
            "plugin /lib/v1-plugin.so answers extension table version 1, "
            "which lacks __tgt_rtl_ompx_settings_info: update the plugin");
}

TEST_F(BuiltPluginTest, AnswersAVersion1ReaderWithoutTheSettingsInfo) {
  // A libompx_io of version 1: its table ends before SettingsInfo.
  ExtensionTableTy Reader;
  Reader.Size = offsetof(ExtensionTableTy, SettingsInfo);
  Reader.Version = 1;
  ASSERT_EQ(Discover(&Reader), 0);
  EXPECT_EQ(Reader.Size, offsetof(ExtensionTableTy, SettingsInfo));
  EXPECT_NE(Reader.TakeLastError, nullptr);
  EXPECT_EQ(Reader.SettingsInfo, nullptr) << "written past its size";
}

TEST_F(BuiltPluginTest, SettingsInfoReportsEverySettingAtTheCallersStride) {
  std::string Why;
  auto P = askPlugin(Copy, Discover, Why);
  ASSERT_TRUE(P) << Why;
  ASSERT_NE(P->Fns.SettingsInfo, nullptr);
  uint64_t Count = 0;
  ASSERT_EQ(P->Fns.SettingsInfo(nullptr, 0, 0, &Count), 0);
  EXPECT_GT(Count, 30u);
  // Entries of a newer caller, 24 bytes longer.
  constexpr size_t Stride = sizeof(ompx_io_setting_info_t) + 24;
  std::vector<char> Buf(Stride * Count, 0x5a);
  auto *Out = reinterpret_cast<ompx_io_setting_info_t *>(Buf.data());
  uint64_t Again = 0;
  ASSERT_EQ(P->Fns.SettingsInfo(Out, Stride, Count, &Again), 0);
  EXPECT_EQ(Again, Count);
  for (uint64_t I = 0; I < Count; ++I) {
    ompx_io_setting_info_t S;
    std::memcpy(&S, Buf.data() + I * Stride, sizeof(S));
    EXPECT_EQ(S.size, sizeof(S));
    EXPECT_NE(S.name[0], 0) << I;
    EXPECT_EQ(Buf[I * Stride + sizeof(S)], 0x5a) << "tail of entry " << I;
  }
  // Smaller than the first version: refused.
  EXPECT_EQ(P->Fns.SettingsInfo(Out, 8, 1, &Again), EINVAL);
  EXPECT_EQ(P->Fns.SettingsInfo(Out, Stride, 1, nullptr), EINVAL);
  EXPECT_EQ(P->Fns.SettingsInfo(nullptr, Stride, 1, &Again), EINVAL);
}

TEST(PluginDirectoryTest, TheTargetComesFromThePluginsFileName) {
  EXPECT_EQ(ompxio::pluginTarget("/usr/lib/libomptarget.rtl.cuda.nextgen.so"),
            "cuda");
  EXPECT_EQ(ompxio::pluginTarget("libomptarget.rtl.amdgpu.so.18.1"), "amdgpu");
  EXPECT_EQ(ompxio::pluginTarget("/p/lib/libomptarget.rtl.x86_64.so"),
            "x86_64");
  EXPECT_EQ(ompxio::pluginTarget("/p/libomptarget.rtl.x86_64"), "x86_64");
  EXPECT_EQ(ompxio::pluginTarget("/p/libfoo.so"), "");
  EXPECT_EQ(ompxio::pluginTarget("/libomptarget.rtl/libfoo.so"), "");
  EXPECT_EQ(ompxio::pluginTarget(""), "");
}

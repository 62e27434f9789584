// SPDX-License-Identifier: Apache-2.0
//
// Plugin conformance: dlopen each built libomptarget.rtl.<name>.nextgen.so
// and drive its exported __tgt_rtl_* entry points directly, the way
// libomptarget 16 does, so that what is checked is the C ABI a program meets
// and not the C++ framework behind it. Every case runs once per plugin.
//
// Which plugins: OFFLOADIO_CONFORMANCE_PLUGINS (a comma list of names such as
// "x86_64,cuda") if set, else every plugin found in the plugin folder
// (OFFLOADIO_CONFORMANCE_PLUGIN_DIR, defaulting to the build's library
// folder). A plugin that reports no devices has its device cases skipped.
//
// Expected failures: <name>.xfail beside this file (or in
// OFFLOADIO_CONFORMANCE_XFAIL_DIR) lists, one a line, cases
// ("DeviceConformance.RoundTripSync") that are known to fail for that
// plugin, each followed by a '#' comment giving the reason. Such a case that
// fails is reported as passing with an "expected failure" note; one that
// passes fails, so that a fixed bug gets its line removed.
//
// Not loaded by libomptarget, the plugins take the global device ids of
// data_lock/data_unlock as local ones, so device 0 is used throughout.
#include "offloadio/ABI.h"
#include "ompx_io.h"

#include "gtest/gtest-spi.h"
#include "gtest/gtest.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef OFFLOADIO_CONFORMANCE_PLUGIN_DIR
#error "OFFLOADIO_CONFORMANCE_PLUGIN_DIR must name the plugin folder"
#endif
#ifndef OFFLOADIO_CONFORMANCE_XFAIL_DIR
#error "OFFLOADIO_CONFORMANCE_XFAIL_DIR must name the folder of *.xfail"
#endif

using offloadio::OFFLOAD_SUCCESS;

namespace {

constexpr int32_t KindDevice = 0;
constexpr int32_t KindHost = 1;
constexpr int32_t KindShared = 2;
constexpr int32_t KindDefault = 3;

constexpr size_t KiB = 1024;
constexpr size_t MiB = 1024 * KiB;

//===----------------------------------------------------------------------===//
// The entry points
//===----------------------------------------------------------------------===//

// Every entry point LLVM 16's libomptarget looks up, with the signature it
// calls it with (include/rtl.h and the NextGen PluginInterface.cpp).
#define OFFLOADIO_ENTRY_POINTS(X)                                              \
  X(int32_t, init_plugin, void)                                                \
  X(int32_t, deinit_plugin, void)                                              \
  X(int32_t, is_valid_binary, __tgt_device_image *)                            \
  X(int32_t, is_valid_binary_info, __tgt_device_image *, __tgt_image_info *)   \
  X(int32_t, supports_empty_images, void)                                      \
  X(int32_t, number_of_devices, void)                                          \
  X(int64_t, init_requires, int64_t)                                           \
  X(int32_t, init_device, int32_t)                                             \
  X(int32_t, deinit_device, int32_t)                                           \
  X(__tgt_target_table *, load_binary, int32_t, __tgt_device_image *)          \
  X(void *, data_alloc, int32_t, int64_t, void *, int32_t)                     \
  X(int32_t, data_delete, int32_t, void *, int32_t)                            \
  X(int32_t, data_submit, int32_t, void *, void *, int64_t)                    \
  X(int32_t, data_submit_async, int32_t, void *, void *, int64_t,              \
    __tgt_async_info *)                                                        \
  X(int32_t, data_retrieve, int32_t, void *, void *, int64_t)                  \
  X(int32_t, data_retrieve_async, int32_t, void *, void *, int64_t,            \
    __tgt_async_info *)                                                        \
  X(int32_t, is_data_exchangable, int32_t, int32_t)                            \
  X(int32_t, data_exchange, int32_t, void *, int32_t, void *, int64_t)         \
  X(int32_t, data_exchange_async, int32_t, void *, int32_t, void *, int64_t,   \
    __tgt_async_info *)                                                        \
  X(int32_t, launch_kernel, int32_t, void *, void **, ptrdiff_t *,             \
    KernelArgsTy *, __tgt_async_info *)                                        \
  X(int32_t, synchronize, int32_t, __tgt_async_info *)                         \
  X(int32_t, query_async, int32_t, __tgt_async_info *)                         \
  X(int32_t, create_event, int32_t, void **)                                   \
  X(int32_t, record_event, int32_t, void *, __tgt_async_info *)                \
  X(int32_t, wait_event, int32_t, void *, __tgt_async_info *)                  \
  X(int32_t, sync_event, int32_t, void *)                                      \
  X(int32_t, destroy_event, int32_t, void *)                                   \
  X(void, set_info_flag, uint32_t)                                             \
  X(void, print_device_info, int32_t)                                          \
  X(int32_t, init_async_info, int32_t, __tgt_async_info **)                    \
  X(int32_t, init_device_info, int32_t, __tgt_device_info *, const char **)    \
  X(int32_t, data_lock, int32_t, void *, int64_t, void **)                     \
  X(int32_t, data_unlock, int32_t, void *)

/// The names libomptarget 16 looks up; the stock nextgen plugins export
/// exactly these (the ABI fact sheet, section 2).
const std::set<std::string> &expectedExports() {
  static const std::set<std::string> Names = [] {
    std::set<std::string> S;
#define OFFLOADIO_NAME(Ret, Name, ...) S.insert("__tgt_rtl_" #Name);
    OFFLOADIO_ENTRY_POINTS(OFFLOADIO_NAME)
#undef OFFLOADIO_NAME
    return S;
  }();
  return Names;
}

/// One dlopened plugin. Loaded once per process and never closed, as
/// libomptarget never closes a plugin either.
struct PluginTy {
  std::string Name;
  std::string Path;
  void *Handle = nullptr;
  /// Why loading failed, if it did.
  std::string LoadError;
  /// Entry points that could not be resolved.
  std::vector<std::string> Missing;

#define OFFLOADIO_MEMBER(Ret, Name, ...) Ret (*Name)(__VA_ARGS__) = nullptr;
  OFFLOADIO_ENTRY_POINTS(OFFLOADIO_MEMBER)
#undef OFFLOADIO_MEMBER
};

std::string pluginDir() {
  if (const char *Env = std::getenv("OFFLOADIO_CONFORMANCE_PLUGIN_DIR"))
    if (*Env)
      return Env;
  return OFFLOADIO_CONFORMANCE_PLUGIN_DIR;
}

std::string pluginPath(const std::string &Name) {
  return pluginDir() + "/libomptarget.rtl." + Name + ".nextgen.so";
}

bool fileExists(const std::string &Path) {
  struct stat St;
  return ::stat(Path.c_str(), &St) == 0 && S_ISREG(St.st_mode);
}

PluginTy &getPlugin(const std::string &Name) {
  static std::mutex Lock;
  static std::map<std::string, std::unique_ptr<PluginTy>> Plugins;
  std::lock_guard<std::mutex> Guard(Lock);
  auto &Slot = Plugins[Name];
  if (Slot)
    return *Slot;
  Slot = std::make_unique<PluginTy>();
  PluginTy &P = *Slot;
  P.Name = Name;
  P.Path = pluginPath(Name);
  if (!fileExists(P.Path)) {
    P.LoadError = "plugin '" + Name + "' is not built: no " + P.Path;
    return P;
  }
  // libomptarget uses RTLD_LAZY|RTLD_GLOBAL; RTLD_NOW catches unresolved
  // symbols at once and RTLD_LOCAL keeps the plugins of one process apart.
  P.Handle = ::dlopen(P.Path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!P.Handle) {
    const char *Err = ::dlerror();
    P.LoadError = "dlopen(" + P.Path + ") failed: " + (Err ? Err : "?");
    return P;
  }
#define OFFLOADIO_RESOLVE(Ret, Name, ...)                                      \
  P.Name = reinterpret_cast<decltype(P.Name)>(                                 \
      ::dlsym(P.Handle, "__tgt_rtl_" #Name));                                  \
  if (!P.Name)                                                                 \
    P.Missing.push_back("__tgt_rtl_" #Name);
  OFFLOADIO_ENTRY_POINTS(OFFLOADIO_RESOLVE)
#undef OFFLOADIO_RESOLVE
  return P;
}

/// The plugins to test, decided once before the tests are registered.
std::vector<std::string> selectedPlugins() {
  std::vector<std::string> Names;
  const char *Env = std::getenv("OFFLOADIO_CONFORMANCE_PLUGINS");
  if (Env && *Env) {
    // Named explicitly: a plugin that is not there fails its cases rather
    // than vanishing from the run.
    std::stringstream SS(Env);
    std::string Item;
    while (std::getline(SS, Item, ',')) {
      Item.erase(0, Item.find_first_not_of(" \t"));
      Item.erase(Item.find_last_not_of(" \t") + 1);
      if (!Item.empty() &&
          std::find(Names.begin(), Names.end(), Item) == Names.end())
        Names.push_back(Item);
    }
    return Names;
  }
  for (const char *Name : {"x86_64", "cuda", "amdgpu"})
    if (fileExists(pluginPath(Name)))
      Names.push_back(Name);
  return Names;
}

//===----------------------------------------------------------------------===//
// The exported dynamic symbols, read from the ELF file
//===----------------------------------------------------------------------===//

/// Names of the defined global/weak symbols of \p Path's .dynsym, without
/// the version-definition symbols (nm -D --defined-only, less "A VERS1.0").
::testing::AssertionResult readDynamicExports(const std::string &Path,
                                              std::set<std::string> &Names) {
  std::ifstream In(Path, std::ios::binary);
  std::vector<char> Bytes((std::istreambuf_iterator<char>(In)),
                          std::istreambuf_iterator<char>());
  if (Bytes.size() < sizeof(Elf64_Ehdr))
    return ::testing::AssertionFailure() << "cannot read " << Path;
  const char *Base = Bytes.data();
  auto *Eh = reinterpret_cast<const Elf64_Ehdr *>(Base);
  if (std::memcmp(Eh->e_ident, ELFMAG, SELFMAG) != 0 ||
      Eh->e_ident[EI_CLASS] != ELFCLASS64)
    return ::testing::AssertionFailure() << Path << " is not a 64-bit ELF";
  if (Eh->e_shoff + size_t(Eh->e_shnum) * sizeof(Elf64_Shdr) > Bytes.size())
    return ::testing::AssertionFailure() << Path << ": bad section table";
  auto *Sh = reinterpret_cast<const Elf64_Shdr *>(Base + Eh->e_shoff);
  auto InFile = [&](const Elf64_Shdr &S) {
    return S.sh_offset + S.sh_size <= Bytes.size();
  };

  // Version definition names ("VERS1.0") appear in .dynsym as absolute
  // symbols; they are not exported functions.
  std::set<std::string> VersionNames;
  for (unsigned I = 0; I < Eh->e_shnum; ++I) {
    if (Sh[I].sh_type != SHT_GNU_verdef || !InFile(Sh[I]) ||
        Sh[I].sh_link >= Eh->e_shnum)
      continue;
    const Elf64_Shdr &Str = Sh[Sh[I].sh_link];
    const char *Def = Base + Sh[I].sh_offset;
    for (unsigned N = 0; N < Sh[I].sh_info; ++N) {
      auto *VD = reinterpret_cast<const Elf64_Verdef *>(Def);
      if (VD->vd_cnt) {
        auto *Aux = reinterpret_cast<const Elf64_Verdaux *>(Def + VD->vd_aux);
        VersionNames.insert(Base + Str.sh_offset + Aux->vda_name);
      }
      if (!VD->vd_next)
        break;
      Def += VD->vd_next;
    }
  }

  bool Found = false;
  for (unsigned I = 0; I < Eh->e_shnum; ++I) {
    if (Sh[I].sh_type != SHT_DYNSYM)
      continue;
    Found = true;
    if (!InFile(Sh[I]) || Sh[I].sh_link >= Eh->e_shnum ||
        !InFile(Sh[Sh[I].sh_link]))
      return ::testing::AssertionFailure() << Path << ": bad .dynsym";
    const Elf64_Shdr &Str = Sh[Sh[I].sh_link];
    auto *Sym = reinterpret_cast<const Elf64_Sym *>(Base + Sh[I].sh_offset);
    size_t Count = Sh[I].sh_size / sizeof(Elf64_Sym);
    for (size_t S = 1; S < Count; ++S) {
      if (Sym[S].st_shndx == SHN_UNDEF)
        continue;
      unsigned Bind = ELF64_ST_BIND(Sym[S].st_info);
      if (Bind != STB_GLOBAL && Bind != STB_WEAK && Bind != STB_GNU_UNIQUE)
        continue;
      if (Sym[S].st_name >= Str.sh_size)
        return ::testing::AssertionFailure() << Path << ": bad symbol name";
      std::string Name = Base + Str.sh_offset + Sym[S].st_name;
      if (Sym[S].st_shndx == SHN_ABS && VersionNames.count(Name))
        continue;
      Names.insert(Name);
    }
  }
  if (!Found)
    return ::testing::AssertionFailure() << Path << " has no .dynsym";
  return ::testing::AssertionSuccess();
}

//===----------------------------------------------------------------------===//
// Expected failures
//===----------------------------------------------------------------------===//

/// "Suite.Case" -> reason, from <plugin>.xfail.
std::map<std::string, std::string> readXfail(const std::string &Plugin) {
  std::map<std::string, std::string> Result;
  std::string Dir = OFFLOADIO_CONFORMANCE_XFAIL_DIR;
  if (const char *Env = std::getenv("OFFLOADIO_CONFORMANCE_XFAIL_DIR"))
    if (*Env)
      Dir = Env;
  std::ifstream In(Dir + "/" + Plugin + ".xfail");
  std::string Line, Pending;
  while (std::getline(In, Line)) {
    size_t Hash = Line.find('#');
    std::string Comment =
        Hash == std::string::npos ? "" : Line.substr(Hash + 1);
    std::string Name = Line.substr(0, Hash);
    Name.erase(0, Name.find_first_not_of(" \t"));
    Name.erase(Name.find_last_not_of(" \t\r") + 1);
    Comment.erase(0, Comment.find_first_not_of(" \t"));
    if (Name.empty()) {
      // A comment line before an entry explains it.
      if (!Comment.empty())
        Pending += (Pending.empty() ? "" : " ") + Comment;
      continue;
    }
    std::string Reason = Comment.empty() ? Pending : Comment;
    Result[Name] = Reason.empty() ? "(no reason given)" : Reason;
    Pending.clear();
  }
  return Result;
}

/// While a case listed in the plugin's .xfail runs, its failures go here
/// instead of to the test result (see PluginConformance::installXfail).
std::atomic<const ::testing::TestPartResultArray *> XfailResults{nullptr};

/// Whether the current case has failed, counting failures an expected-
/// failure case collected.
bool caseHasFailed() {
  if (::testing::Test::HasFailure())
    return true;
  const ::testing::TestPartResultArray *R = XfailResults.load();
  if (!R)
    return false;
  for (int I = 0; I < R->size(); ++I)
    if (R->GetTestPartResult(I).failed())
      return true;
  return false;
}

//===----------------------------------------------------------------------===//
// Data helpers
//===----------------------------------------------------------------------===//

/// Deterministic bytes that differ for every (seed, offset).
void fillPattern(void *Ptr, size_t Size, uint64_t Seed) {
  auto *P = static_cast<unsigned char *>(Ptr);
  uint64_t X = Seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  for (size_t I = 0; I < Size; ++I) {
    if ((I & 7) == 0) {
      X ^= X << 13;
      X ^= X >> 7;
      X ^= X << 17;
    }
    P[I] = static_cast<unsigned char>(X >> ((I & 7) * 8));
  }
}

::testing::AssertionResult hasPattern(const void *Ptr, size_t Size,
                                      uint64_t Seed) {
  std::vector<unsigned char> Want(Size);
  fillPattern(Want.data(), Size, Seed);
  auto *Got = static_cast<const unsigned char *>(Ptr);
  for (size_t I = 0; I < Size; ++I)
    if (Got[I] != Want[I]) {
      size_t Bad = 0;
      for (size_t J = I; J < Size; ++J)
        Bad += Got[J] != Want[J];
      return ::testing::AssertionFailure()
             << "byte " << I << " of " << Size << " is 0x" << std::hex
             << unsigned(Got[I]) << ", expected 0x" << unsigned(Want[I])
             << std::dec << " (" << Bad << " bytes differ)";
    }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult isFilled(const void *Ptr, size_t Size,
                                    unsigned char Byte) {
  auto *P = static_cast<const unsigned char *>(Ptr);
  for (size_t I = 0; I < Size; ++I)
    if (P[I] != Byte)
      return ::testing::AssertionFailure()
             << "byte " << I << " of " << Size << " is 0x" << std::hex
             << unsigned(P[I]) << ", expected 0x" << unsigned(Byte);
  return ::testing::AssertionSuccess();
}

char *at(void *Base, size_t Off) { return static_cast<char *>(Base) + Off; }

/// Page-aligned host memory owned by a test. A case that failed may have
/// left part of it locked in the plugin's map; that memory is leaked rather
/// than freed, so that a later allocation at the same address cannot run
/// into a stale region and fail some unrelated case.
class HostMemTy {
public:
  explicit HostMemTy(size_t Size, unsigned char Fill = 0) : Size(Size) {
    size_t Rounded = (std::max<size_t>(Size, 1) + 4095) & ~size_t(4095);
    Ptr = static_cast<char *>(std::aligned_alloc(4096, Rounded));
    if (Ptr)
      std::memset(Ptr, Fill, Rounded);
  }
  ~HostMemTy() {
    if (!caseHasFailed())
      std::free(Ptr);
  }
  HostMemTy(const HostMemTy &) = delete;
  HostMemTy &operator=(const HostMemTy &) = delete;
  char *get() const { return Ptr; }
  char *operator+(size_t Off) const { return Ptr + Off; }
  size_t size() const { return Size; }

private:
  char *Ptr = nullptr;
  size_t Size;
};

//===----------------------------------------------------------------------===//
// Fixtures
//===----------------------------------------------------------------------===//

/// Cases that need the plugin loaded but no device.
class PluginConformance : public ::testing::TestWithParam<std::string> {
protected:
  void SetUp() override {
    loadPlugin();
    if (!HasFatalFailure())
      installXfail();
  }

  void TearDown() override { finishXfail(); }

  /// Load the plugin and call init_plugin, as libomptarget does first.
  void loadPlugin() {
    P = &getPlugin(GetParam());
    ASSERT_TRUE(P->LoadError.empty()) << P->LoadError;
    ASSERT_NE(P->init_plugin, nullptr) << "no __tgt_rtl_init_plugin";
    ASSERT_NE(P->number_of_devices, nullptr)
        << "no __tgt_rtl_number_of_devices";
    // libomptarget drops a plugin whose init_plugin fails.
    ASSERT_EQ(P->init_plugin(), OFFLOAD_SUCCESS);
    NumDevices = P->number_of_devices();
    ASSERT_GE(NumDevices, 0);
  }

  /// If this case is listed in the plugin's .xfail, collect its failures
  /// from here on (from every thread) instead of reporting them.
  void installXfail() {
    const auto *Info = ::testing::UnitTest::GetInstance()->current_test_info();
    // "DeviceConformance.RoundTripSync" from the suite "Plugin/
    // DeviceConformance" and the case "RoundTripSync/x86_64".
    std::string Suite = Info->test_suite_name();
    std::string Case = Info->name();
    Suite = Suite.substr(Suite.find('/') + 1);
    Case = Case.substr(0, Case.find('/'));
    auto Xfail = readXfail(GetParam());
    auto It = Xfail.find(Suite + "." + Case);
    if (It == Xfail.end())
      return;
    XfailReason = It->second;
    Collected = std::make_unique<::testing::TestPartResultArray>();
    Interceptor = std::make_unique<::testing::ScopedFakeTestPartResultReporter>(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ALL_THREADS,
        Collected.get());
    XfailResults.store(Collected.get());
  }

  /// Report what an expected-failure case collected.
  void finishXfail() {
    if (!Interceptor)
      return;
    Interceptor.reset();
    XfailResults.store(nullptr);
    std::unique_ptr<::testing::TestPartResultArray> R = std::move(Collected);
    unsigned Failures = 0;
    bool Skipped = false;
    std::vector<std::string> Messages;
    for (int I = 0; I < R->size(); ++I) {
      const ::testing::TestPartResult &Part = R->GetTestPartResult(I);
      if (Part.failed()) {
        ++Failures;
        if (Messages.size() < 5)
          Messages.push_back(Part.summary());
      } else if (Part.skipped()) {
        Skipped = true;
      }
    }
    if (Skipped && !Failures)
      GTEST_SKIP() << "skipped (listed as an expected failure: "
                   << XfailReason << ")";
    if (!Failures) {
      ADD_FAILURE() << "unexpectedly passed: listed in " << GetParam()
                    << ".xfail (" << XfailReason
                    << "); remove the line if the bug is fixed";
      return;
    }
    std::string Note = "expected failure (" + XfailReason + "), " +
                       std::to_string(Failures) + " failure(s) collected";
    RecordProperty("xfail", Note);
    std::printf("[  XFAIL   ] %s\n", Note.c_str());
    for (const std::string &M : Messages)
      std::printf("             %s\n", M.c_str());
    std::fflush(stdout);
  }

  PluginTy *P = nullptr;
  int32_t NumDevices = 0;

private:
  std::unique_ptr<::testing::TestPartResultArray> Collected;
  std::unique_ptr<::testing::ScopedFakeTestPartResultReporter> Interceptor;
  std::string XfailReason;
};

/// Cases that need device 0. A plugin without devices skips them.
class DeviceConformance : public PluginConformance {
protected:
  void SetUp() override {
    loadPlugin();
    if (HasFatalFailure())
      return;
    if (NumDevices == 0)
      GTEST_SKIP() << "plugin '" << GetParam()
                   << "' reports 0 devices on this machine";
    ASSERT_TRUE(P->Missing.empty())
        << "missing entry points, first: " << P->Missing.front();
    ASSERT_EQ(P->init_device(Dev), OFFLOAD_SUCCESS);
    installXfail();
  }

  void TearDown() override {
    // Free what the case left behind. A failing case may leave locks inside
    // HOST memory, whose delete then fails: that is the case's failure, not
    // a second one.
    bool Failed = caseHasFailed();
    for (auto It = Allocs.rbegin(); It != Allocs.rend(); ++It) {
      int32_t Rc = P->data_delete(It->Dev, It->Ptr, It->Kind);
      if (!Failed)
        EXPECT_EQ(Rc, OFFLOAD_SUCCESS)
            << "data_delete of " << It->Ptr << " (kind " << It->Kind << ")";
    }
    Allocs.clear();
    PluginConformance::TearDown();
  }

  /// data_alloc that the fixture frees at the end of the case.
  void *alloc(int64_t Size, int32_t Kind = KindDefault, int32_t Device = 0) {
    void *Ptr = P->data_alloc(Device, Size, nullptr, Kind);
    if (Ptr)
      Allocs.push_back({Device, Ptr, Kind});
    return Ptr;
  }

  /// data_delete of an alloc() pointer, now, checking the result.
  ::testing::AssertionResult release(void *Ptr) {
    for (auto It = Allocs.begin(); It != Allocs.end(); ++It)
      if (It->Ptr == Ptr) {
        AllocTy A = *It;
        Allocs.erase(It);
        int32_t Rc = P->data_delete(A.Dev, A.Ptr, A.Kind);
        if (Rc == OFFLOAD_SUCCESS)
          return ::testing::AssertionSuccess();
        return ::testing::AssertionFailure()
               << "data_delete(" << A.Ptr << ", kind " << A.Kind
               << ") returned " << Rc;
      }
    return ::testing::AssertionFailure() << Ptr << " is not tracked";
  }

  /// data_lock on device 0 (the global id is the local one when no
  /// libomptarget is around). \p Out is poisoned first, so that a refusal
  /// that does not reset it is seen.
  int32_t lock(void *HstPtr, int64_t Size, void **Out) {
    *Out = reinterpret_cast<void *>(uintptr_t(0xdead));
    return P->data_lock(Dev, HstPtr, Size, Out);
  }
  int32_t unlock(void *HstPtr) { return P->data_unlock(Dev, HstPtr); }

  /// Round trip \p Size bytes from \p Src to \p Dst through a fresh DEFAULT
  /// allocation, with the sync or the async entry points.
  void roundTrip(void *Src, void *Dst, size_t Size, bool Async,
                 uint64_t Seed);

  /// An async info that is synchronised if a failing case leaves it pending.
  struct AsyncTy {
    AsyncTy(PluginTy *P, int32_t Dev) : P(P), Dev(Dev) {}
    ~AsyncTy() {
      if (AI.Queue)
        P->synchronize(Dev, &AI);
    }
    __tgt_async_info *operator&() { return &AI; }
    void *queue() const { return AI.Queue; }
    PluginTy *P;
    int32_t Dev;
    __tgt_async_info AI{nullptr};
  };

  const int32_t Dev = 0;

private:
  struct AllocTy {
    int32_t Dev;
    void *Ptr;
    int32_t Kind;
  };
  std::vector<AllocTy> Allocs;
};

void DeviceConformance::roundTrip(void *Src, void *Dst, size_t Size,
                                  bool Async, uint64_t Seed) {
  void *Tgt = alloc(Size);
  ASSERT_NE(Tgt, nullptr) << "data_alloc of " << Size << " bytes";
  fillPattern(Src, Size, Seed);
  std::memset(Dst, 0xA5, Size);
  if (!Async) {
    ASSERT_EQ(P->data_submit(Dev, Tgt, Src, Size), OFFLOAD_SUCCESS);
    ASSERT_EQ(P->data_retrieve(Dev, Dst, Tgt, Size), OFFLOAD_SUCCESS);
  } else {
    AsyncTy AI(P, Dev);
    ASSERT_EQ(P->data_submit_async(Dev, Tgt, Src, Size, &AI), OFFLOAD_SUCCESS);
    EXPECT_NE(AI.queue(), nullptr) << "submit left no work pending";
    ASSERT_EQ(P->synchronize(Dev, &AI), OFFLOAD_SUCCESS);
    EXPECT_EQ(AI.queue(), nullptr) << "synchronize did not reset Queue";
    ASSERT_EQ(P->data_retrieve_async(Dev, Dst, Tgt, Size, &AI),
              OFFLOAD_SUCCESS);
    EXPECT_NE(AI.queue(), nullptr) << "retrieve left no work pending";
    ASSERT_EQ(P->synchronize(Dev, &AI), OFFLOAD_SUCCESS);
    EXPECT_EQ(AI.queue(), nullptr) << "synchronize did not reset Queue";
  }
  EXPECT_TRUE(hasPattern(Dst, Size, Seed));
  EXPECT_TRUE(release(Tgt));
}

/// Sizes every transfer case uses: a byte, a page, and more than the 1 MiB
/// from which unlocked memory is locked for the copy instead of staged.
const size_t TransferSizes[] = {1, 4 * KiB, 3 * MiB};

//===----------------------------------------------------------------------===//
// Loading and initialisation
//===----------------------------------------------------------------------===//

TEST_P(PluginConformance, ExportsExactlyTheTgtRtlEntryPoints) {
  // Every dynamic export is a __tgt_rtl* name: the 33 entry points
  // libomptarget 16 looks up, all present, plus the project's extensions
  // for libompx_io, which live under __tgt_rtl_ompx_ (README) where no
  // libomptarget will ever look. Anything else exported could interpose on
  // (or be interposed by) symbols of the program, libLLVM or other plugins.
  std::set<std::string> Exports;
  ASSERT_TRUE(readDynamicExports(P->Path, Exports));
  std::vector<std::string> Foreign, Unknown, Missing, Extensions;
  for (const std::string &N : Exports) {
    if (N.rfind("__tgt_rtl", 0) != 0)
      Foreign.push_back(N);
    else if (expectedExports().count(N))
      continue;
    else if (N.rfind("__tgt_rtl_ompx_", 0) == 0)
      Extensions.push_back(N);
    else
      Unknown.push_back(N);
  }
  for (const std::string &N : expectedExports())
    if (!Exports.count(N))
      Missing.push_back(N);
  auto Join = [](const std::vector<std::string> &V) {
    std::string S;
    for (size_t I = 0; I < V.size() && I < 20; ++I)
      S += (I ? ", " : "") + V[I];
    if (V.size() > 20)
      S += ", ... (" + std::to_string(V.size()) + " in all)";
    return S;
  };
  EXPECT_TRUE(Foreign.empty()) << "exports beyond __tgt_rtl*: " << Join(Foreign);
  EXPECT_TRUE(Unknown.empty())
      << "__tgt_rtl_* names that are neither libomptarget 16 entry points "
         "nor __tgt_rtl_ompx_ extensions: "
      << Join(Unknown);
  EXPECT_TRUE(Missing.empty()) << "entry points not exported: "
                               << Join(Missing);
  if (!Extensions.empty())
    RecordProperty("extensions", Join(Extensions));
  // What the file says is exported must also be what the loader finds.
  EXPECT_TRUE(P->Missing.empty()) << "dlsym failed for " << Join(P->Missing);
}

TEST_P(PluginConformance, InitTwiceIsHarmless) {
  // SetUp called init_plugin once already.
  EXPECT_EQ(P->init_plugin(), OFFLOAD_SUCCESS);
  EXPECT_EQ(P->init_plugin(), OFFLOAD_SUCCESS);
  EXPECT_EQ(P->number_of_devices(), NumDevices);
  if (NumDevices == 0)
    return;
  ASSERT_NE(P->init_device, nullptr);
  EXPECT_EQ(P->init_device(0), OFFLOAD_SUCCESS);
  EXPECT_EQ(P->init_device(0), OFFLOAD_SUCCESS);
  // init_requires runs before every init_device; its result is ignored.
  ASSERT_NE(P->init_requires, nullptr);
  P->init_requires(offloadio::OMP_REQ_NONE);
  EXPECT_EQ(P->init_device(0), OFFLOAD_SUCCESS);
  // The device still works.
  ASSERT_NE(P->data_alloc, nullptr);
  void *Tgt = P->data_alloc(0, 64, nullptr, KindDefault);
  ASSERT_NE(Tgt, nullptr);
  EXPECT_EQ(P->data_delete(0, Tgt, KindDefault), OFFLOAD_SUCCESS);
}

TEST_P(PluginConformance, InitDeviceOutOfRangeFails) {
  ASSERT_NE(P->init_device, nullptr);
  for (int32_t Id : {NumDevices, NumDevices + 1, INT32_MAX, -1, INT32_MIN})
    EXPECT_NE(P->init_device(Id), OFFLOAD_SUCCESS) << "device " << Id;
  // Entry points on a device that does not exist fail too.
  ASSERT_NE(P->data_alloc, nullptr);
  EXPECT_EQ(P->data_alloc(NumDevices, 64, nullptr, KindDefault), nullptr);
  EXPECT_EQ(P->data_alloc(-1, 64, nullptr, KindDefault), nullptr);
  ASSERT_NE(P->data_lock, nullptr);
  char Buf[64];
  void *Out = Buf;
  EXPECT_NE(P->data_lock(NumDevices, Buf, sizeof(Buf), &Out), OFFLOAD_SUCCESS);
  EXPECT_EQ(Out, nullptr);
  EXPECT_NE(P->data_unlock(NumDevices, Buf), OFFLOAD_SUCCESS);
}

//===----------------------------------------------------------------------===//
// Allocation
//===----------------------------------------------------------------------===//

TEST_P(DeviceConformance, DataAllocEachKind) {
  for (int32_t Kind : {KindDevice, KindHost, KindShared, KindDefault}) {
    SCOPED_TRACE("kind " + std::to_string(Kind));
    std::vector<std::pair<char *, size_t>> Ptrs;
    for (size_t Size : {size_t(1), size_t(100), 4 * KiB, 64 * KiB, 3 * MiB}) {
      SCOPED_TRACE("size " + std::to_string(Size));
      void *Tgt = P->data_alloc(Dev, Size, nullptr, Kind);
      ASSERT_NE(Tgt, nullptr);
      Ptrs.push_back({static_cast<char *>(Tgt), Size});
      // The allocation holds data.
      HostMemTy Src(Size), Dst(Size);
      fillPattern(Src.get(), Size, Size + Kind);
      ASSERT_EQ(P->data_submit(Dev, Tgt, Src.get(), Size), OFFLOAD_SUCCESS);
      ASSERT_EQ(P->data_retrieve(Dev, Dst.get(), Tgt, Size), OFFLOAD_SUCCESS);
      EXPECT_TRUE(hasPattern(Dst.get(), Size, Size + Kind));
      // HOST and SHARED memory is accessible from the host, too.
      if (Kind == KindHost || Kind == KindShared)
        EXPECT_TRUE(hasPattern(Tgt, Size, Size + Kind));
    }
    // Live allocations are disjoint.
    std::sort(Ptrs.begin(), Ptrs.end());
    for (size_t I = 1; I < Ptrs.size(); ++I)
      EXPECT_LE(Ptrs[I - 1].first + Ptrs[I - 1].second, Ptrs[I].first);
    for (auto &[Ptr, Size] : Ptrs)
      EXPECT_EQ(P->data_delete(Dev, Ptr, Kind), OFFLOAD_SUCCESS);
  }
}

TEST_P(DeviceConformance, DataAllocInvalidFails) {
  EXPECT_EQ(P->data_alloc(Dev, -1, nullptr, KindDefault), nullptr);
  EXPECT_EQ(P->data_alloc(Dev, INT64_MIN, nullptr, KindDefault), nullptr);
  EXPECT_EQ(P->data_alloc(Dev, 64, nullptr, 4), nullptr) << "unknown kind";
  EXPECT_EQ(P->data_alloc(Dev, 64, nullptr, -1), nullptr) << "unknown kind";
}

TEST_P(DeviceConformance, DataDeleteForeignPointerFails) {
  int Stack = 0;
  HostMemTy Heap(4096);
  void *Real = alloc(4096);
  ASSERT_NE(Real, nullptr);
  for (int32_t Kind : {KindDevice, KindHost, KindShared, KindDefault}) {
    SCOPED_TRACE("kind " + std::to_string(Kind));
    EXPECT_NE(P->data_delete(Dev, &Stack, Kind), OFFLOAD_SUCCESS);
    EXPECT_NE(P->data_delete(Dev, Heap.get(), Kind), OFFLOAD_SUCCESS);
    EXPECT_NE(P->data_delete(Dev, nullptr, Kind), OFFLOAD_SUCCESS);
    EXPECT_NE(P->data_delete(Dev, reinterpret_cast<void *>(uintptr_t(8)), Kind),
              OFFLOAD_SUCCESS);
    // An interior pointer is not an allocation either.
    EXPECT_NE(P->data_delete(Dev, at(Real, 64), Kind), OFFLOAD_SUCCESS);
  }
  // The real allocation survived all that.
  HostMemTy Src(4096), Dst(4096);
  fillPattern(Src.get(), 4096, 7);
  ASSERT_EQ(P->data_submit(Dev, Real, Src.get(), 4096), OFFLOAD_SUCCESS);
  ASSERT_EQ(P->data_retrieve(Dev, Dst.get(), Real, 4096), OFFLOAD_SUCCESS);
  EXPECT_TRUE(hasPattern(Dst.get(), 4096, 7));
}

//===----------------------------------------------------------------------===//
// Transfers
//===----------------------------------------------------------------------===//

TEST_P(DeviceConformance, RoundTripSync) {
  for (size_t Size : TransferSizes) {
    SCOPED_TRACE("size " + std::to_string(Size));
    HostMemTy Src(Size), Dst(Size);
    roundTrip(Src.get(), Dst.get(), Size, /*Async=*/false, Size);
  }
}

TEST_P(DeviceConformance, RoundTripAsync) {
  for (size_t Size : TransferSizes) {
    SCOPED_TRACE("size " + std::to_string(Size));
    HostMemTy Src(Size), Dst(Size);
    roundTrip(Src.get(), Dst.get(), Size, /*Async=*/true, Size + 1);
  }
}

TEST_P(DeviceConformance, RoundTripUnalignedHostAndDevice) {
  // Odd host and device offsets and lengths around the staging and lock
  // thresholds.
  for (size_t Size : {size_t(3), 4 * KiB + 1, 1 * MiB - 1, 1 * MiB + 3}) {
    SCOPED_TRACE("size " + std::to_string(Size));
    HostMemTy Src(Size + 16), Dst(Size + 16, 0x5A);
    char *Tgt = static_cast<char *>(alloc(Size + 16));
    ASSERT_NE(Tgt, nullptr);
    fillPattern(Src + 3, Size, Size);
    ASSERT_EQ(P->data_submit(Dev, Tgt + 5, Src + 3, Size), OFFLOAD_SUCCESS);
    ASSERT_EQ(P->data_retrieve(Dev, Dst + 7, Tgt + 5, Size), OFFLOAD_SUCCESS);
    EXPECT_TRUE(hasPattern(Dst + 7, Size, Size));
    EXPECT_TRUE(isFilled(Dst.get(), 7, 0x5A)) << "wrote before the range";
    EXPECT_TRUE(isFilled(Dst + 7 + Size, 9, 0x5A)) << "wrote past the range";
  }
}

TEST_P(DeviceConformance, QueryAsyncUntilDone) {
  for (size_t Size : TransferSizes) {
    SCOPED_TRACE("size " + std::to_string(Size));
    HostMemTy Src(Size), Dst(Size);
    void *Tgt = alloc(Size);
    ASSERT_NE(Tgt, nullptr);
    fillPattern(Src.get(), Size, 11 * Size);
    AsyncTy AI(P, Dev);
    ASSERT_EQ(P->data_submit_async(Dev, Tgt, Src.get(), Size, &AI),
              OFFLOAD_SUCCESS);
    ASSERT_EQ(P->data_retrieve_async(Dev, Dst.get(), Tgt, Size, &AI),
              OFFLOAD_SUCCESS);
    ASSERT_NE(AI.queue(), nullptr);
    auto Deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    unsigned Polls = 0;
    while (AI.queue()) {
      ASSERT_EQ(P->query_async(Dev, &AI), OFFLOAD_SUCCESS);
      ++Polls;
      ASSERT_LT(std::chrono::steady_clock::now(), Deadline)
          << "query_async never finished after " << Polls << " polls";
      if (AI.queue())
        std::this_thread::yield();
    }
    EXPECT_TRUE(hasPattern(Dst.get(), Size, 11 * Size));
    // Querying a finished async info is harmless.
    EXPECT_EQ(P->query_async(Dev, &AI), OFFLOAD_SUCCESS);
    EXPECT_EQ(AI.queue(), nullptr);
  }
}

TEST_P(DeviceConformance, AsyncSubmitCapturesUnlockedSource) {
  // libomptarget frees or reuses firstprivate buffers as soon as the async
  // submit returns: the bytes in the buffer at the call are what must
  // arrive. Keep the queue busy first (a large copy from locked memory,
  // which is genuinely asynchronous) so that the copy under test is still
  // pending when the source is overwritten.
  constexpr size_t BusySize = 32 * MiB;
  HostMemTy Busy(BusySize);
  void *BusyLocked = nullptr;
  ASSERT_EQ(lock(Busy.get(), BusySize, &BusyLocked), OFFLOAD_SUCCESS);
  void *BusyTgt = alloc(BusySize);
  ASSERT_NE(BusyTgt, nullptr);
  for (size_t Size : {size_t(1), size_t(100), 4 * KiB, 64 * KiB, 3 * MiB}) {
    SCOPED_TRACE("size " + std::to_string(Size));
    HostMemTy Src(Size), Dst(Size);
    void *Tgt = alloc(Size);
    ASSERT_NE(Tgt, nullptr);
    fillPattern(Src.get(), Size, 3 * Size);
    {
      AsyncTy AI(P, Dev);
      ASSERT_EQ(P->data_submit_async(Dev, BusyTgt, Busy.get(), BusySize, &AI),
                OFFLOAD_SUCCESS);
      ASSERT_EQ(P->data_submit_async(Dev, Tgt, Src.get(), Size, &AI),
                OFFLOAD_SUCCESS);
      std::memset(Src.get(), 0xEE, Size);
      ASSERT_EQ(P->synchronize(Dev, &AI), OFFLOAD_SUCCESS);
      EXPECT_EQ(AI.queue(), nullptr);
    }
    ASSERT_EQ(P->data_retrieve(Dev, Dst.get(), Tgt, Size), OFFLOAD_SUCCESS);
    EXPECT_TRUE(hasPattern(Dst.get(), Size, 3 * Size))
        << "the source was read after the async submit returned";
    EXPECT_TRUE(release(Tgt));
  }
  EXPECT_EQ(unlock(Busy.get()), OFFLOAD_SUCCESS);
}

TEST_P(DeviceConformance, ZeroSizeTransfersDoNothing) {
  constexpr size_t Size = 256;
  HostMemTy Host(Size), Check(Size);
  void *Tgt = alloc(Size);
  void *Tgt1 = alloc(Size);
  ASSERT_NE(Tgt, nullptr);
  ASSERT_NE(Tgt1, nullptr);
  fillPattern(Host.get(), Size, 1);
  ASSERT_EQ(P->data_submit(Dev, Tgt, Host.get(), Size), OFFLOAD_SUCCESS);
  ASSERT_EQ(P->data_submit(Dev, Tgt1, Host.get(), Size), OFFLOAD_SUCCESS);
  fillPattern(Host.get(), Size, 2);

  EXPECT_EQ(P->data_submit(Dev, Tgt, Host.get(), 0), OFFLOAD_SUCCESS);
  EXPECT_EQ(P->data_retrieve(Dev, Host.get(), Tgt, 0), OFFLOAD_SUCCESS);
  EXPECT_EQ(P->data_exchange(Dev, Tgt1, Dev, Tgt, 0), OFFLOAD_SUCCESS);
  {
    AsyncTy AI(P, Dev);
    EXPECT_EQ(P->data_submit_async(Dev, Tgt, Host.get(), 0, &AI),
              OFFLOAD_SUCCESS);
    EXPECT_EQ(P->data_retrieve_async(Dev, Host.get(), Tgt, 0, &AI),
              OFFLOAD_SUCCESS);
    EXPECT_EQ(P->data_exchange_async(Dev, Tgt1, Dev, Tgt, 0, &AI),
              OFFLOAD_SUCCESS);
    // Nothing needed queueing; if the plugin queued anyway, synchronize
    // must still clear it.
    if (AI.queue()) {
      EXPECT_EQ(P->synchronize(Dev, &AI), OFFLOAD_SUCCESS);
      EXPECT_EQ(AI.queue(), nullptr);
    }
  }
  // Nothing moved either way.
  EXPECT_TRUE(hasPattern(Host.get(), Size, 2));
  ASSERT_EQ(P->data_retrieve(Dev, Check.get(), Tgt, Size), OFFLOAD_SUCCESS);
  EXPECT_TRUE(hasPattern(Check.get(), Size, 1));
}

TEST_P(DeviceConformance, InvalidTransfersFail) {
  constexpr size_t Size = 256;
  HostMemTy Host(Size);
  void *Tgt = alloc(Size);
  ASSERT_NE(Tgt, nullptr);
  fillPattern(Host.get(), Size, 5);
  ASSERT_EQ(P->data_submit(Dev, Tgt, Host.get(), Size), OFFLOAD_SUCCESS);
  HostMemTy Before(Size);
  std::memcpy(Before.get(), Host.get(), Size);

  for (int64_t Bad : {int64_t(-1), int64_t(-4096), INT64_MIN}) {
    SCOPED_TRACE("size " + std::to_string(Bad));
    EXPECT_NE(P->data_submit(Dev, Tgt, Host.get(), Bad), OFFLOAD_SUCCESS);
    EXPECT_NE(P->data_retrieve(Dev, Host.get(), Tgt, Bad), OFFLOAD_SUCCESS);
    EXPECT_NE(P->data_exchange(Dev, Tgt, Dev, Tgt, Bad), OFFLOAD_SUCCESS);
    AsyncTy AI(P, Dev);
    EXPECT_NE(P->data_submit_async(Dev, Tgt, Host.get(), Bad, &AI),
              OFFLOAD_SUCCESS);
    EXPECT_NE(P->data_retrieve_async(Dev, Host.get(), Tgt, Bad, &AI),
              OFFLOAD_SUCCESS);
    EXPECT_NE(P->data_exchange_async(Dev, Tgt, Dev, Tgt, Bad, &AI),
              OFFLOAD_SUCCESS);
    if (AI.queue())
      EXPECT_EQ(P->synchronize(Dev, &AI), OFFLOAD_SUCCESS);
  }
  EXPECT_NE(P->data_submit(Dev, nullptr, Host.get(), Size), OFFLOAD_SUCCESS);
  EXPECT_NE(P->data_submit(Dev, Tgt, nullptr, Size), OFFLOAD_SUCCESS);
  EXPECT_NE(P->data_retrieve(Dev, nullptr, Tgt, Size), OFFLOAD_SUCCESS);
  EXPECT_NE(P->data_retrieve(Dev, Host.get(), nullptr, Size), OFFLOAD_SUCCESS);
  EXPECT_NE(P->data_exchange(Dev, nullptr, Dev, Tgt, Size), OFFLOAD_SUCCESS);
  EXPECT_NE(P->data_exchange(Dev, Tgt, Dev, nullptr, Size), OFFLOAD_SUCCESS);
  {
    AsyncTy AI(P, Dev);
    EXPECT_NE(P->data_submit_async(Dev, nullptr, Host.get(), Size, &AI),
              OFFLOAD_SUCCESS);
    EXPECT_NE(P->data_submit_async(Dev, Tgt, nullptr, Size, &AI),
              OFFLOAD_SUCCESS);
    EXPECT_NE(P->data_retrieve_async(Dev, nullptr, Tgt, Size, &AI),
              OFFLOAD_SUCCESS);
    EXPECT_NE(P->data_retrieve_async(Dev, Host.get(), nullptr, Size, &AI),
              OFFLOAD_SUCCESS);
    if (AI.queue())
      EXPECT_EQ(P->synchronize(Dev, &AI), OFFLOAD_SUCCESS);
  }
  // synchronize and query_async need an async info.
  EXPECT_NE(P->synchronize(Dev, nullptr), OFFLOAD_SUCCESS);
  EXPECT_NE(P->query_async(Dev, nullptr), OFFLOAD_SUCCESS);
  // Nothing was damaged on either side.
  EXPECT_EQ(std::memcmp(Host.get(), Before.get(), Size), 0);
  HostMemTy Check(Size);
  ASSERT_EQ(P->data_retrieve(Dev, Check.get(), Tgt, Size), OFFLOAD_SUCCESS);
  EXPECT_TRUE(hasPattern(Check.get(), Size, 5));
}

//===----------------------------------------------------------------------===//
// Events and device-to-device copies
//===----------------------------------------------------------------------===//

TEST_P(DeviceConformance, Events) {
  // A copy on one async info, an event recorded after it, and a readback on
  // a second async info that waits for the event: the readback must see the
  // copy's data. The first copy is large and from locked memory so that it
  // is still running when the second queue is set up.
  constexpr size_t Size = 32 * MiB;
  HostMemTy Src(Size), Dst(4 * KiB);
  void *SrcLocked = nullptr;
  ASSERT_EQ(lock(Src.get(), Size, &SrcLocked), OFFLOAD_SUCCESS);
  void *Tgt = alloc(Size);
  ASSERT_NE(Tgt, nullptr);
  std::memset(Src.get(), 0x11, Size);
  ASSERT_EQ(P->data_submit(Dev, Tgt, Src.get(), Size), OFFLOAD_SUCCESS);
  fillPattern(Src.get(), Size, 99);

  void *Event = nullptr, *Other = nullptr;
  ASSERT_EQ(P->create_event(Dev, &Event), OFFLOAD_SUCCESS);
  ASSERT_NE(Event, nullptr);
  ASSERT_EQ(P->create_event(Dev, &Other), OFFLOAD_SUCCESS);
  ASSERT_NE(Other, nullptr);
  EXPECT_NE(Event, Other) << "two live events are the same object";
  {
    AsyncTy First(P, Dev), Second(P, Dev);
    ASSERT_EQ(P->data_submit_async(Dev, Tgt, Src.get(), Size, &First),
              OFFLOAD_SUCCESS);
    ASSERT_EQ(P->record_event(Dev, Event, &First), OFFLOAD_SUCCESS);
    ASSERT_EQ(P->wait_event(Dev, Event, &Second), OFFLOAD_SUCCESS);
    ASSERT_EQ(P->data_retrieve_async(Dev, Dst.get(), at(Tgt, Size - 4 * KiB),
                                     4 * KiB, &Second),
              OFFLOAD_SUCCESS);
    ASSERT_NE(Second.queue(), nullptr);
    ASSERT_EQ(P->synchronize(Dev, &Second), OFFLOAD_SUCCESS);
    EXPECT_EQ(Second.queue(), nullptr);
    std::vector<unsigned char> Want(Size);
    fillPattern(Want.data(), Size, 99);
    EXPECT_EQ(std::memcmp(Dst.get(), Want.data() + Size - 4 * KiB, 4 * KiB), 0)
        << "the readback did not wait for the recorded copy";

    // sync_event waits for everything recorded before the event, so the
    // first queue has nothing left to do.
    EXPECT_EQ(P->sync_event(Dev, Event), OFFLOAD_SUCCESS);
    if (First.queue()) {
      EXPECT_EQ(P->query_async(Dev, &First), OFFLOAD_SUCCESS);
      EXPECT_EQ(First.queue(), nullptr)
          << "work recorded before a synchronised event is still pending";
    }
    // An event recorded on a queue with no work is complete at once, and
    // waiting on it is harmless.
    AsyncTy Third(P, Dev);
    EXPECT_EQ(P->record_event(Dev, Other, &Third), OFFLOAD_SUCCESS);
    EXPECT_EQ(P->sync_event(Dev, Other), OFFLOAD_SUCCESS);
    EXPECT_EQ(P->wait_event(Dev, Other, &Second), OFFLOAD_SUCCESS);
    if (Second.queue())
      EXPECT_EQ(P->synchronize(Dev, &Second), OFFLOAD_SUCCESS);
    if (Third.queue())
      EXPECT_EQ(P->synchronize(Dev, &Third), OFFLOAD_SUCCESS);
  }
  // An event can be recorded and waited for again (libomptarget keeps one
  // per mapping and reuses it for every transfer).
  {
    AsyncTy AI(P, Dev);
    ASSERT_EQ(P->data_submit_async(Dev, Tgt, Src.get(), 4 * KiB, &AI),
              OFFLOAD_SUCCESS);
    EXPECT_EQ(P->record_event(Dev, Event, &AI), OFFLOAD_SUCCESS);
    EXPECT_EQ(P->synchronize(Dev, &AI), OFFLOAD_SUCCESS);
    EXPECT_EQ(P->sync_event(Dev, Event), OFFLOAD_SUCCESS);
  }
  EXPECT_EQ(P->destroy_event(Dev, Event), OFFLOAD_SUCCESS);
  EXPECT_EQ(P->destroy_event(Dev, Other), OFFLOAD_SUCCESS);
  // Null events are refused.
  EXPECT_NE(P->create_event(Dev, nullptr), OFFLOAD_SUCCESS);
  EXPECT_NE(P->sync_event(Dev, nullptr), OFFLOAD_SUCCESS);
  EXPECT_NE(P->destroy_event(Dev, nullptr), OFFLOAD_SUCCESS);
  EXPECT_EQ(unlock(Src.get()), OFFLOAD_SUCCESS);
}

TEST_P(DeviceConformance, DataExchangeBetweenDevices) {
  if (NumDevices < 2)
    GTEST_SKIP() << "plugin '" << GetParam() << "' has " << NumDevices
                 << " device(s); data_exchange needs 2";
  if (!P->is_data_exchangable(0, 1))
    GTEST_SKIP() << "is_data_exchangable(0, 1) says no";
  ASSERT_EQ(P->init_device(1), OFFLOAD_SUCCESS);
  // Ids outside the plugin are never exchangeable.
  EXPECT_FALSE(P->is_data_exchangable(0, NumDevices));
  EXPECT_FALSE(P->is_data_exchangable(-1, 0));
  for (size_t Size : TransferSizes) {
    SCOPED_TRACE("size " + std::to_string(Size));
    HostMemTy Src(Size), Dst(Size);
    void *T0 = alloc(Size, KindDefault, 0);
    void *T1 = alloc(Size, KindDefault, 1);
    ASSERT_NE(T0, nullptr);
    ASSERT_NE(T1, nullptr);
    fillPattern(Src.get(), Size, Size + 17);
    ASSERT_EQ(P->data_submit(0, T0, Src.get(), Size), OFFLOAD_SUCCESS);
    ASSERT_EQ(P->data_exchange(0, T0, 1, T1, Size), OFFLOAD_SUCCESS);
    ASSERT_EQ(P->data_retrieve(1, Dst.get(), T1, Size), OFFLOAD_SUCCESS);
    EXPECT_TRUE(hasPattern(Dst.get(), Size, Size + 17)) << "sync exchange";

    // Async, back from device 1 to device 0; the async info belongs to the
    // source device, as in libomptarget.
    fillPattern(Src.get(), Size, Size + 18);
    ASSERT_EQ(P->data_submit(1, T1, Src.get(), Size), OFFLOAD_SUCCESS);
    AsyncTy AI(P, 1);
    ASSERT_EQ(P->data_exchange_async(1, T1, 0, T0, Size, &AI),
              OFFLOAD_SUCCESS);
    ASSERT_EQ(P->synchronize(1, &AI), OFFLOAD_SUCCESS);
    EXPECT_EQ(AI.queue(), nullptr);
    ASSERT_EQ(P->data_retrieve(0, Dst.get(), T0, Size), OFFLOAD_SUCCESS);
    EXPECT_TRUE(hasPattern(Dst.get(), Size, Size + 18)) << "async exchange";
    EXPECT_TRUE(release(T0));
    EXPECT_TRUE(release(T1));
  }
}

//===----------------------------------------------------------------------===//
// Locking
//===----------------------------------------------------------------------===//

TEST_P(DeviceConformance, LockReturnsDeviceAccessiblePointer) {
  for (size_t Size : {size_t(1), size_t(100), 4 * KiB, 3 * MiB}) {
    SCOPED_TRACE("size " + std::to_string(Size));
    HostMemTy Buf(Size + 64);
    void *Locked = nullptr;
    ASSERT_EQ(lock(Buf + 32, Size, &Locked), OFFLOAD_SUCCESS);
    EXPECT_NE(Locked, nullptr);
    EXPECT_EQ(unlock(Buf + 32), OFFLOAD_SUCCESS);
    EXPECT_NE(unlock(Buf + 32), OFFLOAD_SUCCESS) << "unlocked twice";
  }
}

TEST_P(DeviceConformance, LockContainedSubRangeReturnsBasePlusOffset) {
  constexpr size_t Size = 64 * KiB;
  HostMemTy Buf(Size);
  void *Base = nullptr;
  ASSERT_EQ(lock(Buf.get(), Size, &Base), OFFLOAD_SUCCESS);
  ASSERT_NE(Base, nullptr);
  struct {
    size_t Off, Len;
  } Subs[] = {{0, 1}, {0, Size}, {100, 50}, {Size - 1, 1}, {4096, 8192}};
  for (auto S : Subs) {
    SCOPED_TRACE("offset " + std::to_string(S.Off) + ", length " +
                 std::to_string(S.Len));
    void *Sub = nullptr;
    ASSERT_EQ(lock(Buf + S.Off, S.Len, &Sub), OFFLOAD_SUCCESS);
    EXPECT_EQ(Sub, at(Base, S.Off));
  }
  // Five sub-locks and the base lock: six references.
  for (auto S : Subs)
    EXPECT_EQ(unlock(Buf + S.Off), OFFLOAD_SUCCESS);
  EXPECT_EQ(unlock(Buf.get()), OFFLOAD_SUCCESS);
  EXPECT_NE(unlock(Buf.get()), OFFLOAD_SUCCESS);
}

TEST_P(DeviceConformance, LockSameRangeTwiceUnlockThrice) {
  HostMemTy Buf(8 * KiB);
  void *A = nullptr, *B = nullptr;
  ASSERT_EQ(lock(Buf + 100, 5000, &A), OFFLOAD_SUCCESS);
  ASSERT_EQ(lock(Buf + 100, 5000, &B), OFFLOAD_SUCCESS);
  EXPECT_NE(A, nullptr);
  EXPECT_EQ(A, B);
  EXPECT_EQ(unlock(Buf + 100), OFFLOAD_SUCCESS);
  EXPECT_EQ(unlock(Buf + 100), OFFLOAD_SUCCESS);
  EXPECT_NE(unlock(Buf + 100), OFFLOAD_SUCCESS) << "third unlock succeeded";
}

TEST_P(DeviceConformance, LockPartialOverlapSupersetExtensionRefused) {
  HostMemTy Buf(16 * KiB);
  char *B = Buf.get();
  auto Refused = [&](size_t Off, size_t Len) -> ::testing::AssertionResult {
    void *Out = nullptr;
    int32_t Rc = lock(B + Off, Len, &Out);
    if (Rc == OFFLOAD_SUCCESS) {
      unlock(B + Off);
      return ::testing::AssertionFailure()
             << "lock of [" << Off << ", " << Off + Len << ") succeeded";
    }
    if (Out)
      return ::testing::AssertionFailure()
             << "refused lock of [" << Off << ", " << Off + Len
             << ") left the out pointer at " << Out;
    return ::testing::AssertionSuccess();
  };
  // The locked region is [4096, 8192).
  void *Region = nullptr;
  ASSERT_EQ(lock(B + 4096, 4096, &Region), OFFLOAD_SUCCESS);
  EXPECT_TRUE(Refused(2048, 4096)) << "overlap of the front";
  EXPECT_TRUE(Refused(6144, 4096)) << "overlap of the back";
  EXPECT_TRUE(Refused(4095, 2)) << "one byte before the front";
  EXPECT_TRUE(Refused(8191, 2)) << "one byte past the back";
  EXPECT_TRUE(Refused(2048, 8192)) << "superset";
  EXPECT_TRUE(Refused(4096, 4097)) << "extension at the end";
  EXPECT_TRUE(Refused(4095, 4097)) << "extension at the start";
  EXPECT_TRUE(Refused(6000, 8000)) << "extension from the inside";
  // Refused locks took no reference: one unlock releases the region.
  EXPECT_EQ(unlock(B + 4096), OFFLOAD_SUCCESS);
  EXPECT_NE(unlock(B + 4096), OFFLOAD_SUCCESS);

  // The other order: the later lock is the one inside the earlier range.
  // [2048, 6144) locked first, then [4096, 8192) overlaps its back.
  ASSERT_EQ(lock(B + 2048, 4096, &Region), OFFLOAD_SUCCESS);
  EXPECT_TRUE(Refused(4096, 4096)) << "overlap of the back";
  EXPECT_EQ(unlock(B + 2048), OFFLOAD_SUCCESS);
  // [6144, 10240) locked first, then [4096, 8192) overlaps its front.
  ASSERT_EQ(lock(B + 6144, 4096, &Region), OFFLOAD_SUCCESS);
  EXPECT_TRUE(Refused(4096, 4096)) << "overlap of the front";
  EXPECT_EQ(unlock(B + 6144), OFFLOAD_SUCCESS);
  // A range spanning two locked regions and the gap between them.
  void *R2 = nullptr;
  ASSERT_EQ(lock(B + 1024, 1024, &Region), OFFLOAD_SUCCESS);
  ASSERT_EQ(lock(B + 3072, 1024, &R2), OFFLOAD_SUCCESS);
  EXPECT_TRUE(Refused(1024, 3072)) << "spanning two regions";
  EXPECT_TRUE(Refused(1500, 2000)) << "bridging two regions";
  EXPECT_TRUE(Refused(0, 8192)) << "covering two regions";
  EXPECT_EQ(unlock(B + 1024), OFFLOAD_SUCCESS);
  EXPECT_EQ(unlock(B + 3072), OFFLOAD_SUCCESS);
  // With everything released, the superset locks fine.
  void *All = nullptr;
  EXPECT_EQ(lock(B, 16 * KiB, &All), OFFLOAD_SUCCESS);
  EXPECT_EQ(unlock(B), OFFLOAD_SUCCESS);
}

TEST_P(DeviceConformance, UnlockUnknownPointerFails) {
  HostMemTy Buf(8 * KiB);
  int Stack = 0;
  EXPECT_NE(unlock(Buf.get()), OFFLOAD_SUCCESS);
  EXPECT_NE(unlock(&Stack), OFFLOAD_SUCCESS);
  EXPECT_NE(unlock(nullptr), OFFLOAD_SUCCESS);
  // Just outside a locked region is unknown too.
  void *Locked = nullptr;
  ASSERT_EQ(lock(Buf + 1000, 1000, &Locked), OFFLOAD_SUCCESS);
  EXPECT_NE(unlock(Buf + 999), OFFLOAD_SUCCESS);
  EXPECT_NE(unlock(Buf + 2000), OFFLOAD_SUCCESS);
  EXPECT_EQ(unlock(Buf + 1000), OFFLOAD_SUCCESS);
}

TEST_P(DeviceConformance, UnlockNamesThePointerALockWasTakenAt) {
  HostMemTy Buf(8 * KiB);
  void *Locked = nullptr;
  ASSERT_EQ(lock(Buf + 1000, 3000, &Locked), OFFLOAD_SUCCESS);
  ASSERT_EQ(lock(Buf + 1000, 3000, &Locked), OFFLOAD_SUCCESS);
  // Interior pointers no lock was taken at release nothing.
  EXPECT_NE(unlock(Buf + 2500), OFFLOAD_SUCCESS);
  EXPECT_NE(unlock(Buf + 3999), OFFLOAD_SUCCESS) << "last byte";
  EXPECT_EQ(unlock(Buf + 1000), OFFLOAD_SUCCESS);
  // A sub-buffer is released at its own pointer, once per lock.
  void *Sub = nullptr;
  ASSERT_EQ(lock(Buf + 2000, 10, &Sub), OFFLOAD_SUCCESS);
  EXPECT_EQ(Sub, at(Locked, 1000));
  EXPECT_EQ(unlock(Buf + 2000), OFFLOAD_SUCCESS);
  EXPECT_NE(unlock(Buf + 2000), OFFLOAD_SUCCESS);
  EXPECT_EQ(unlock(Buf + 1000), OFFLOAD_SUCCESS);
  EXPECT_NE(unlock(Buf + 1000), OFFLOAD_SUCCESS) << "region released";
  // The range can be locked afresh.
  ASSERT_EQ(lock(Buf + 1000, 3000, &Locked), OFFLOAD_SUCCESS);
  EXPECT_EQ(unlock(Buf + 1000), OFFLOAD_SUCCESS);
}

TEST_P(DeviceConformance, LockInvalidRangesRefused) {
  HostMemTy Buf(4096);
  auto Refused = [&](void *Ptr, int64_t Size) -> ::testing::AssertionResult {
    void *Out = nullptr;
    int32_t Rc = lock(Ptr, Size, &Out);
    if (Rc == OFFLOAD_SUCCESS) {
      unlock(Ptr);
      return ::testing::AssertionFailure() << "lock succeeded";
    }
    if (Out)
      return ::testing::AssertionFailure() << "out pointer left at " << Out;
    return ::testing::AssertionSuccess();
  };
  EXPECT_TRUE(Refused(Buf.get(), 0)) << "size 0";
  EXPECT_TRUE(Refused(Buf.get(), -1)) << "negative size";
  EXPECT_TRUE(Refused(Buf.get(), INT64_MIN)) << "negative size";
  EXPECT_TRUE(Refused(nullptr, 64)) << "null pointer";
  EXPECT_TRUE(Refused(nullptr, 0)) << "null pointer, size 0";
  EXPECT_TRUE(Refused(reinterpret_cast<void *>(UINTPTR_MAX - 4095), 8192))
      << "range wraps around the address space";
  EXPECT_TRUE(Refused(reinterpret_cast<void *>(UINTPTR_MAX), 2))
      << "range wraps around the address space";
  // A null out-pointer slot is refused, not written through.
  EXPECT_NE(P->data_lock(Dev, Buf.get(), 64, nullptr), OFFLOAD_SUCCESS);
  EXPECT_NE(unlock(Buf.get()), OFFLOAD_SUCCESS) << "a refused lock stuck";
}

TEST_P(DeviceConformance, AdjacentSubPageBuffersLockIndependently) {
  HostMemTy Page(4096);
  char *A = Page.get(), *B = Page + 1000, *C = Page + 2000;
  for (int Order = 0; Order < 2; ++Order) {
    SCOPED_TRACE(Order ? "released B first" : "released A first");
    void *LA = nullptr, *LB = nullptr, *LC = nullptr;
    ASSERT_EQ(lock(A, 1000, &LA), OFFLOAD_SUCCESS);
    ASSERT_EQ(lock(B, 1000, &LB), OFFLOAD_SUCCESS);
    ASSERT_NE(LA, nullptr);
    ASSERT_NE(LB, nullptr);
    // Each one is its own region, so a range over both is an overlap.
    void *Out = nullptr;
    EXPECT_NE(lock(A + 500, 1000, &Out), OFFLOAD_SUCCESS);
    // Release one; the other stays locked and usable.
    char *Gone = Order ? B : A, *Kept = Order ? A : B;
    void *KeptLocked = Order ? LA : LB;
    EXPECT_EQ(unlock(Gone), OFFLOAD_SUCCESS);
    EXPECT_NE(unlock(Gone), OFFLOAD_SUCCESS);
    void *Sub = nullptr;
    ASSERT_EQ(lock(Kept + 10, 20, &Sub), OFFLOAD_SUCCESS);
    EXPECT_EQ(Sub, at(KeptLocked, 10));
    EXPECT_EQ(unlock(Kept + 10), OFFLOAD_SUCCESS);
    // Transfers from and to the page still work, locked or not.
    void *Tgt = alloc(3000);
    ASSERT_NE(Tgt, nullptr);
    ASSERT_EQ(lock(C, 1000, &LC), OFFLOAD_SUCCESS);
    fillPattern(A, 3000, 40 + Order);
    ASSERT_EQ(P->data_submit(Dev, Tgt, A, 3000), OFFLOAD_SUCCESS);
    std::memset(A, 0, 3000);
    ASSERT_EQ(P->data_retrieve(Dev, A, Tgt, 3000), OFFLOAD_SUCCESS);
    EXPECT_TRUE(hasPattern(A, 3000, 40 + Order));
    EXPECT_EQ(unlock(Kept), OFFLOAD_SUCCESS);
    EXPECT_EQ(unlock(C), OFFLOAD_SUCCESS);
    EXPECT_NE(unlock(Kept), OFFLOAD_SUCCESS);
    EXPECT_TRUE(release(Tgt));
  }
}

TEST_P(DeviceConformance, SubmitFromLockedBufferArrivesIntact) {
  for (size_t Size : TransferSizes) {
    for (bool Async : {false, true}) {
      SCOPED_TRACE("size " + std::to_string(Size) +
                   (Async ? ", async" : ", sync"));
      HostMemTy Src(Size), Dst(Size);
      void *LS = nullptr, *LD = nullptr;
      ASSERT_EQ(lock(Src.get(), Size, &LS), OFFLOAD_SUCCESS);
      ASSERT_EQ(lock(Dst.get(), Size, &LD), OFFLOAD_SUCCESS);
      roundTrip(Src.get(), Dst.get(), Size, Async, Size * 2 + Async);
      // Into unlocked memory as well.
      HostMemTy Plain(Size);
      roundTrip(Src.get(), Plain.get(), Size, Async, Size * 3 + Async);
      EXPECT_EQ(unlock(Src.get()), OFFLOAD_SUCCESS);
      EXPECT_EQ(unlock(Dst.get()), OFFLOAD_SUCCESS);
    }
  }
}

TEST_P(DeviceConformance, SubmitHalfLockedRangeArrivesIntact) {
  // Ranges whose pieces are locked and unlocked: the front, the back or the
  // middle locked, small (staged) and large (locked for the copy) pieces.
  struct {
    size_t Size, LockOff, LockLen;
  } Cases[] = {
      {8 * KiB, 0, 4 * KiB + 100},       {8 * KiB, 4 * KiB - 100, 4 * KiB + 100},
      {8 * KiB, 3000, 2000},             {3 * MiB, 0, 3 * MiB / 2},
      {3 * MiB, 3 * MiB / 2, 3 * MiB / 2}, {3 * MiB, 1 * MiB + 5, 1 * MiB},
      {3 * MiB, 100, 3 * MiB - 200},
  };
  for (auto C : Cases) {
    for (bool Async : {false, true}) {
      SCOPED_TRACE("size " + std::to_string(C.Size) + ", locked [" +
                   std::to_string(C.LockOff) + ", " +
                   std::to_string(C.LockOff + C.LockLen) + ")" +
                   (Async ? ", async" : ", sync"));
      HostMemTy Src(C.Size), Dst(C.Size);
      void *LS = nullptr, *LD = nullptr;
      ASSERT_EQ(lock(Src + C.LockOff, C.LockLen, &LS), OFFLOAD_SUCCESS);
      ASSERT_EQ(lock(Dst + C.LockOff, C.LockLen, &LD), OFFLOAD_SUCCESS);
      roundTrip(Src.get(), Dst.get(), C.Size, Async, C.Size + C.LockOff);
      EXPECT_EQ(unlock(Src + C.LockOff), OFFLOAD_SUCCESS);
      EXPECT_EQ(unlock(Dst + C.LockOff), OFFLOAD_SUCCESS);
    }
  }
}

TEST_P(DeviceConformance, HostKindMemoryLocksInside) {
  constexpr size_t Size = 64 * KiB;
  char *H = static_cast<char *>(alloc(Size, KindHost));
  ASSERT_NE(H, nullptr);
  void *Locked = nullptr;
  ASSERT_EQ(lock(H + 100, 1000, &Locked), OFFLOAD_SUCCESS);
  ASSERT_NE(Locked, nullptr);
  // A device-accessible view of the same bytes, inside the allocation.
  EXPECT_GE(static_cast<char *>(Locked), H);
  EXPECT_LT(static_cast<char *>(Locked), H + Size);
  // The whole allocation locks too, sharing the registration.
  void *Whole = nullptr;
  ASSERT_EQ(lock(H, Size, &Whole), OFFLOAD_SUCCESS);
  EXPECT_EQ(static_cast<char *>(Locked) - static_cast<char *>(Whole), 100);
  EXPECT_EQ(unlock(H), OFFLOAD_SUCCESS);
  // A range reaching past the allocation is an overlap.
  void *Out = nullptr;
  EXPECT_NE(lock(H + Size - 10, 20, &Out), OFFLOAD_SUCCESS);
  EXPECT_EQ(Out, nullptr);
  // Transfers from inside work.
  void *Tgt = alloc(Size);
  ASSERT_NE(Tgt, nullptr);
  fillPattern(H, Size, 77);
  ASSERT_EQ(P->data_submit(Dev, Tgt, H, Size), OFFLOAD_SUCCESS);
  std::memset(H, 0, Size);
  ASSERT_EQ(P->data_retrieve(Dev, H, Tgt, Size), OFFLOAD_SUCCESS);
  EXPECT_TRUE(hasPattern(H, Size, 77));
  // Freeing the allocation under a lock is refused and keeps it intact.
  EXPECT_NE(P->data_delete(Dev, H, KindHost), OFFLOAD_SUCCESS);
  EXPECT_TRUE(hasPattern(H, Size, 77));
  EXPECT_EQ(unlock(H + 100), OFFLOAD_SUCCESS);
  // The allocation's own registration is not a user lock.
  EXPECT_NE(unlock(H), OFFLOAD_SUCCESS);
  EXPECT_TRUE(release(H));
}

//===----------------------------------------------------------------------===//
// Concurrency
//===----------------------------------------------------------------------===//

TEST_P(DeviceConformance, ConcurrentLockSubmitRetrieveUnlock) {
  constexpr unsigned Threads = 16;
  constexpr unsigned Iterations = 2000;
  // Private buffers are 1536 bytes, packed, so that neighbouring threads'
  // regions share pages: a backend that pins whole pages must count them.
  constexpr size_t PrivSize = 1536;
  constexpr size_t SharedSize = 64 * KiB;
  constexpr size_t Slice = SharedSize / Threads;
  HostMemTy Arena(Threads * PrivSize), Scratch(Threads * PrivSize);
  HostMemTy Shared(SharedSize);
  void *SharedLocked = nullptr;
  ASSERT_EQ(lock(Shared.get(), SharedSize, &SharedLocked), OFFLOAD_SUCCESS);
  ASSERT_NE(SharedLocked, nullptr);
  std::vector<void *> PrivTgt(Threads), SliceTgt(Threads);
  for (unsigned T = 0; T < Threads; ++T) {
    PrivTgt[T] = alloc(PrivSize);
    SliceTgt[T] = alloc(Slice);
    ASSERT_NE(PrivTgt[T], nullptr);
    ASSERT_NE(SliceTgt[T], nullptr);
  }

  std::atomic<unsigned> Failures{0};
  std::mutex MessagesLock;
  std::vector<std::string> Messages;
  auto Fail = [&](unsigned T, unsigned I, const std::string &What) {
    Failures.fetch_add(1);
    std::lock_guard<std::mutex> Guard(MessagesLock);
    if (Messages.size() < 10)
      Messages.push_back("thread " + std::to_string(T) + ", iteration " +
                         std::to_string(I) + ": " + What);
  };

  auto Worker = [&](unsigned T) {
    char *Priv = Arena + T * PrivSize;
    char *Back = Scratch + T * PrivSize;
    char *MySlice = Shared + T * Slice;
    uint64_t Rng = 0x2545F4914F6CDD1Dull * (T + 1);
    auto Next = [&] {
      Rng ^= Rng << 13;
      Rng ^= Rng >> 7;
      Rng ^= Rng << 17;
      return Rng;
    };
    for (unsigned I = 0; I < Iterations && Failures.load() < 10; ++I) {
      uint64_t Seed = (uint64_t(T) << 32) | I;
      // A private buffer: lock, copy there and back, unlock.
      void *Locked = nullptr;
      if (P->data_lock(Dev, Priv, PrivSize, &Locked) != OFFLOAD_SUCCESS ||
          !Locked) {
        Fail(T, I, "private lock failed");
        continue;
      }
      fillPattern(Priv, PrivSize, Seed);
      if (I & 1) {
        __tgt_async_info AI{nullptr};
        std::memset(Back, 0, PrivSize);
        if (P->data_submit_async(Dev, PrivTgt[T], Priv, PrivSize, &AI) ||
            P->data_retrieve_async(Dev, Back, PrivTgt[T], PrivSize, &AI) ||
            P->synchronize(Dev, &AI) || AI.Queue)
          Fail(T, I, "async copy failed");
        else if (auto R = hasPattern(Back, PrivSize, Seed); !R)
          Fail(T, I, std::string("async data: ") + R.message());
      } else {
        if (P->data_submit(Dev, PrivTgt[T], Priv, PrivSize) != 0) {
          Fail(T, I, "submit failed");
        } else {
          std::memset(Priv, 0, PrivSize);
          if (P->data_retrieve(Dev, Priv, PrivTgt[T], PrivSize) != 0)
            Fail(T, I, "retrieve failed");
          else if (auto R = hasPattern(Priv, PrivSize, Seed); !R)
            Fail(T, I, std::string("sync data: ") + R.message());
        }
      }
      if (P->data_unlock(Dev, Priv) != 0)
        Fail(T, I, "private unlock failed");

      // A sub-range anywhere in the shared locked region.
      size_t Off = Next() % SharedSize;
      size_t Len = 1 + Next() % (SharedSize - Off);
      void *Sub = nullptr;
      if (P->data_lock(Dev, Shared + Off, Len, &Sub) != OFFLOAD_SUCCESS) {
        Fail(T, I, "shared sub-range lock failed");
      } else {
        if (Sub != at(SharedLocked, Off))
          Fail(T, I, "shared sub-range lock is not base + offset");
        // Every eighth iteration, traffic through this thread's own slice
        // of the shared region.
        if (I % 8 == 0) {
          fillPattern(MySlice, Slice, ~Seed);
          if (P->data_submit(Dev, SliceTgt[T], MySlice, Slice) != 0)
            Fail(T, I, "slice submit failed");
          std::memset(MySlice, 0, Slice);
          if (P->data_retrieve(Dev, MySlice, SliceTgt[T], Slice) != 0)
            Fail(T, I, "slice retrieve failed");
          else if (auto R = hasPattern(MySlice, Slice, ~Seed); !R)
            Fail(T, I, std::string("slice data: ") + R.message());
        }
        if (P->data_unlock(Dev, Shared + Off) != 0)
          Fail(T, I, "shared sub-range unlock failed");
      }
    }
  };
  std::vector<std::thread> Pool;
  for (unsigned T = 0; T < Threads; ++T)
    Pool.emplace_back(Worker, T);
  for (auto &Th : Pool)
    Th.join();

  std::string Report;
  for (const std::string &M : Messages)
    Report += "\n  " + M;
  EXPECT_EQ(Failures.load(), 0u) << Report;
  // Every sub-range lock was released: the region has its one reference.
  EXPECT_EQ(unlock(Shared.get()), OFFLOAD_SUCCESS);
  EXPECT_NE(unlock(Shared.get()), OFFLOAD_SUCCESS);
  // And every private region is gone.
  for (unsigned T = 0; T < Threads; ++T)
    EXPECT_NE(unlock(Arena + T * PrivSize), OFFLOAD_SUCCESS) << "thread " << T;
}

//===----------------------------------------------------------------------===//
// Deletes that leave a broken plugin behind if they go wrong; last, so that
// a failure here cannot disturb other cases of a whole-binary run (ctest
// runs every case in its own process anyway).
//===----------------------------------------------------------------------===//

TEST_P(DeviceConformance, DataDeleteTwiceFails) {
  // Small (pooled by a memory manager) and large allocations of each kind:
  // the second delete must fail and must not free anything else. The small
  // size is one no other case allocates: if the second delete wrongly frees
  // a pooled block, the pool may hand freed memory out again, and only
  // allocations of that size class can receive it.
  for (int32_t Kind : {KindDevice, KindHost, KindShared, KindDefault})
    for (size_t Size : {size_t(400), 64 * KiB}) {
      SCOPED_TRACE("kind " + std::to_string(Kind) + ", size " +
                   std::to_string(Size));
      void *Tgt = P->data_alloc(Dev, Size, nullptr, Kind);
      ASSERT_NE(Tgt, nullptr);
      ASSERT_EQ(P->data_delete(Dev, Tgt, Kind), OFFLOAD_SUCCESS);
      // Stop at the first wrong success: what follows would use memory
      // the plugin has freed behind its own back.
      ASSERT_NE(P->data_delete(Dev, Tgt, Kind), OFFLOAD_SUCCESS)
          << "the second data_delete of " << Tgt << " succeeded";
      // Whatever the plugin hands out next is distinct memory: two live
      // allocations never alias.
      void *A = P->data_alloc(Dev, Size, nullptr, Kind);
      void *B = P->data_alloc(Dev, Size, nullptr, Kind);
      ASSERT_NE(A, nullptr);
      ASSERT_NE(B, nullptr);
      EXPECT_NE(A, B) << "two live allocations share an address";
      EXPECT_EQ(P->data_delete(Dev, A, Kind), OFFLOAD_SUCCESS);
      EXPECT_EQ(P->data_delete(Dev, B, Kind), OFFLOAD_SUCCESS);
    }
}

TEST_P(DeviceConformance, DataDeleteHostMemoryWithDefaultKind) {
  // omp_target_free passes DEFAULT whatever allocated the memory, so HOST
  // memory from llvm_omp_target_alloc_host can come back with kind DEFAULT.
  // The plugin may refuse that or free it, but it must stay usable: a later
  // HOST allocation (likely at the same address) and locks there work.
  for (int Round = 0; Round < 4; ++Round) {
    SCOPED_TRACE("round " + std::to_string(Round));
    void *H = P->data_alloc(Dev, 64 * KiB, nullptr, KindHost);
    ASSERT_NE(H, nullptr);
    if (P->data_delete(Dev, H, KindDefault) != OFFLOAD_SUCCESS)
      ASSERT_EQ(P->data_delete(Dev, H, KindHost), OFFLOAD_SUCCESS);
  }
  void *H = P->data_alloc(Dev, 64 * KiB, nullptr, KindHost);
  ASSERT_NE(H, nullptr) << "HOST allocation fails after DEFAULT-kind frees";
  void *Locked = nullptr;
  EXPECT_EQ(lock(at(H, 128), 256, &Locked), OFFLOAD_SUCCESS);
  EXPECT_EQ(unlock(at(H, 128)), OFFLOAD_SUCCESS);
  EXPECT_EQ(P->data_delete(Dev, H, KindHost), OFFLOAD_SUCCESS);
}

TEST_P(DeviceConformance, DataDeleteHostMemoryOnAnotherDeviceFails) {
  // HOST memory belongs to the device that allocated it, but its
  // registration in the lock map is plugin-wide: another device must refuse
  // to free it and leave it registered, or the owner could never free it
  // (found by test/fuzz/PluginLockFuzzer).
  if (NumDevices < 2)
    GTEST_SKIP() << "plugin '" << GetParam() << "' has " << NumDevices
                 << " device(s)";
  ASSERT_EQ(P->init_device(1), OFFLOAD_SUCCESS);
  char *H = static_cast<char *>(alloc(4 * KiB, KindHost));
  ASSERT_NE(H, nullptr);
  for (int32_t Kind : {KindHost, KindDefault})
    EXPECT_NE(P->data_delete(1, H, Kind), OFFLOAD_SUCCESS) << "kind " << Kind;
  // Still registered: a lock inside shares the allocation and holds off its
  // deletion until it is released.
  void *Locked = nullptr;
  ASSERT_EQ(lock(H + 64, 64, &Locked), OFFLOAD_SUCCESS);
  EXPECT_NE(P->data_delete(Dev, H, KindHost), OFFLOAD_SUCCESS);
  EXPECT_EQ(unlock(H + 64), OFFLOAD_SUCCESS);
  EXPECT_TRUE(release(H));
}

//===----------------------------------------------------------------------===//
// Exit
//===----------------------------------------------------------------------===//

/// A plugin (or the runtime under it) that hangs in an exit handler hangs
/// every program that loads it. Once the cases are done, give the process
/// ExitGraceSeconds to exit and then end it with a message and status 3, so
/// that such a hang fails promptly and says what it is instead of running
/// into ctest's timeout.
constexpr unsigned ExitGraceSeconds = 30;

//===----------------------------------------------------------------------===//
// The batch extensions (__tgt_rtl_ompx_io_batch_*, offloadio/ExtensionABI.h)
// that libompx_io's ompx_io_batch_submit calls: the same contract on every
// plugin, whatever path its engine takes.
//===----------------------------------------------------------------------===//

/// The batch entry points of \p P, looked up by name; null when missing.
struct BatchFnsTy {
  int32_t (*Create)(int32_t, void **);
  int32_t (*Start)(int32_t, void *, const ompx_io_op_t *, uint64_t);
  int32_t (*Test)(void *);
  int32_t (*Wait)(void *, ompx_io_op_t *, uint64_t);
  uint64_t (*Message)(void *, uint64_t, char *, uint64_t);
  void (*Release)(void *);
  explicit BatchFnsTy(void *H)
      : Create(reinterpret_cast<decltype(Create)>(
            ::dlsym(H, "__tgt_rtl_ompx_io_batch_create"))),
        Start(reinterpret_cast<decltype(Start)>(
            ::dlsym(H, "__tgt_rtl_ompx_io_batch_start"))),
        Test(reinterpret_cast<decltype(Test)>(
            ::dlsym(H, "__tgt_rtl_ompx_io_batch_test"))),
        Wait(reinterpret_cast<decltype(Wait)>(
            ::dlsym(H, "__tgt_rtl_ompx_io_batch_wait"))),
        Message(reinterpret_cast<decltype(Message)>(
            ::dlsym(H, "__tgt_rtl_ompx_io_batch_message"))),
        Release(reinterpret_cast<decltype(Release)>(
            ::dlsym(H, "__tgt_rtl_ompx_io_batch_release"))) {}
  bool complete() const {
    return Create && Start && Test && Wait && Message && Release;
  }
};

TEST_P(DeviceConformance, BatchReadsGatheredAndSingleWithPerOperationErrors) {
  BatchFnsTy B(P->Handle);
  ASSERT_TRUE(B.complete()) << "a __tgt_rtl_ompx_io_batch_* entry point is "
                               "not exported";
  char Path[] = "/tmp/conformance-batch-XXXXXX";
  int Fd = ::mkstemp(Path);
  ASSERT_GE(Fd, 0);
  ::unlink(Path);
  constexpr size_t FileSize = 100000;
  std::vector<char> File(FileSize);
  for (size_t I = 0; I < FileSize; ++I)
    File[I] = char(I * 13 + 5);
  ASSERT_EQ(::pwrite(Fd, File.data(), FileSize, 0), ssize_t(FileSize));
  char *Buf = static_cast<char *>(alloc(FileSize + 8192));
  ASSERT_NE(Buf, nullptr);

  // 40 touching reads of 1000 bytes, a read of the rest, one across end of
  // file, one with a bad descriptor.
  std::vector<ompx_io_op_t> Ops;
  for (int K = 0; K < 40; ++K)
    Ops.push_back({OMPX_IO_OP_READ, Fd, Buf + K * 1000, 1000, off_t(K * 1000),
                   0, 0, 0});
  Ops.push_back({OMPX_IO_OP_READ, Fd, Buf + 40000, FileSize - 40000, 40000, 0,
                 0, 0});
  Ops.push_back({OMPX_IO_OP_READ, Fd, Buf + FileSize, 4096,
                 off_t(FileSize - 10), 0, 0, 0});
  Ops.push_back({OMPX_IO_OP_READ, -1, Buf + FileSize + 4096, 10, 0, 0, 0, 0});
  void *Share = nullptr;
  ASSERT_EQ(B.Create(Dev, &Share), 0);
  ASSERT_NE(Share, nullptr);
  ASSERT_EQ(B.Start(Dev, Share, Ops.data(), Ops.size()), 0);
  ASSERT_EQ(B.Wait(Share, Ops.data(), Ops.size()), 0);
  EXPECT_EQ(B.Test(Share), 1);
  for (int K = 0; K < 40; ++K)
    EXPECT_EQ(Ops[K].result, 1000) << K;
  EXPECT_EQ(Ops[40].result, ssize_t(FileSize - 40000));
  EXPECT_EQ(Ops[41].result, 10);
  EXPECT_EQ(Ops[42].result, -1);
  EXPECT_EQ(Ops[42].error, EBADF);
  char Text[256];
  EXPECT_GT(B.Message(Share, 42, Text, sizeof(Text)), 0u);
  EXPECT_NE(std::string(Text).find("fd -1"), std::string::npos) << Text;
  EXPECT_EQ(B.Message(Share, 0, Text, sizeof(Text)), 0u);
  B.Release(Share);

  std::vector<char> Back(FileSize + 10);
  ASSERT_EQ(P->data_retrieve(Dev, Back.data(), Buf, FileSize + 10),
            OFFLOAD_SUCCESS);
  EXPECT_EQ(std::memcmp(Back.data(), File.data(), FileSize), 0);
  EXPECT_EQ(std::memcmp(Back.data() + FileSize, File.data() + FileSize - 10,
                        10),
            0);
  ::close(Fd);
}

TEST_P(DeviceConformance, BatchWritesAndReleaseUnstarted) {
  BatchFnsTy B(P->Handle);
  ASSERT_TRUE(B.complete());
  // A share released without being started gives its request back.
  void *Unstarted = nullptr;
  ASSERT_EQ(B.Create(Dev, &Unstarted), 0);
  B.Release(Unstarted);

  char Path[] = "/tmp/conformance-batch-XXXXXX";
  int Fd = ::mkstemp(Path);
  ASSERT_GE(Fd, 0);
  ::unlink(Path);
  constexpr size_t Size = 30000;
  std::vector<char> Src(Size);
  for (size_t I = 0; I < Size; ++I)
    Src[I] = char(I * 3 + 1);
  char *Buf = static_cast<char *>(alloc(Size));
  ASSERT_NE(Buf, nullptr);
  ASSERT_EQ(P->data_submit(Dev, Buf, Src.data(), Size), OFFLOAD_SUCCESS);
  // Thirty touching writes of 1000 bytes, submitted last to first.
  std::vector<ompx_io_op_t> Ops;
  for (int K = 29; K >= 0; --K)
    Ops.push_back({OMPX_IO_OP_WRITE, Fd, Buf + K * 1000, 1000,
                   off_t(K * 1000), 0, 0, 0});
  void *Share = nullptr;
  ASSERT_EQ(B.Create(Dev, &Share), 0);
  ASSERT_EQ(B.Start(Dev, Share, Ops.data(), Ops.size()), 0);
  ASSERT_EQ(B.Wait(Share, Ops.data(), Ops.size()), 0);
  B.Release(Share);
  for (size_t K = 0; K < Ops.size(); ++K)
    EXPECT_EQ(Ops[K].result, 1000) << K;
  std::vector<char> Back(Size);
  ASSERT_EQ(::pread(Fd, Back.data(), Size, 0), ssize_t(Size));
  EXPECT_EQ(Back, Src);
  ::close(Fd);
}

class ExitWatchdogTy : public ::testing::Environment {
public:
  void TearDown() override {
    std::thread([] {
      std::this_thread::sleep_for(std::chrono::seconds(ExitGraceSeconds));
      static const char Msg[] =
          "ConformanceTest: the cases finished, but the process did not exit "
          "within 30 s: a plugin or its runtime hangs at exit\n";
      ssize_t Ignored = ::write(2, Msg, sizeof(Msg) - 1);
      (void)Ignored;
      ::_exit(3);
    }).detach();
  }
};

[[maybe_unused]] ::testing::Environment *const ExitWatchdog =
    ::testing::AddGlobalTestEnvironment(new ExitWatchdogTy);

INSTANTIATE_TEST_SUITE_P(Plugin, PluginConformance,
                         ::testing::ValuesIn(selectedPlugins()),
                         [](const auto &Info) { return Info.param; });
INSTANTIATE_TEST_SUITE_P(Plugin, DeviceConformance,
                         ::testing::ValuesIn(selectedPlugins()),
                         [](const auto &Info) { return Info.param; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(PluginConformance);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(DeviceConformance);

} // namespace

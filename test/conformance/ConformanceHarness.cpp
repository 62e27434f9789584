// SPDX-License-Identifier: Apache-2.0
//
// The conformance suite's harness (ConformanceFixture.h says what the suite
// is): loading the plugins, their expected failures, the fixtures' set-up
// and clean-up, the data helpers, and the instantiation of every case once
// per plugin. Linked first (CMakeLists.txt), so that the suites are
// registered in the order PluginConformance, DeviceConformance.
#include "ConformanceFixture.h"

#include "gtest/gtest-spi.h"
#include "gtest/gtest.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef OFFLOADIO_CONFORMANCE_PLUGIN_DIR
#error "OFFLOADIO_CONFORMANCE_PLUGIN_DIR must name the plugin folder"
#endif
#ifndef OFFLOADIO_CONFORMANCE_XFAIL_DIR
#error "OFFLOADIO_CONFORMANCE_XFAIL_DIR must name the folder of *.xfail"
#endif

namespace offloadio::conformance {

//===----------------------------------------------------------------------===//
// Loading the plugins
//===----------------------------------------------------------------------===//

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

namespace {

std::string pluginDir() {
  if (const char *Env = std::getenv("OFFLOADIO_CONFORMANCE_PLUGIN_DIR"))
    if (*Env)
      return Env;
  return OFFLOADIO_CONFORMANCE_PLUGIN_DIR;
}

std::string pluginPath(const std::string &Name) {
  return pluginDir() + "/libomptarget.rtl." + Name +
         OFFLOADIO_CONFORMANCE_PLUGIN_SUFFIX + ".so";
}

bool fileExists(const std::string &Path) {
  struct stat St;
  return ::stat(Path.c_str(), &St) == 0 && S_ISREG(St.st_mode);
}

} // namespace

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
// Expected failures
//===----------------------------------------------------------------------===//

namespace {

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

} // namespace

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

//===----------------------------------------------------------------------===//
// Fixtures
//===----------------------------------------------------------------------===//

void PluginConformance::SetUp() {
  loadPlugin();
  if (!HasFatalFailure())
    installXfail();
}

void PluginConformance::TearDown() { finishXfail(); }

void PluginConformance::loadPlugin() {
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

void PluginConformance::installXfail() {
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

void PluginConformance::finishXfail() {
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

void DeviceConformance::SetUp() {
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

void DeviceConformance::TearDown() {
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

::testing::AssertionResult DeviceConformance::release(void *Ptr) {
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

//===----------------------------------------------------------------------===//
// Exit
//===----------------------------------------------------------------------===//

namespace {

/// A plugin (or the runtime under it) that hangs in an exit handler hangs
/// every program that loads it. Once the cases are done, give the process
/// ExitGraceSeconds to exit and then end it with a message and status 3, so
/// that such a hang fails promptly and says what it is instead of running
/// into ctest's timeout.
constexpr unsigned ExitGraceSeconds = 30;

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

} // namespace

INSTANTIATE_TEST_SUITE_P(Plugin, PluginConformance,
                         ::testing::ValuesIn(selectedPlugins()),
                         [](const auto &Info) { return Info.param; });
INSTANTIATE_TEST_SUITE_P(Plugin, DeviceConformance,
                         ::testing::ValuesIn(selectedPlugins()),
                         [](const auto &Info) { return Info.param; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(PluginConformance);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(DeviceConformance);

} // namespace offloadio::conformance

// SPDX-License-Identifier: Apache-2.0
//
// Plugin conformance: dlopen each built plugin (libomptarget.rtl.<name>.so,
// with ".nextgen" before ".so" for libomptarget 16) and drive its exported
// __tgt_rtl_* entry points directly, the way the libomptarget version the
// build serves does (ConformanceABI.h says where the versions differ), so
// that what is checked is the C ABI a program meets and not the C++
// framework behind it. Every case runs once per plugin.
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
//
// This header is what the cases (Conformance*Test.cpp, one topic each) share:
// the plugin and its entry points, the fixtures and the data helpers. The
// harness (ConformanceHarness.cpp) loads the plugins, keeps the expected
// failures and instantiates the cases once per plugin.
#ifndef OFFLOADIO_TEST_CONFORMANCE_CONFORMANCEFIXTURE_H
#define OFFLOADIO_TEST_CONFORMANCE_CONFORMANCEFIXTURE_H

#include "ConformanceABI.h"

#include "offloadio/ABI.h"

#include "gtest/gtest-spi.h"
#include "gtest/gtest.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace offloadio::conformance {

constexpr int32_t KindDevice = 0;
constexpr int32_t KindHost = 1;
constexpr int32_t KindShared = 2;
constexpr int32_t KindDefault = 3;

constexpr size_t KiB = 1024;
constexpr size_t MiB = 1024 * KiB;

//===----------------------------------------------------------------------===//
// The entry points
//===----------------------------------------------------------------------===//

/// The names the libomptarget version under test looks up
/// (OFFLOADIO_ENTRY_POINTS of ConformanceABI.h); its stock plugins export
/// exactly these.
const std::set<std::string> &expectedExports();

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

/// Plugin \p Name, loaded at the first call (LoadError says why not).
PluginTy &getPlugin(const std::string &Name);

/// The plugins to test, decided once before the tests are registered.
std::vector<std::string> selectedPlugins();

/// Whether the current case has failed, counting failures an expected-
/// failure case collected.
bool caseHasFailed();

//===----------------------------------------------------------------------===//
// Data helpers
//===----------------------------------------------------------------------===//

/// Deterministic bytes that differ for every (seed, offset).
void fillPattern(void *Ptr, size_t Size, uint64_t Seed);

/// Whether \p Ptr holds what fillPattern(Ptr, Size, Seed) wrote.
::testing::AssertionResult hasPattern(const void *Ptr, size_t Size,
                                      uint64_t Seed);

/// Whether every byte of \p Ptr is \p Byte.
::testing::AssertionResult isFilled(const void *Ptr, size_t Size,
                                    unsigned char Byte);

/// \p Base plus \p Off bytes.
inline char *at(void *Base, size_t Off) {
  return static_cast<char *>(Base) + Off;
}

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
  void SetUp() override;
  void TearDown() override;

  /// Load the plugin and call init_plugin, as libomptarget does first.
  void loadPlugin();

  /// If this case is listed in the plugin's .xfail, collect its failures
  /// from here on (from every thread) instead of reporting them.
  void installXfail();

  /// Report what an expected-failure case collected.
  void finishXfail();

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
  void SetUp() override;
  void TearDown() override;

  /// data_alloc that the fixture frees at the end of the case.
  void *alloc(int64_t Size, int32_t Kind = KindDefault, int32_t Device = 0) {
    void *Ptr = P->data_alloc(Device, Size, nullptr, Kind);
    if (Ptr)
      Allocs.push_back({Device, Ptr, Kind});
    return Ptr;
  }

  /// data_delete of an alloc() pointer, now, checking the result.
  ::testing::AssertionResult release(void *Ptr);

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
      if (AI.queue())
        P->synchronize(Dev, AI.get());
    }
    __tgt_async_info *operator&() { return AI.get(); }
    void *queue() const { return AI.queue(); }
    PluginTy *P;
    int32_t Dev;
    AsyncInfoTy AI;
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

/// Sizes every transfer case uses: a byte, a page, and more than the 1 MiB
/// from which unlocked memory is locked for the copy instead of staged.
inline constexpr size_t TransferSizes[] = {1, 4 * KiB, 3 * MiB};

} // namespace offloadio::conformance

#endif // OFFLOADIO_TEST_CONFORMANCE_CONFORMANCEFIXTURE_H

// SPDX-License-Identifier: Apache-2.0
//
// GenericKernelTy's launch geometry: clauses, trip counts, execution modes,
// kernel and device limits, and the OpenMP variables GenericDeviceTy::init()
// folds into the defaults. The expected figures are those of libomptarget
// 16's stock NextGen plugins for the same inputs: the plugin follows 16's
// conventions whatever version the build serves (17's and 18's rules:
// RuntimeABIConventionsTest; 18's launch environment: LaunchUnder18...). The fake plugin and device implement every backend hook with
// the least that lets the generic code run; none of them does device work.
// The plugin is FakeDevice.h's; the device here has limits of its own.
#include "FakeDevice.h"

#include "offloadio/Device.h"
#include "offloadio/DeviceRuntimeABI.h"
#include "offloadio/Kernel.h"
#include "offloadio/Plugin.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <random>
#include <vector>

using namespace offloadio;
using offloadio::unittest::CompletedEventTy;
using offloadio::unittest::FakePluginTy;
using offloadio::unittest::ImagelessDeviceTy;
using offloadio::unittest::ImmediateStreamTy;
using offloadio::unittest::notHere;

namespace {

/// A stream that completes everything at once (the device pool needs one)
/// and makes no copies, counting the flushes of device output.
class FakeStreamTy final : public ImmediateStreamTy {
public:
  Error copyAsync(void *, const void *, size_t, CopyKindTy) override {
    return notHere("copies");
  }

  /// Times the generic code asked for device output to be flushed.
  unsigned Flushes = 0;

protected:
  Error flushDeviceOutputImpl() override {
    ++Flushes;
    return Error::success();
  }
};

/// A device with the limits of the backend a test picks and no memory (the
/// FakeDeviceTy of FakeDevice.h has memory but the default limits).
class FakeDeviceTy final : public ImagelessDeviceTy {
public:
  FakeDeviceTy(GenericPluginTy &Plugin, const DeviceLimitsTy &Backend)
      : ImagelessDeviceTy(Plugin, 0), Backend(Backend) {
    // Tests that do not call init() still see the backend's limits.
    Limits = Backend;
  }

  std::optional<AllocationInfoTy> findAllocation(const void *) const override {
    return std::nullopt;
  }

protected:
  Error initImpl(DeviceLimitsTy &L) override {
    L = Backend;
    return Error::success();
  }
  Error deinitImpl() override { return Error::success(); }
  Expected<void *> allocateImpl(size_t, AllocKindTy) override {
    return notHere("memory");
  }
  Error freeImpl(void *, size_t, AllocKindTy) override { return notHere("memory"); }
  Expected<std::unique_ptr<StreamTy>> createStreamImpl() override {
    return std::make_unique<FakeStreamTy>();
  }
  Expected<std::unique_ptr<EventTy>> createEventImpl() override {
    return std::make_unique<CompletedEventTy>();
  }
  Error initDeviceInfoImpl(__tgt_device_info &) override {
    return Error::success();
  }
  void printInfoImpl(llvm::raw_ostream &) override {}

private:
  DeviceLimitsTy Backend;
};

/// A kernel with an optional limit of its own, recording its launches.
class FakeKernelTy final : public GenericKernelTy {
public:
  /// Without \p KernelMaxThreads the kernel inherits the device's limit.
  FakeKernelTy(DeviceImageTy &Image, std::optional<uint32_t> KernelMaxThreads,
               ExecModeTy Mode = ExecModeTy::SPMD, bool Prints = false)
      : GenericKernelTy(Image, "fake_kernel", KernelConfigTy{Mode}, Prints),
        KernelMaxThreads(KernelMaxThreads) {}

  struct LaunchTy {
    std::vector<void *> Args;
    LaunchDimsTy Dims;
    StreamTy *Stream;
  };
  std::vector<LaunchTy> Launches;

protected:
  Error launchImpl(GenericDeviceTy &, void **Args, uint32_t NumArgs,
                   const LaunchDimsTy &Dims, const KernelArgsTy &,
                   StreamTy &Stream) override {
    Launches.push_back(
        {std::vector<void *>(Args, Args + NumArgs), Dims, &Stream});
    return Error::success();
  }
  uint32_t getMaxThreads(const GenericDeviceTy &Device) const override {
    return KernelMaxThreads ? *KernelMaxThreads
                            : GenericKernelTy::getMaxThreads(Device);
  }

private:
  std::optional<uint32_t> KernelMaxThreads;
};

/// Limits of a GPU: \p MaxTeams, \p MaxThreads, default teams and threads,
/// and a warp of 32.
DeviceLimitsTy limits(uint32_t MaxTeams, uint32_t MaxThreads,
                      uint32_t DefaultTeams, uint32_t DefaultThreads) {
  DeviceLimitsTy L;
  L.MaxTeams = MaxTeams;
  L.MaxThreads = MaxThreads;
  L.DefaultTeams = DefaultTeams;
  L.DefaultThreads = DefaultThreads;
  L.WarpSize = 32;
  return L;
}

/// Limits shaped like a small GPU.
DeviceLimitsTy gpuLimits() { return limits(1024, 256, 64, 128); }

/// An H100's limits as the CUDA plugin reports them (libomptarget 16's
/// NVPTX defaults: 128 threads, 3200 teams).
DeviceLimitsTy nvptxLimits() { return limits(2147483647, 1024, 3200, 128); }

class KernelDimsTest : public ::testing::Test {
protected:
  void SetUp() override {
    // The caller's environment must not leak into the expectations.
    for (const char *Var : {"OMP_NUM_TEAMS", "OMP_TEAMS_THREAD_LIMIT",
                            "LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD",
                            "LIBOMPTARGET_NUM_INITIAL_STREAMS",
                            "LIBOMPTARGET_NUM_INITIAL_EVENTS"})
      unsetenv(Var);
    TgtImage = {Bytes, Bytes + sizeof(Bytes), nullptr, nullptr};
    Plugin.setRuntimeABI(*findDeviceRuntimeABI(16));
  }

  /// Dims for \p Args on a device with \p Limits and a kernel limited to
  /// \p KernelMax threads (none: the device's).
  LaunchDimsTy dims(const KernelArgsTy &Args,
                    const DeviceLimitsTy &Limits = gpuLimits(),
                    std::optional<uint32_t> KernelMax = std::nullopt,
                    ExecModeTy Mode = ExecModeTy::SPMD) {
    FakeDeviceTy Device(Plugin, Limits);
    DeviceImageTy Image(0, TgtImage);
    FakeKernelTy Kernel(Image, KernelMax, Mode);
    return Kernel.computeLaunchDims(Device, Args);
  }

  static KernelArgsTy args(uint32_t NumTeams = 0, uint32_t ThreadLimit = 0,
                           uint64_t Tripcount = 0) {
    KernelArgsTy A{};
    A.Version = 2;
    A.NumTeams[0] = NumTeams;
    A.ThreadLimit[0] = ThreadLimit;
    A.Tripcount = Tripcount;
    return A;
  }

  FakePluginTy Plugin;
  char Bytes[16] = {};
  __tgt_device_image TgtImage{};
};

::testing::AssertionResult dimsAre(const LaunchDimsTy &D, uint32_t Teams,
                                   uint32_t Threads) {
  if (D.NumTeams == Teams && D.NumThreads == Threads)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << D.NumTeams << " teams x " << D.NumThreads << " threads, expected "
         << Teams << " x " << Threads;
}

TEST_F(KernelDimsTest, DefaultsWhenNothingIsSpecified) {
  EXPECT_TRUE(dimsAre(dims(args()), 64, 128));
}

TEST_F(KernelDimsTest, ThreadLimitClauseIsCappedByTheDevice) {
  EXPECT_TRUE(dimsAre(dims(args(0, 32)), 64, 32));
  EXPECT_TRUE(dimsAre(dims(args(0, 1)), 64, 1));
  EXPECT_TRUE(dimsAre(dims(args(0, 256)), 64, 256));
  EXPECT_TRUE(dimsAre(dims(args(0, 1000)), 64, 256));
  EXPECT_TRUE(dimsAre(dims(args(0, UINT32_MAX)), 64, 256));
}

TEST_F(KernelDimsTest, KernelLimitCapsThreads) {
  EXPECT_TRUE(dimsAre(dims(args(0, 1000), gpuLimits(), 64), 64, 64));
  // The default (128) is capped too.
  EXPECT_TRUE(dimsAre(dims(args(), gpuLimits(), 64), 64, 64));
  EXPECT_TRUE(dimsAre(dims(args(0, 32), gpuLimits(), 64), 64, 32));
}

TEST_F(KernelDimsTest, KernelLimitAboveTheDeviceIsIgnored) {
  EXPECT_TRUE(dimsAre(dims(args(0, 1000), gpuLimits(), 4096), 64, 256));
}

TEST_F(KernelDimsTest, NumTeamsClauseIsCappedByTheDevice) {
  EXPECT_TRUE(dimsAre(dims(args(10)), 10, 128));
  EXPECT_TRUE(dimsAre(dims(args(1)), 1, 128));
  EXPECT_TRUE(dimsAre(dims(args(1024)), 1024, 128));
  EXPECT_TRUE(dimsAre(dims(args(5000)), 1024, 128));
  EXPECT_TRUE(dimsAre(dims(args(7, 16)), 7, 16));
}

TEST_F(KernelDimsTest, SPMDTripcountGivesEachThreadOneIteration) {
  EXPECT_TRUE(dimsAre(dims(args(0, 0, 1)), 1, 128));
  EXPECT_TRUE(dimsAre(dims(args(0, 0, 128)), 1, 128));
  EXPECT_TRUE(dimsAre(dims(args(0, 0, 129)), 2, 128));
  EXPECT_TRUE(dimsAre(dims(args(0, 0, 1000)), 8, 128));
  EXPECT_TRUE(dimsAre(dims(args(0, 0, 128 * 64)), 64, 128));
  // Long loops are capped at the default team count: teams are reused.
  EXPECT_TRUE(dimsAre(dims(args(0, 0, 128 * 64 + 1)), 64, 128));
  EXPECT_TRUE(dimsAre(dims(args(0, 0, 1000000000000ULL)), 64, 128));
  // With the thread count the clause chose.
  EXPECT_TRUE(dimsAre(dims(args(0, 32, 1000)), 32, 32));
  EXPECT_TRUE(dimsAre(dims(args(0, 1, 500)), 64, 1));
  EXPECT_TRUE(dimsAre(dims(args(0, 64, 640)), 10, 64));
}

TEST_F(KernelDimsTest, NumTeamsClauseBeatsTripcount) {
  EXPECT_TRUE(dimsAre(dims(args(3, 0, 1000000)), 3, 128));
}

TEST_F(KernelDimsTest, OnlyTheFirstDimensionCounts) {
  KernelArgsTy A = args();
  A.NumTeams[1] = 7;
  A.NumTeams[2] = 7;
  A.ThreadLimit[1] = 9;
  A.ThreadLimit[2] = 9;
  EXPECT_TRUE(dimsAre(dims(A), 64, 128));
}

TEST_F(KernelDimsTest, DegenerateLimitsStillGiveOneTeamOfOneThread) {
  DeviceLimitsTy Zero;
  Zero.MaxTeams = Zero.MaxThreads = Zero.DefaultTeams = Zero.DefaultThreads = 0;
  EXPECT_TRUE(dimsAre(dims(args(), Zero), 1, 1));
  EXPECT_TRUE(dimsAre(dims(args(5, 5), Zero), 1, 1));
  EXPECT_TRUE(dimsAre(dims(args(0, 0, 1000), Zero), 1, 1));
  // A kernel reporting no threads at all still runs one.
  EXPECT_TRUE(dimsAre(dims(args(0, 64), gpuLimits(), 0), 64, 1));
}

TEST_F(KernelDimsTest, HostLimitsGiveOneTeamOfOneThread) {
  // The host plugin's shape, as the stock x86_64 plugin's: a kernel is one
  // call, whatever the clauses say.
  DeviceLimitsTy Host;
  for (ExecModeTy Mode :
       {ExecModeTy::SPMD, ExecModeTy::Generic, ExecModeTy::GenericSPMD}) {
    EXPECT_TRUE(dimsAre(dims(args(0, 128), Host, std::nullopt, Mode), 1, 1));
    EXPECT_TRUE(dimsAre(dims(args(0, 0, 10), Host, std::nullopt, Mode), 1, 1));
    EXPECT_TRUE(dimsAre(dims(args(8, 8, 1000), Host, std::nullopt, Mode), 1, 1));
  }
}

TEST_F(KernelDimsTest, HugeTripcountDoesNotWrap) {
  for (ExecModeTy Mode :
       {ExecModeTy::SPMD, ExecModeTy::Generic, ExecModeTy::GenericSPMD}) {
    EXPECT_TRUE(dimsAre(
        dims(args(0, 0, UINT64_MAX), gpuLimits(), std::nullopt, Mode), 64,
        128));
    EXPECT_TRUE(dimsAre(
        dims(args(0, 0, UINT64_MAX - 100), gpuLimits(), std::nullopt, Mode),
        64, 128));
    // 2^32 distribute iterations: the stock plugin's 32-bit truncation
    // would launch no team at all.
    EXPECT_TRUE(dimsAre(
        dims(args(0, 0, 1ULL << 32), gpuLimits(), std::nullopt, Mode), 64,
        128));
  }
}

// The figures the stock CUDA plugin gives on an H100 for the same clauses,
// per execution mode.
TEST_F(KernelDimsTest, NVPTXGeometryPerModeIsTheStockPlugins) {
  constexpr auto G = ExecModeTy::Generic, S = ExecModeTy::SPMD,
                 GS = ExecModeTy::GenericSPMD;
  struct {
    ExecModeTy Mode;
    uint32_t NumTeams, ThreadLimit;
    uint64_t Trip;
    uint32_t KernelMax, Teams, Threads;
    const char *Why;
  } Cases[] = {
      {G, 0, 0, 1024, 1024, 1024, 128, "one team per distribute iteration"},
      {G, 0, 0, 4096, 1024, 3200, 128, "long loops capped at the default"},
      {G, 0, 0, 1000000, 1024, 3200, 128, "long loops capped at the default"},
      {G, 0, 0, 7, 1024, 7, 128, "short loop"},
      {G, 0, 0, 0, 1024, 3200, 128, "no trip count: the default"},
      {G, 0, 64, 1024, 1024, 1024, 96, "thread_limit plus the main warp"},
      {G, 0, 1, 10, 1024, 10, 33, "thread_limit plus the main warp"},
      {G, 0, 1024, 10, 1024, 10, 1024, "capped by the device"},
      {G, 0, 250, 10, 256, 10, 256, "capped by the kernel"},
      {G, 0, 0, 10, 64, 10, 64, "default capped by the kernel"},
      {G, 1, 0, 0, 1024, 1, 128, "plain target: clang passes one team"},
      {G, 7, 0, 1000000, 1024, 7, 128, "num_teams beats the trip count"},
      {GS, 0, 0, 1024, 1024, 1024, 128, "teams like generic"},
      {GS, 0, 0, 4096, 1024, 3200, 128, "long loops capped"},
      {GS, 0, 64, 100, 1024, 100, 64, "no extra warp: every thread runs"},
      {GS, 0, 0, 0, 1024, 3200, 128, "no trip count: the default"},
      {S, 0, 0, 1024, 1024, 8, 128, "one thread per iteration"},
      {S, 0, 0, 1025, 1024, 9, 128, "rounded up"},
      {S, 0, 0, 1000000, 1024, 3200, 128, "long loops reuse teams"},
      {S, 0, 0, 1ULL << 25, 1024, 3200, 128, "a 2^25 reduction"},
      {S, 0, 0, 1ULL << 28, 1024, 3200, 128, "a 2^28 reduction"},
      {S, 0, 64, 1024, 1024, 16, 64, "thread_limit sets the block"},
      {S, 0, 4096, 1ULL << 20, 1024, 1024, 1024, "capped by the device"},
      {S, 0, 0, 0, 1024, 3200, 128, "no trip count: the default"},
  };
  for (const auto &C : Cases)
    EXPECT_TRUE(dimsAre(dims(args(C.NumTeams, C.ThreadLimit, C.Trip),
                             nvptxLimits(), C.KernelMax, C.Mode),
                        C.Teams, C.Threads))
        << execModeName(C.Mode) << ", num_teams " << C.NumTeams
        << ", thread_limit " << C.ThreadLimit << ", trip " << C.Trip << ": "
        << C.Why;
}

TEST_F(KernelDimsTest, AMDGPUWavefrontIsTheGenericModeExtra) {
  DeviceLimitsTy AMD;
  AMD.MaxTeams = 65536;
  AMD.MaxThreads = 1024;
  AMD.DefaultTeams = 440;
  AMD.DefaultThreads = 256;
  AMD.WarpSize = 64;
  EXPECT_TRUE(dimsAre(
      dims(args(0, 100, 1000), AMD, std::nullopt, ExecModeTy::Generic), 440,
      164));
  EXPECT_TRUE(dimsAre(
      dims(args(0, 0, 100000), AMD, std::nullopt, ExecModeTy::SPMD), 391, 256));
}

// Properties of the rules over random inputs: within every limit, clauses
// obeyed, every SPMD iteration covered by a thread unless the cap applies,
// one team per distribute iteration otherwise.
TEST_F(KernelDimsTest, RandomInputsKeepTheRules) {
  std::mt19937_64 Rng(12345);
  auto Pick = [&](std::initializer_list<uint64_t> Values) {
    std::uniform_int_distribution<size_t> I(0, Values.size() - 1);
    return *(Values.begin() + I(Rng));
  };
  for (int Round = 0; Round < 20000; ++Round) {
    DeviceLimitsTy L;
    L.MaxTeams = uint32_t(Pick({1, 7, 1024, 65536, 2147483647}));
    L.MaxThreads = uint32_t(Pick({1, 64, 256, 1024}));
    L.DefaultTeams = std::min(L.MaxTeams, uint32_t(Pick({1, 64, 440, 3200})));
    L.DefaultThreads = std::min(L.MaxThreads, uint32_t(Pick({1, 128, 256})));
    L.WarpSize = uint32_t(Pick({1, 32, 64}));
    uint32_t KernelMax = uint32_t(Pick({0, 1, 96, 256, 1024, 4096}));
    auto Mode = ExecModeTy(Pick({1, 2, 3}));
    KernelArgsTy A = args(uint32_t(Pick({0, 0, 1, 7, 5000, UINT32_MAX})),
                          uint32_t(Pick({0, 0, 1, 33, 1000, UINT32_MAX})),
                          Pick({0, 1, 127, 128, 129, 1000, 1ULL << 25,
                                1ULL << 32, UINT64_MAX}) +
                              Pick({0, 0, 3}));
    LaunchDimsTy D = computeLaunchDims(L, KernelMax, KernelConfigTy{Mode},
                                       GeometryRulesTy{}, 32, A);
    SCOPED_TRACE(testing::Message()
                 << "round " << Round << ": mode " << execModeName(Mode)
                 << ", num_teams " << A.NumTeams[0] << ", thread_limit "
                 << A.ThreadLimit[0] << ", trip " << A.Tripcount
                 << ", kernel max " << KernelMax << " -> " << D.NumTeams
                 << " x " << D.NumThreads);
    uint32_t ThreadCap = std::max(1u, std::min(KernelMax, L.MaxThreads));
    ASSERT_GE(D.NumThreads, 1u);
    ASSERT_LE(D.NumThreads, ThreadCap);
    ASSERT_GE(D.NumTeams, 1u);
    ASSERT_LE(D.NumTeams, L.MaxTeams);
    if (A.ThreadLimit[0] == 0)
      ASSERT_EQ(D.NumThreads, std::max(1u, std::min(L.DefaultThreads,
                                                    ThreadCap)));
    else if (Mode != ExecModeTy::Generic)
      ASSERT_EQ(D.NumThreads, std::min(A.ThreadLimit[0], ThreadCap));
    if (A.NumTeams[0]) {
      ASSERT_EQ(D.NumTeams, std::min(A.NumTeams[0], L.MaxTeams));
      continue;
    }
    ASSERT_LE(D.NumTeams, L.DefaultTeams);
    if (A.Tripcount == 0) {
      ASSERT_EQ(D.NumTeams, L.DefaultTeams);
    } else if (Mode == ExecModeTy::SPMD) {
      uint64_t Covered = uint64_t(D.NumTeams) * D.NumThreads;
      if (D.NumTeams < L.DefaultTeams) {
        ASSERT_GE(Covered, A.Tripcount);
        ASSERT_LT(Covered - D.NumThreads, A.Tripcount);
      }
    } else {
      ASSERT_EQ(D.NumTeams, std::min<uint64_t>(A.Tripcount, L.DefaultTeams));
    }
  }
}

TEST_F(KernelDimsTest, PrintingKernelsHaveTheirOutputFlushedOnce) {
  FakeDeviceTy Device(Plugin, gpuLimits());
  DeviceImageTy Image(0, TgtImage);
  FakeKernelTy Quiet(Image, std::nullopt, ExecModeTy::SPMD, false);
  FakeKernelTy Printing(Image, std::nullopt, ExecModeTy::Generic, true);
  EXPECT_FALSE(Quiet.writesDeviceOutput());
  EXPECT_TRUE(Printing.writesDeviceOutput());
  EXPECT_EQ(Printing.getExecMode(), ExecModeTy::Generic);
  FakeStreamTy Stream;
  KernelArgsTy A = args(1);
  A.NumArgs = 0;
  // A quiet kernel costs no flush.
  ASSERT_FALSE(bool(Quiet.launch(Device, nullptr, nullptr, A, Stream)));
  ASSERT_FALSE(bool(Stream.flushDeviceOutput()));
  EXPECT_EQ(Stream.Flushes, 0u);
  // Two printing launches before the wait: one flush, then none.
  ASSERT_FALSE(bool(Printing.launch(Device, nullptr, nullptr, A, Stream)));
  ASSERT_FALSE(bool(Printing.launch(Device, nullptr, nullptr, A, Stream)));
  ASSERT_FALSE(bool(Stream.flushDeviceOutput()));
  ASSERT_FALSE(bool(Stream.flushDeviceOutput()));
  EXPECT_EQ(Stream.Flushes, 1u);
}

TEST_F(KernelDimsTest, DeviceSynchronizeAndQueryFlushDeviceOutput) {
  FakeDeviceTy Device(Plugin, gpuLimits());
  ASSERT_FALSE(bool(Device.init()));
  DeviceImageTy Image(0, TgtImage);
  FakeKernelTy Printing(Image, std::nullopt, ExecModeTy::SPMD, true);
  KernelArgsTy A = args(1);
  A.NumArgs = 0;
  for (bool ByQuery : {false, true}) {
    __tgt_async_info AsyncInfo{};
    ASSERT_FALSE(bool(Device.launchKernel(&Printing, nullptr, nullptr, A,
                                          &AsyncInfo)));
    auto *Stream = static_cast<FakeStreamTy *>(AsyncInfo.Queue);
    ASSERT_NE(Stream, nullptr);
    unsigned Before = Stream->Flushes;
    ASSERT_FALSE(bool(ByQuery ? Device.queryAsync(AsyncInfo)
                              : Device.synchronize(AsyncInfo)));
    EXPECT_EQ(AsyncInfo.Queue, nullptr);
    EXPECT_EQ(Stream->Flushes, Before + 1) << (ByQuery ? "query" : "sync");
  }
  // A synchronous launch (no async info) waits and flushes before it
  // returns.
  ASSERT_FALSE(
      bool(Device.launchKernel(&Printing, nullptr, nullptr, A, nullptr)));
  EXPECT_FALSE(bool(Device.deinit()));
}

TEST_F(KernelDimsTest, InitFoldsOmpVariablesIntoTheDefaults) {
  setenv("OMP_NUM_TEAMS", "16", 1);
  setenv("OMP_TEAMS_THREAD_LIMIT", "64", 1);
  FakeDeviceTy Device(Plugin, gpuLimits());
  ASSERT_FALSE(bool(Device.init()));
  EXPECT_EQ(Device.getLimits().DefaultTeams, 16u);
  EXPECT_EQ(Device.getLimits().DefaultThreads, 64u);
  EXPECT_EQ(Device.getLimits().MaxTeams, 1024u);
  EXPECT_EQ(Device.getLimits().MaxThreads, 256u);
  DeviceImageTy Image(0, TgtImage);
  FakeKernelTy Kernel(Image, std::nullopt);
  EXPECT_TRUE(dimsAre(Kernel.computeLaunchDims(Device, args()), 16, 64));
  // Clauses still win over the variables.
  EXPECT_TRUE(
      dimsAre(Kernel.computeLaunchDims(Device, args(100, 200)), 100, 200));
  EXPECT_FALSE(bool(Device.deinit()));
}

TEST_F(KernelDimsTest, InitCapsOmpVariablesAtTheDeviceLimits) {
  setenv("OMP_NUM_TEAMS", "5000", 1);
  setenv("OMP_TEAMS_THREAD_LIMIT", "100000", 1);
  FakeDeviceTy Device(Plugin, gpuLimits());
  ASSERT_FALSE(bool(Device.init()));
  EXPECT_EQ(Device.getLimits().DefaultTeams, 1024u);
  EXPECT_EQ(Device.getLimits().DefaultThreads, 256u);
  EXPECT_FALSE(bool(Device.deinit()));
}

TEST_F(KernelDimsTest, InitIgnoresInvalidOmpVariables) {
  setenv("OMP_NUM_TEAMS", "lots", 1);
  setenv("OMP_TEAMS_THREAD_LIMIT", "-4", 1);
  FakeDeviceTy Device(Plugin, gpuLimits());
  ::testing::internal::CaptureStderr();
  Error Err = Device.init();
  std::string Stderr = ::testing::internal::GetCapturedStderr();
  ASSERT_FALSE(bool(Err)) << takeErrorMessage(std::move(Err));
  EXPECT_EQ(Device.getLimits().DefaultTeams, 64u);
  EXPECT_EQ(Device.getLimits().DefaultThreads, 128u);
  EXPECT_NE(Stderr.find("OMP_NUM_TEAMS='lots'"), std::string::npos) << Stderr;
  EXPECT_NE(Stderr.find("OMP_TEAMS_THREAD_LIMIT='-4'"), std::string::npos)
      << Stderr;
  EXPECT_FALSE(bool(Device.deinit()));
}

TEST_F(KernelDimsTest, LaunchAppliesOffsetsAndPassesTheDims) {
  // 40 arguments: more than launch()'s inline storage.
  constexpr uint32_t N = 40;
  FakeDeviceTy Device(Plugin, gpuLimits());
  DeviceImageTy Image(0, TgtImage);
  FakeKernelTy Kernel(Image, std::nullopt);
  FakeStreamTy Stream;
  std::vector<char> Storage(N * 64);
  std::vector<void *> TgtArgs(N);
  std::vector<ptrdiff_t> Offsets(N);
  for (uint32_t I = 0; I < N; ++I) {
    TgtArgs[I] = &Storage[I * 64 + 32];
    // Negative offsets happen: a mapped array section that starts before
    // the base pointer.
    Offsets[I] = ptrdiff_t(I % 5) * 4 - 8;
  }
  KernelArgsTy A = args(0, 32, 1000);
  A.NumArgs = N;
  ASSERT_FALSE(
      bool(Kernel.launch(Device, TgtArgs.data(), Offsets.data(), A, Stream)));
  ASSERT_EQ(Kernel.Launches.size(), 1u);
  const auto &L = Kernel.Launches[0];
  ASSERT_EQ(L.Args.size(), size_t(N));
  for (uint32_t I = 0; I < N; ++I)
    EXPECT_EQ(L.Args[I], static_cast<char *>(TgtArgs[I]) + Offsets[I])
        << "argument " << I;
  EXPECT_TRUE(dimsAre(L.Dims, 32, 32));
  EXPECT_EQ(L.Stream, &Stream);
}

TEST_F(KernelDimsTest, LaunchUnder18PassesTheLaunchEnvironmentFirst) {
  Plugin.setRuntimeABI(*findDeviceRuntimeABI(18));
  FakeDeviceTy Device(Plugin, gpuLimits());
  DeviceImageTy Image(0, TgtImage);
  FakeKernelTy Kernel(Image, std::nullopt);
  FakeStreamTy Stream;
  char Storage[64];
  void *TgtArgs[] = {&Storage[0], &Storage[32]};
  ptrdiff_t Offsets[] = {8, -8};
  KernelArgsTy A = args(2, 8);
  A.NumArgs = 2;
  ASSERT_FALSE(bool(Kernel.launch(Device, TgtArgs, Offsets, A, Stream)));
  A.NumArgs = 0;
  ASSERT_FALSE(bool(Kernel.launch(Device, nullptr, nullptr, A, Stream)));
  ASSERT_EQ(Kernel.Launches.size(), 2u);
  // No reduction buffer: the all-ones sentinel, then the arguments.
  const auto &L = Kernel.Launches[0].Args;
  ASSERT_EQ(L.size(), 3u);
  EXPECT_EQ(L[0], launchEnvironmentSentinel());
  EXPECT_EQ(L[1], &Storage[8]);
  EXPECT_EQ(L[2], &Storage[24]);
  EXPECT_EQ(Kernel.Launches[1].Args,
            std::vector<void *>{launchEnvironmentSentinel()});
  // The caller's count is the caller's.
  EXPECT_EQ(A.NumArgs, 0u);
}

TEST_F(KernelDimsTest, LaunchWithoutArguments) {
  FakeDeviceTy Device(Plugin, gpuLimits());
  DeviceImageTy Image(0, TgtImage);
  FakeKernelTy Kernel(Image, std::nullopt);
  FakeStreamTy Stream;
  KernelArgsTy A = args(2, 8);
  A.NumArgs = 0;
  ASSERT_FALSE(bool(Kernel.launch(Device, nullptr, nullptr, A, Stream)));
  ASSERT_EQ(Kernel.Launches.size(), 1u);
  EXPECT_TRUE(Kernel.Launches[0].Args.empty());
  EXPECT_TRUE(dimsAre(Kernel.Launches[0].Dims, 2, 8));
}

} // namespace

// SPDX-License-Identifier: Apache-2.0
//
// The launch environment libomptarget 18's device runtime takes as every
// kernel's first argument (GenericDeviceTy::prepareLaunchEnvironment), on
// FakeDevice.h's device, whose memory the host can read and whose streams
// are the host backend's: the sentinel for kernels without a teams
// reduction; for the others device memory of the launch alone, holding
// {0, 0, buffer} when the kernel starts, freed only once the launch's
// stream is complete (by synchronize, a completed query, a synchronous
// entry point, or teardown), without waiting for the stream at enqueue.
// Also StreamTy::releaseWhenComplete, which it builds on.
#include "FakeDevice.h"
#include "ScopedEnv.h"

#include "offloadio/DeviceRuntimeABI.h"
#include "offloadio/Kernel.h"

#include "gtest/gtest.h"

#include <condition_variable>
#include <deque>
#include <cstring>
#include <mutex>
#include <vector>

using namespace offloadio;
using namespace offloadio::unittest;
using offloadio::test::ScopedEnvTy;

namespace {

/// What the device runtime reads through the first argument.
struct LaunchEnvironmentTy {
  uint32_t ReductionCnt;
  uint32_t ReductionIterCnt;
  void *ReductionBuffer;
};

/// Blocks its stream until opened.
struct GateTy {
  std::mutex Lock;
  std::condition_variable Changed;
  bool Open = false;
  static Error wait(void *Data) {
    auto &G = *static_cast<GateTy *>(Data);
    std::unique_lock<std::mutex> Guard(G.Lock);
    G.Changed.wait(Guard, [&] { return G.Open; });
    return Error::success();
  }
  void open() {
    std::lock_guard<std::mutex> Guard(Lock);
    Open = true;
    Changed.notify_all();
  }
};

/// A kernel whose "device code" is a host callback on the launch's stream:
/// it records the arguments and what the launch environment held when it
/// ran, then dirties the counters as a reduction's last team would.
class RecordingKernelTy final : public GenericKernelTy {
public:
  RecordingKernelTy(DeviceImageTy &Image, const char *Name,
                    KernelConfigTy Config)
      : GenericKernelTy(Image, Name, Config) {}

  struct RunTy {
    std::vector<void *> Args;
    const GenericDeviceTy *Device = nullptr;
    bool Implicit = false;
    bool SawEnvironment = false;
    LaunchEnvironmentTy Env = {};
    /// The size of the device allocation the buffer pointer is in.
    size_t BufferBytes = 0;
  };
  /// A deque: the stream's callbacks hold pointers to its elements.
  std::deque<RunTy> Runs;

protected:
  Error launchImpl(GenericDeviceTy &Device, void **Args, uint32_t NumArgs,
                   const LaunchDimsTy &, const KernelArgsTy &,
                   StreamTy &Stream) override {
    Runs.push_back({std::vector<void *>(Args, Args + NumArgs), &Device});
    // Only then is the first argument a launch environment.
    Runs.back().Implicit =
        Device.getServices().RuntimeABI.passesLaunchEnvironment() &&
        !isGlobalCtorDtorKernel(getName());
    return Stream.hostCallback(run, &Runs.back());
  }

private:
  static Error run(void *Data) {
    auto &Run = *static_cast<RunTy *>(Data);
    if (!Run.Implicit || Run.Args[0] == launchEnvironmentSentinel())
      return Error::success();
    auto *Env = static_cast<LaunchEnvironmentTy *>(Run.Args[0]);
    Run.SawEnvironment = true;
    std::memcpy(&Run.Env, Env, sizeof(*Env));
    if (auto Buffer = Run.Device->findAllocation(Env->ReductionBuffer))
      Run.BufferBytes = Buffer->Size;
    Env->ReductionCnt = 7;
    Env->ReductionIterCnt = 3;
    return Error::success();
  }
};

KernelConfigTy reductionConfig(uint32_t Size, uint32_t Length) {
  KernelConfigTy Config;
  Config.ReductionDataSize = Size;
  Config.ReductionBufferLength = Length;
  return Config;
}

class LaunchEnvironmentTest : public ::testing::Test {
protected:
  void SetUp() override {
    Plugin.setRuntimeABI(*findDeviceRuntimeABI(18));
    ASSERT_FALSE(bool(Plugin.init()));
  }
  void TearDown() override {
    if (Device) {
      EXPECT_FALSE(bool(Device->deinit()));
      EXPECT_EQ(Device->live(AllocKindTy::Device), 0u)
          << "launch memory outlived the device";
    }
  }

  /// Bring the device up; \p Cache: with the small-allocation cache.
  /// Hold \p Async's stream behind \p Gate: nothing enqueued on it later
  /// completes before the gate opens.
  void blockStream(__tgt_async_info &Async, GateTy &Gate) {
    AsyncInfoWrapperTy Wrapper(*Device, &Async);
    auto Stream = Wrapper.getStream();
    ASSERT_TRUE(bool(Stream));
    ASSERT_FALSE(bool(Stream->hostCallback(GateTy::wait, &Gate)));
  }

  void start(bool Cache, size_t CaptureLimit = 0) {
    if (!Cache)
      ScopedEnvTy::set("LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD", "0");
    Device = std::make_unique<FakeDeviceTy>(Plugin, /*HostAddressable=*/true);
    Device->PageableCaptureLimit = CaptureLimit;
    ASSERT_FALSE(bool(Device->init()));
  }

  /// Launch \p Kernel with one argument (\p Arg) on \p Async.
  Error launch(RecordingKernelTy &Kernel, __tgt_async_info *Async,
               void *Arg = nullptr) {
    void *Args[1] = {Arg};
    ptrdiff_t Offsets[1] = {0};
    KernelArgsTy KernelArgs = {};
    KernelArgs.Version = 2;
    KernelArgs.NumArgs = 1;
    return Device->launchKernel(&Kernel, Args, Offsets, KernelArgs, Async);
  }

  size_t liveDevice() const { return Device->live(AllocKindTy::Device); }

  ScopedEnvTy Vars{{"LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD",
                   "OFFLOADIO_PAGEABLE_PATH", "LIBOMPTARGET_INFO"}};
  FakePluginTy Plugin;
  std::unique_ptr<FakeDeviceTy> Device;
  char ImageBytes[8] = {};
  __tgt_device_image TgtImage{ImageBytes, ImageBytes + sizeof(ImageBytes),
                              nullptr, nullptr};
  DeviceImageTy Image{0, TgtImage};
};

TEST_F(LaunchEnvironmentTest, KernelsWithoutReductionGetTheSentinel) {
  start(/*Cache=*/false);
  RecordingKernelTy Kernel(Image, "k", KernelConfigTy{});
  int X = 0;
  ASSERT_FALSE(bool(launch(Kernel, nullptr, &X)));
  ASSERT_EQ(Kernel.Runs.size(), 1u);
  ASSERT_EQ(Kernel.Runs[0].Args.size(), 2u);
  EXPECT_EQ(Kernel.Runs[0].Args[0], launchEnvironmentSentinel());
  EXPECT_EQ(Kernel.Runs[0].Args[1], &X);
  EXPECT_EQ(liveDevice(), 0u) << "nothing to allocate";
}

TEST_F(LaunchEnvironmentTest, OnlyOneOfTheTwoSizesIsNoReduction) {
  start(/*Cache=*/false);
  RecordingKernelTy A(Image, "a", reductionConfig(4, 0));
  RecordingKernelTy B(Image, "b", reductionConfig(0, 1024));
  ASSERT_FALSE(bool(launch(A, nullptr)));
  ASSERT_FALSE(bool(launch(B, nullptr)));
  EXPECT_EQ(A.Runs[0].Args[0], launchEnvironmentSentinel());
  EXPECT_EQ(B.Runs[0].Args[0], launchEnvironmentSentinel());
  EXPECT_EQ(liveDevice(), 0u);
}

TEST_F(LaunchEnvironmentTest, ConstructorKernelsTakeNoLaunchEnvironment) {
  start(/*Cache=*/false);
  RecordingKernelTy Kernel(Image, "__omp_offloading_10_ctor",
                           reductionConfig(4, 1024));
  ASSERT_FALSE(bool(launch(Kernel, nullptr, this)));
  ASSERT_EQ(Kernel.Runs[0].Args.size(), 1u);
  EXPECT_EQ(Kernel.Runs[0].Args[0], this);
  EXPECT_EQ(liveDevice(), 0u);
}

TEST_F(LaunchEnvironmentTest, ReductionKernelSeesZeroedEnvironmentAndBuffer) {
  start(/*Cache=*/false);
  RecordingKernelTy Kernel(Image, "k", reductionConfig(12, 1024));
  int X = 0;
  __tgt_async_info Async{nullptr};
  ASSERT_FALSE(bool(launch(Kernel, &Async, &X)));
  ASSERT_FALSE(bool(Device->synchronize(Async)));
  const auto &Run = Kernel.Runs.at(0);
  ASSERT_EQ(Run.Args.size(), 2u);
  EXPECT_EQ(Run.Args[1], &X) << "the program's arguments follow";
  ASSERT_TRUE(Run.SawEnvironment);
  EXPECT_EQ(Run.Env.ReductionCnt, 0u);
  EXPECT_EQ(Run.Env.ReductionIterCnt, 0u);
  ASSERT_NE(Run.Env.ReductionBuffer, nullptr);
  EXPECT_NE(Run.Env.ReductionBuffer, Run.Args[0]);
  // Both are freed, and neither is ever the program's allocation.
  EXPECT_EQ(liveDevice(), 0u);
  EXPECT_FALSE(Device->findAllocation(Run.Args[0]));
}

TEST_F(LaunchEnvironmentTest, BufferHasSizeTimesLengthBytes) {
  start(/*Cache=*/false);
  RecordingKernelTy Kernel(Image, "k", reductionConfig(24, 512));
  __tgt_async_info Async{nullptr};
  ASSERT_FALSE(bool(launch(Kernel, &Async)));
  // Until the owner synchronises, the fake vendor holds both.
  ASSERT_EQ(liveDevice(), 2u);
  auto EnvAlloc = Device->findAllocation(Kernel.Runs[0].Args[0]);
  ASSERT_TRUE(EnvAlloc);
  EXPECT_EQ(EnvAlloc->Size, 16u);
  ASSERT_FALSE(bool(Device->synchronize(Async)));
  EXPECT_EQ(Kernel.Runs[0].BufferBytes, 24u * 512);
  EXPECT_EQ(liveDevice(), 0u);
}

TEST_F(LaunchEnvironmentTest, MemoryStaysUntilTheStreamIsComplete) {
  start(/*Cache=*/false);
  RecordingKernelTy Kernel(Image, "k", reductionConfig(4, 256));
  __tgt_async_info Async{nullptr};
  GateTy Gate;
  ASSERT_NO_FATAL_FAILURE(blockStream(Async, Gate));
  // The launch returns while the stream is blocked: nothing waits at
  // enqueue.
  ASSERT_FALSE(bool(launch(Kernel, &Async)));
  EXPECT_EQ(liveDevice(), 2u);
  // A query that finds the work pending frees nothing.
  ASSERT_FALSE(bool(Device->queryAsync(Async)));
  EXPECT_NE(Async.Queue, nullptr);
  EXPECT_EQ(liveDevice(), 2u);
  Gate.open();
  ASSERT_FALSE(bool(Device->synchronize(Async)));
  EXPECT_TRUE(Kernel.Runs[0].SawEnvironment);
  EXPECT_EQ(liveDevice(), 0u);
}

TEST_F(LaunchEnvironmentTest, CompletedQueryFreesTheMemory) {
  start(/*Cache=*/false);
  RecordingKernelTy Kernel(Image, "k", reductionConfig(4, 256));
  __tgt_async_info Async{nullptr};
  ASSERT_FALSE(bool(launch(Kernel, &Async)));
  while (Async.Queue)
    ASSERT_FALSE(bool(Device->queryAsync(Async)));
  EXPECT_TRUE(Kernel.Runs[0].SawEnvironment);
  EXPECT_EQ(liveDevice(), 0u);
}

TEST_F(LaunchEnvironmentTest, SynchronousLaunchFreesBeforeReturning) {
  start(/*Cache=*/false);
  RecordingKernelTy Kernel(Image, "k", reductionConfig(4, 256));
  ASSERT_FALSE(bool(launch(Kernel, nullptr)));
  EXPECT_TRUE(Kernel.Runs[0].SawEnvironment);
  EXPECT_EQ(liveDevice(), 0u);
}

TEST_F(LaunchEnvironmentTest, EveryLaunchStartsWithZeroCounters) {
  start(/*Cache=*/true);
  RecordingKernelTy Kernel(Image, "k", reductionConfig(4, 256));
  // The kernel leaves the counters dirty, and the cache hands the same
  // blocks out again: the next launch must still see zeros.
  for (int I = 0; I < 3; ++I)
    ASSERT_FALSE(bool(launch(Kernel, nullptr)));
  for (const auto &Run : Kernel.Runs) {
    ASSERT_TRUE(Run.SawEnvironment);
    EXPECT_EQ(Run.Env.ReductionCnt, 0u);
    EXPECT_EQ(Run.Env.ReductionIterCnt, 0u);
  }
  EXPECT_EQ(Kernel.Runs[0].Args[0], Kernel.Runs[2].Args[0])
      << "the small-allocation cache serves launch after launch";
}

TEST_F(LaunchEnvironmentTest, ConcurrentLaunchesHaveTheirOwnMemory) {
  start(/*Cache=*/true);
  RecordingKernelTy Kernel(Image, "k", reductionConfig(8, 128));
  __tgt_async_info A{nullptr}, B{nullptr};
  ASSERT_FALSE(bool(launch(Kernel, &A)));
  ASSERT_FALSE(bool(launch(Kernel, &B)));
  ASSERT_FALSE(bool(Device->synchronize(A)));
  ASSERT_FALSE(bool(Device->synchronize(B)));
  const auto &RA = Kernel.Runs[0], &RB = Kernel.Runs[1];
  EXPECT_NE(RA.Args[0], RB.Args[0]);
  EXPECT_NE(RA.Env.ReductionBuffer, RB.Env.ReductionBuffer);
  EXPECT_EQ(RB.Env.ReductionCnt, 0u);
}

TEST_F(LaunchEnvironmentTest, LargeBuffersBypassTheCacheAndAreFreed) {
  start(/*Cache=*/true);
  // 64 KiB x 4: above the cache's threshold, a vendor allocation.
  RecordingKernelTy Kernel(Image, "k", reductionConfig(64 << 10, 4));
  __tgt_async_info Async{nullptr};
  ASSERT_FALSE(bool(launch(Kernel, &Async)));
  size_t During = liveDevice();
  ASSERT_FALSE(bool(Device->synchronize(Async)));
  EXPECT_EQ(liveDevice(), During - 1) << "the buffer went back to the vendor";
}

TEST_F(LaunchEnvironmentTest, RefusedBufferFailsTheLaunchAndLeaksNothing) {
  start(/*Cache=*/false);
  RecordingKernelTy Kernel(Image, "k", reductionConfig(4, 1024));
  Device->DeviceAllocsLeft = 1; // the environment, not the buffer
  auto Err = launch(Kernel, nullptr);
  ASSERT_TRUE(bool(Err));
  auto Details = takeErrorDetails(std::move(Err));
  EXPECT_EQ(Details.Code, ErrorCode::OutOfResources);
  EXPECT_NE(Details.Message.find("4096 bytes of device memory for a "
                                 "kernel's launch environment on device 0"),
            std::string::npos)
      << Details.Message;
  EXPECT_TRUE(Kernel.Runs.empty()) << "nothing was launched";
  EXPECT_EQ(liveDevice(), 0u) << "the environment went back";
  Device->DeviceAllocsLeft = -1;
  ASSERT_FALSE(bool(launch(Kernel, nullptr)));
  EXPECT_TRUE(Kernel.Runs.at(0).SawEnvironment);
}

TEST_F(LaunchEnvironmentTest, RefusedEnvironmentFailsTheLaunch) {
  start(/*Cache=*/false);
  RecordingKernelTy Kernel(Image, "k", reductionConfig(4, 1024));
  Device->DeviceAllocsLeft = 0;
  auto Err = launch(Kernel, nullptr);
  ASSERT_TRUE(bool(Err));
  EXPECT_EQ(takeErrorDetails(std::move(Err)).Code, ErrorCode::OutOfResources);
  EXPECT_EQ(liveDevice(), 0u);
}

TEST_F(LaunchEnvironmentTest, FailedUploadStillFreesAtSynchronize) {
  Device = std::make_unique<FakeDeviceTy>(Plugin, /*HostAddressable=*/true);
  ScopedEnvTy::set("LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD", "0");
  Device->FailCopies = true;
  ASSERT_FALSE(bool(Device->init()));
  RecordingKernelTy Kernel(Image, "k", reductionConfig(4, 1024));
  ASSERT_TRUE(bool(launch(Kernel, nullptr)));
  EXPECT_TRUE(Kernel.Runs.empty());
  EXPECT_EQ(liveDevice(), 0u);
}

TEST_F(LaunchEnvironmentTest, BackendCapturedUploadIsCorrect) {
  // As on CUDA: the 16 bytes go to the stream directly.
  start(/*Cache=*/false, /*CaptureLimit=*/64 << 10);
  RecordingKernelTy Kernel(Image, "k", reductionConfig(4, 64));
  ASSERT_FALSE(bool(launch(Kernel, nullptr)));
  ASSERT_TRUE(Kernel.Runs[0].SawEnvironment);
  EXPECT_EQ(Kernel.Runs[0].Env.ReductionCnt, 0u);
  EXPECT_NE(Kernel.Runs[0].Env.ReductionBuffer, nullptr);
}

TEST_F(LaunchEnvironmentTest, LockPolicyDoesNotMakeTheLaunchWait) {
  ScopedEnvTy::set("OFFLOADIO_PAGEABLE_PATH", "lock");
  start(/*Cache=*/false);
  RecordingKernelTy Kernel(Image, "k", reductionConfig(4, 64));
  __tgt_async_info Async{nullptr};
  GateTy Gate;
  ASSERT_NO_FATAL_FAILURE(blockStream(Async, Gate));
  // Locking the upload's source would wait for the blocked stream here.
  ASSERT_FALSE(bool(launch(Kernel, &Async)));
  Gate.open();
  ASSERT_FALSE(bool(Device->synchronize(Async)));
  ASSERT_TRUE(Kernel.Runs[0].SawEnvironment);
  EXPECT_EQ(Kernel.Runs[0].Env.ReductionCnt, 0u);
}

TEST_F(LaunchEnvironmentTest, DeinitFreesWhatNobodySynchronized) {
  start(/*Cache=*/true);
  RecordingKernelTy Kernel(Image, "k", reductionConfig(64 << 10, 4));
  __tgt_async_info Async{nullptr};
  ASSERT_FALSE(bool(launch(Kernel, &Async)));
  EXPECT_GT(liveDevice(), 0u);
  // Deinit drains the stream (the kernel's run must be over before the
  // kernel goes) and frees the memory.
  EXPECT_FALSE(bool(Device->deinit()));
  EXPECT_EQ(liveDevice(), 0u);
  EXPECT_TRUE(Kernel.Runs.at(0).SawEnvironment);
  Device.reset();
}

TEST_F(LaunchEnvironmentTest, UnderLibomptarget16NothingIsPrepended) {
  Plugin.setRuntimeABI(*findDeviceRuntimeABI(16));
  start(/*Cache=*/false);
  RecordingKernelTy Kernel(Image, "k", reductionConfig(4, 1024));
  ASSERT_FALSE(bool(launch(Kernel, nullptr, this)));
  ASSERT_EQ(Kernel.Runs[0].Args.size(), 1u);
  EXPECT_EQ(Kernel.Runs[0].Args[0], this);
  EXPECT_EQ(liveDevice(), 0u);
}

/// Counts its runs.
struct CounterTy {
  int Runs = 0;
  static Error bump(void *Data) {
    ++static_cast<CounterTy *>(Data)->Runs;
    return Error::success();
  }
};

TEST(StreamReleaseTest, ReleasesStayWithTheOwnerWhenDeferredWorkMoves) {
  ImmediateStreamTy S;
  CounterTy Deferred, Released;
  S.deferUntilComplete(CounterTy::bump, CounterTy::bump, &Deferred);
  S.releaseWhenComplete(CounterTy::bump, &Released);
  // An event recorded behind the work takes the deferred function onto the
  // stream (a vendor callback there); the release must not go with it.
  ASSERT_FALSE(bool(S.enqueueDeferred()));
  EXPECT_EQ(Deferred.Runs, 1);
  EXPECT_EQ(Released.Runs, 0);
  ASSERT_FALSE(bool(S.runDeferred()));
  EXPECT_EQ(Released.Runs, 1);
  ASSERT_FALSE(bool(S.runDeferred()));
  EXPECT_EQ(Released.Runs, 1) << "once";
}

TEST(StreamReleaseTest, TeardownRunsReleasesAfterCancellingDeferredWork) {
  ImmediateStreamTy S;
  std::vector<int> Order;
  struct StepTy {
    std::vector<int> *Order;
    int Id;
    static Error note(void *Data) {
      auto &S = *static_cast<StepTy *>(Data);
      S.Order->push_back(S.Id);
      return Error::success();
    }
    static Error fail(void *) { return makeError(ErrorCode::Internal, "x"); }
  };
  StepTy Cancel{&Order, 1}, Release{&Order, 2};
  S.releaseWhenComplete(StepTy::note, &Release);
  S.deferUntilComplete(StepTy::fail, StepTy::note, &Cancel);
  ASSERT_FALSE(bool(S.cancelDeferred()));
  EXPECT_EQ(Order, (std::vector<int>{1, 2}));
}

TEST(StreamReleaseTest, AFailedDeferredFunctionStillReleases) {
  ImmediateStreamTy S;
  CounterTy Released;
  S.deferUntilComplete(
      [](void *) -> Error { return makeError(ErrorCode::Internal, "first"); },
      CounterTy::bump, nullptr);
  S.releaseWhenComplete(CounterTy::bump, &Released);
  Error Err = S.runDeferred();
  ASSERT_TRUE(bool(Err));
  EXPECT_EQ(takeErrorMessage(std::move(Err)), "first");
  EXPECT_EQ(Released.Runs, 1);
}

} // namespace

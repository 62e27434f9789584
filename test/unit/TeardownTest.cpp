// SPDX-License-Identifier: Apache-2.0
//
// Teardown after the vendor driver has shut down (TeardownTy), on a fake
// driver whose every call answers ErrorCode::DriverShutDown once it is
// down, as CUDA answers CUDA_ERROR_DEINITIALIZED at a Python interpreter's
// exit and ROCr HSA_STATUS_ERROR_NOT_INITIALIZED after hsa_shut_down:
// draining, deinit, freeing pools and the flush of several devices are
// quiet and successful, ask the driver once and not once per stream,
// block or buffer, and keep the errors that are not the driver's; a
// normal call after the shutdown still fails, saying so.
#include "FakeDevice.h"
#include "TestPinnedPools.h"

#include "offloadio/MemoryManager.h"
#include "offloadio/StagingPool.h"
#include "offloadio/Teardown.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

using namespace offloadio;
using namespace offloadio::unittest;

namespace {

Error shutDownError(const char *Call) {
  return makeError(ErrorCode::DriverShutDown,
                   "{0} failed: the fake driver was shut down", Call);
}

/// The fake vendor driver: up until a test shuts it down; counts the
/// calls that reached it afterwards.
struct FakeDriverTy {
  std::atomic<bool> Down{false};
  std::atomic<unsigned> CallsWhileDown{0};

  /// The answer of a call named \p Call once the driver is down.
  Error refuse(const char *Call) {
    ++CallsWhileDown;
    return shutDownError(Call);
  }
};

/// A stream of the fake driver: complete at once while the driver is up.
class DriverStreamTy final : public ImmediateStreamTy {
public:
  explicit DriverStreamTy(FakeDriverTy &Driver) : Driver(Driver) {}
  Error copyAsync(void *Dst, const void *Src, size_t Size,
                  CopyKindTy Kind) override {
    if (Driver.Down)
      return Driver.refuse("copy");
    return ImmediateStreamTy::copyAsync(Dst, Src, Size, Kind);
  }
  Error synchronize() override {
    if (Driver.Down)
      return Driver.refuse("stream synchronize");
    return ImmediateStreamTy::synchronize();
  }

private:
  FakeDriverTy &Driver;
};

/// FakeDeviceTy on the fake driver: its streams, frees, allocations and
/// backend deinit ask the driver.
class DriverDeviceTy final : public FakeDeviceTy {
public:
  DriverDeviceTy(GenericPluginTy &Plugin, FakeDriverTy &Driver)
      : FakeDeviceTy(Plugin, /*HostAddressable=*/true), Driver(Driver) {}

protected:
  Expected<std::unique_ptr<StreamTy>> createStreamImpl() override {
    if (Driver.Down)
      return Driver.refuse("stream creation");
    return std::make_unique<DriverStreamTy>(Driver);
  }
  Expected<void *> allocateImpl(size_t Size, AllocKindTy Kind) override {
    if (Driver.Down)
      return Driver.refuse("allocation");
    return FakeDeviceTy::allocateImpl(Size, Kind);
  }
  Error freeImpl(void *Ptr, size_t Size, AllocKindTy Kind) override {
    if (Driver.Down)
      return Driver.refuse("free");
    return FakeDeviceTy::freeImpl(Ptr, Size, Kind);
  }
  Error deinitImpl() override {
    if (Driver.Down)
      return Driver.refuse("backend deinit");
    return Error::success();
  }

private:
  FakeDriverTy &Driver;
};

//===----------------------------------------------------------------------===//
// TeardownTy
//===----------------------------------------------------------------------===//

TEST(TeardownTest, KeepsErrorsUntilTheDriverShutsDown) {
  TeardownTy Teardown;
  unsigned Ran = 0;
  Teardown.run([&] {
    ++Ran;
    return makeError(ErrorCode::BackendError, "copy failed");
  });
  EXPECT_FALSE(Teardown.driverGone());
  Teardown.run([&] {
    ++Ran;
    return shutDownError("synchronize");
  });
  EXPECT_TRUE(Teardown.driverGone());
  Teardown.run([&] {
    ++Ran;
    return Error::success();
  });
  EXPECT_EQ(Ran, 2u) << "a step after the driver's answer ran";
  // The error before the shutdown is the program's and is kept; the
  // driver's answer is not.
  ErrorDetailsTy D = takeErrorDetails(Teardown.finish());
  EXPECT_EQ(D.Code, ErrorCode::BackendError);
  EXPECT_EQ(D.Message, "copy failed");
}

TEST(TeardownTest, DriverAnswerInsideJoinedErrorsEndsTheTeardown) {
  TeardownTy Teardown;
  Teardown.add(llvm::joinErrors(shutDownError("a"),
                                makeError(ErrorCode::Busy, "still in use")));
  EXPECT_TRUE(Teardown.driverGone());
  EXPECT_EQ(takeErrorMessage(Teardown.finish()), "still in use");
}

TEST(TeardownTest, ShutDownAloneIsSuccess) {
  TeardownTy Teardown;
  Teardown.add(shutDownError("a"));
  Teardown.add(shutDownError("b"));
  EXPECT_FALSE(bool(Teardown.finish()));
}

TEST(TeardownTest, EnclosingTeardownLearnsOfTheShutdown) {
  TeardownTy Inner;
  Inner.add(shutDownError("first"));
  Inner.add(shutDownError("second"));
  TeardownTy Outer;
  Outer.add(Inner.takeForEnclosing());
  EXPECT_TRUE(Outer.driverGone());
  EXPECT_FALSE(bool(Outer.finish()));

  TeardownTy Alone;
  Alone.add(shutDownError("first"));
  ErrorDetailsTy D = takeErrorDetails(Alone.takeForEnclosing());
  EXPECT_EQ(D.Code, ErrorCode::DriverShutDown);
  EXPECT_EQ(D.Message, "first failed: the fake driver was shut down");
}

TEST(TeardownTest, OnlyTheDriverAnswerOfAWaitCounts) {
  TeardownTy Teardown;
  Teardown.addDriverAnswerOnly(
      makeError(ErrorCode::BackendError, "a copy failed"));
  EXPECT_FALSE(Teardown.driverGone());
  Teardown.addDriverAnswerOnly(shutDownError("event synchronize"));
  EXPECT_TRUE(Teardown.driverGone());
  EXPECT_FALSE(bool(Teardown.finish()));
}

TEST(TeardownTest, DriverShutDownIsENODEV) {
  EXPECT_EQ(errnoFor(ErrorCode::DriverShutDown), ENODEV);
  EXPECT_STREQ(describe(ErrorCode::DriverShutDown),
               "the vendor driver has shut down");
}

//===----------------------------------------------------------------------===//
// Pools
//===----------------------------------------------------------------------===//

/// A block allocator of the fake driver; frees at its end what the driver
/// kept.
class DriverBlocksTy final : public BlockAllocatorTy {
public:
  explicit DriverBlocksTy(FakeDriverTy &Driver) : Driver(Driver) {}
  ~DriverBlocksTy() override {
    for (void *Ptr : Live)
      std::free(Ptr);
  }
  Expected<void *> allocateBlock(size_t Size) override {
    void *Ptr = std::malloc(Size);
    Live.insert(Ptr);
    return Ptr;
  }
  Error freeBlock(void *Ptr) override {
    if (Driver.Down)
      return Driver.refuse("free");
    Live.erase(Ptr);
    std::free(Ptr);
    return Error::success();
  }

private:
  FakeDriverTy &Driver;
  std::set<void *> Live;
};

TEST(TeardownTest, MemoryManagerStopsAtTheFirstAnswer) {
  FakeDriverTy Driver;
  DriverBlocksTy Blocks(Driver);
  {
    MemoryManagerTy Manager(Blocks, 1 << 16);
    std::vector<void *> Cached;
    for (size_t Size : {64, 512, 4096, 32768}) {
      auto Ptr = Manager.allocate(Size);
      ASSERT_TRUE(bool(Ptr)) << takeErrorMessage(Ptr.takeError());
      Cached.push_back(*Ptr);
    }
    for (void *Ptr : Cached) {
      auto Kept = Manager.free(Ptr);
      ASSERT_TRUE(Kept && *Kept) << takeErrorMessage(Kept.takeError());
    }
    ASSERT_EQ(Manager.cachedBlocks(), 4u);
    Driver.Down = true;
    // Alone, the answer is returned, for a caller that is a teardown too.
    EXPECT_EQ(takeErrorCode(Manager.releaseAll()), ErrorCode::DriverShutDown);
    EXPECT_EQ(Driver.CallsWhileDown, 1u);
    EXPECT_EQ(Manager.cachedBlocks(), 0u);
  }
  // The manager's destructor asked nothing more.
  EXPECT_EQ(Driver.CallsWhileDown, 1u);
}

TEST(TeardownTest, MemoryManagerInAShutDownTeardownAsksNothing) {
  FakeDriverTy Driver;
  DriverBlocksTy Blocks(Driver);
  MemoryManagerTy Manager(Blocks, 1 << 16);
  auto Ptr = Manager.allocate(64);
  ASSERT_TRUE(bool(Ptr)) << takeErrorMessage(Ptr.takeError());
  auto Kept = Manager.free(*Ptr);
  ASSERT_TRUE(Kept && *Kept);
  Driver.Down = true;
  TeardownTy Teardown;
  Teardown.add(shutDownError("stream synchronize"));
  Manager.releaseAll(Teardown);
  EXPECT_FALSE(bool(Teardown.finish()));
  EXPECT_EQ(Driver.CallsWhileDown, 0u);
  EXPECT_EQ(Manager.cachedBlocks(), 0u);
}

TEST(TeardownTest, StagingPoolStopsAtTheFirstAnswer) {
  FakeDriverTy Driver;
  std::vector<void *> Held;
  TestPinnedPoolsTy Pools;
  PinnedBudgetTy Budget(UINT64_MAX);
  PinnedPoolTy &Pinned = Pools.make(
      [&](size_t Size) -> Expected<void *> {
        void *Ptr = std::malloc(Size);
        Held.push_back(Ptr);
        return Ptr;
      },
      [&](void *Ptr) -> Error {
        if (Driver.Down)
          return Driver.refuse("free of pinned memory");
        Held.erase(std::find(Held.begin(), Held.end(), Ptr));
        std::free(Ptr);
        return Error::success();
      },
      &Budget);
  {
    StagingPoolTy Staging(4096, 4, Pinned, "a test buffer");
    std::vector<StagingBufferTy *> Buffers;
    for (int I = 0; I < 4; ++I) {
      auto Buffer = Staging.acquire();
      ASSERT_TRUE(bool(Buffer)) << takeErrorMessage(Buffer.takeError());
      Buffers.push_back(*Buffer);
    }
    for (StagingBufferTy *Buffer : Buffers)
      Staging.release(Buffer);
    ASSERT_EQ(Staging.allocated(), 4u);
    Driver.Down = true;
    EXPECT_EQ(takeErrorCode(Staging.clear()), ErrorCode::DriverShutDown);
    EXPECT_EQ(Driver.CallsWhileDown, 1u);
    EXPECT_EQ(Staging.allocated(), 0u);
  }
  EXPECT_EQ(Driver.CallsWhileDown, 1u);
  // The bytes of every buffer went back to the budget.
  EXPECT_EQ(Budget.getStats().Used, 0u);
  for (void *Ptr : Held)
    std::free(Ptr);
}

//===----------------------------------------------------------------------===//
// Devices
//===----------------------------------------------------------------------===//

constexpr unsigned NumStreams = 16;

class TeardownDeviceTest : public ::testing::Test {
protected:
  void SetUp() override {
    setenv("LIBOMPTARGET_NUM_INITIAL_STREAMS",
           std::to_string(NumStreams).c_str(), 1);
    setenv("OFFLOADIO_STAGING_BUFFER_SIZE", "4096", 1);
    ASSERT_FALSE(bool(Plugin.init()));
    Device = std::make_unique<DriverDeviceTy>(Plugin, Driver);
    ASSERT_FALSE(bool(Device->init()));
  }
  void TearDown() override {
    unsetenv("LIBOMPTARGET_NUM_INITIAL_STREAMS");
    unsetenv("OFFLOADIO_STAGING_BUFFER_SIZE");
  }

  /// Leave work of every kind behind: a user allocation, a block cached
  /// by the memory manager, staging buffers, busy streams.
  void leaveWork() {
    char *Big = Device->alloc(1 << 20);
    char *Small = Device->alloc(256);
    ASSERT_TRUE(Big && Small);
    std::vector<char> Host(64 << 10, 'x');
    ASSERT_FALSE(bool(Device->dataSubmit(Big, Host.data(),
                                         int64_t(Host.size()), nullptr)));
    Device->release(Small);
  }

  FakeDriverTy Driver;
  FakePluginTy Plugin;
  std::unique_ptr<DriverDeviceTy> Device;
};

TEST_F(TeardownDeviceTest, DrainAfterShutdownIsQuietAndAsksOnce) {
  leaveWork();
  Driver.Down = true;
  testing::internal::CaptureStderr();
  Error Err = Device->drain();
  std::string Printed = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(bool(Err)) << takeErrorMessage(std::move(Err));
  EXPECT_EQ(Printed, "");
  // One stream asked; the other fifteen were not.
  EXPECT_EQ(Driver.CallsWhileDown, 1u);
  EXPECT_FALSE(bool(Device->deinit()));
}

TEST_F(TeardownDeviceTest, DeinitAfterShutdownIsQuietAndAsksOnce) {
  leaveWork();
  Driver.Down = true;
  testing::internal::CaptureStderr();
  Error Err = Device->deinit();
  std::string Printed = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(bool(Err)) << takeErrorMessage(std::move(Err));
  EXPECT_EQ(Printed, "");
  EXPECT_EQ(Driver.CallsWhileDown, 1u);
}

TEST_F(TeardownDeviceTest, FlushOfSeveralDevicesAsksOnce) {
  DriverDeviceTy Second(Plugin, Driver);
  ASSERT_FALSE(bool(Second.init()));
  leaveWork();
  Driver.Down = true;
  // What GenericPluginTy::flush does for every device it has.
  TeardownTy Teardown;
  for (GenericDeviceTy *D : {static_cast<GenericDeviceTy *>(Device.get()),
                             static_cast<GenericDeviceTy *>(&Second)}) {
    D->runImageDestructors(Teardown);
    D->drain(Teardown);
  }
  EXPECT_FALSE(bool(Teardown.finish()));
  EXPECT_EQ(Driver.CallsWhileDown, 1u);
  EXPECT_FALSE(bool(Second.deinit()));
  EXPECT_FALSE(bool(Device->deinit()));
}

TEST_F(TeardownDeviceTest, OtherErrorsOfTheDrainAreKept) {
  // The driver is up: a failure of the program's work is still reported.
  EXPECT_FALSE(bool(Device->drain()));
  Driver.Down = true;
  TeardownTy Teardown;
  Teardown.add(makeError(ErrorCode::BackendError, "kernel failed"));
  Device->drain(Teardown);
  EXPECT_EQ(takeErrorMessage(Teardown.finish()), "kernel failed");
  EXPECT_FALSE(bool(Device->deinit()));
}

TEST_F(TeardownDeviceTest, NormalCallAfterShutdownFailsSayingSo) {
  char *Ptr = Device->alloc(1 << 20);
  ASSERT_TRUE(Ptr);
  Driver.Down = true;
  // Outside a teardown the answer is an error like any other.
  auto Alloc = Device->dataAlloc(1 << 20, nullptr, AllocKindTy::Device);
  ASSERT_FALSE(bool(Alloc));
  ErrorDetailsTy D = takeErrorDetails(Alloc.takeError());
  EXPECT_EQ(D.Code, ErrorCode::DriverShutDown);
  EXPECT_NE(D.Message.find("shut down"), std::string::npos) << D.Message;
  EXPECT_EQ(errnoFor(D), ENODEV);

  Error Freed = Device->dataDelete(Ptr, AllocKindTy::Device);
  EXPECT_EQ(takeErrorCode(std::move(Freed)), ErrorCode::DriverShutDown);

  __tgt_async_info AsyncInfo{};
  std::vector<char> Host(4096, 'y');
  Error Copy = Device->dataSubmit(Ptr, Host.data(), int64_t(Host.size()),
                                  &AsyncInfo);
  if (!Copy && AsyncInfo.Queue)
    Copy = Device->synchronize(AsyncInfo);
  ASSERT_TRUE(bool(Copy));
  std::string Message = takeErrorMessage(std::move(Copy));
  EXPECT_NE(Message.find("shut down"), std::string::npos) << Message;
  // The teardown that follows is quiet.
  EXPECT_FALSE(bool(Device->deinit()));
}

} // namespace

// SPDX-License-Identifier: Apache-2.0
//
// Allocation failures under GenericDeviceTy, injected through the backend
// seam of FakeDevice.h: device memory refused for data_alloc (large, and
// small through the memory manager), pinned host memory refused for
// data_alloc(HOST) and for the bounce buffers of staged copies, and pinning
// refused for a mapping whose lock is mandatory. Each ends in an error that
// names the size and the device, frees what was allocated on the way, and
// leaves the device working once memory is back.
#include "FakeDevice.h"

#include "offloadio/DeviceRuntimeABI.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <cstring>
#include <vector>

using namespace offloadio;
using namespace offloadio::unittest;

namespace {

class DeviceFaultTest : public ::testing::Test {
protected:
  void SetUp() override {
    // Small bounce buffers: copies span several of them.
    setenv("OFFLOADIO_STAGING_BUFFER_SIZE", "4096", 1);
    setenv("OFFLOADIO_STAGING_BUFFERS", "4", 1);
    ASSERT_FALSE(bool(Plugin.init()));
    Device = std::make_unique<FakeDeviceTy>(Plugin, /*HostAddressable=*/true);
    ASSERT_FALSE(bool(Device->init()));
  }
  void TearDown() override {
    if (Device) {
      EXPECT_FALSE(bool(Device->deinit()));
      // Everything the device allocated went back with deinit.
      EXPECT_EQ(Device->live(AllocKindTy::Device), 0u);
      EXPECT_EQ(Device->live(AllocKindTy::Host), 0u);
    }
    unsetenv("OFFLOADIO_STAGING_BUFFER_SIZE");
    unsetenv("OFFLOADIO_STAGING_BUFFERS");
    unsetenv("LIBOMPTARGET_LOCK_MAPPED_HOST_BUFFERS");
  }

  FakePluginTy Plugin;
  std::unique_ptr<FakeDeviceTy> Device;
};

ErrorDetailsTy detailsOf(Expected<void *> V) {
  EXPECT_FALSE(bool(V));
  return V ? ErrorDetailsTy() : takeErrorDetails(V.takeError());
}

TEST_F(DeviceFaultTest, DeviceAllocationRefused) {
  Device->DeviceAllocsLeft = 0;
  // Above the memory manager's threshold: straight to the backend.
  ErrorDetailsTy D = detailsOf(Device->dataAlloc(1 << 20, nullptr,
                                                 AllocKindTy::Device));
  EXPECT_EQ(D.Code, ErrorCode::OutOfResources);
  EXPECT_NE(D.Message.find("1048576 bytes of device memory on device 0"),
            std::string::npos)
      << D.Message;
  // Small: the memory manager's block allocation is refused.
  D = detailsOf(Device->dataAlloc(64, nullptr, AllocKindTy::Default));
  EXPECT_EQ(D.Code, ErrorCode::OutOfResources) << D.Message;
  EXPECT_NE(D.Message.find("on device 0"), std::string::npos) << D.Message;
  EXPECT_EQ(Device->live(AllocKindTy::Device), 0u);
  // Later: two succeed, the third is refused, the two stay good.
  Device->DeviceAllocsLeft = 2;
  auto A = Device->dataAlloc(1 << 20, nullptr, AllocKindTy::Device);
  auto B = Device->dataAlloc(1 << 20, nullptr, AllocKindTy::Device);
  ASSERT_TRUE(A && B);
  D = detailsOf(Device->dataAlloc(1 << 20, nullptr, AllocKindTy::Device));
  EXPECT_EQ(D.Code, ErrorCode::OutOfResources);
  std::memset(*A, 1, 1 << 20);
  EXPECT_FALSE(bool(Device->dataDelete(*A, AllocKindTy::Device)));
  EXPECT_FALSE(bool(Device->dataDelete(*B, AllocKindTy::Device)));
  // Memory is back.
  Device->DeviceAllocsLeft = -1;
  auto C = Device->dataAlloc(64, nullptr, AllocKindTy::Default);
  ASSERT_TRUE(bool(C)) << takeErrorMessage(C.takeError());
  EXPECT_FALSE(bool(Device->dataDelete(*C, AllocKindTy::Default)));
}

TEST_F(DeviceFaultTest, PinnedHostAllocationRefused) {
  Device->PinnedAllocsLeft = 0;
  ErrorDetailsTy D =
      detailsOf(Device->dataAlloc(8192, nullptr, AllocKindTy::Host));
  EXPECT_EQ(D.Code, ErrorCode::OutOfResources);
  EXPECT_NE(D.Message.find("8192 bytes of host memory on device 0"),
            std::string::npos)
      << D.Message;
  Device->PinnedAllocsLeft = -1;
  auto P = Device->dataAlloc(8192, nullptr, AllocKindTy::Host);
  ASSERT_TRUE(bool(P)) << takeErrorMessage(P.takeError());
  // Registered as runtime-pinned, and unregistered when freed.
  EXPECT_TRUE(Plugin.getPinnedMap().lookup(*P).has_value());
  EXPECT_FALSE(bool(Device->dataDelete(*P, AllocKindTy::Default)));
  EXPECT_FALSE(Plugin.getPinnedMap().lookup(*P).has_value());
}

TEST_F(DeviceFaultTest, StagedCopiesWhenBounceBuffersAreRefused) {
  const size_t Size = 5 * 4096 + 100;
  auto Tgt = Device->dataAlloc(Size, nullptr, AllocKindTy::Device);
  ASSERT_TRUE(bool(Tgt));
  std::vector<char> Host(Size), Back(Size);
  for (size_t I = 0; I < Size; ++I)
    Host[I] = char(I * 13 + 1);
  // At first use: nothing can be staged.
  Device->PinnedAllocsLeft = 0;
  Error Err = Device->dataSubmit(*Tgt, Host.data(), Size, nullptr);
  ASSERT_TRUE(bool(Err));
  ErrorDetailsTy D = takeErrorDetails(std::move(Err));
  EXPECT_EQ(D.Code, ErrorCode::OutOfResources);
  EXPECT_NE(D.Message.find("4096 bytes of host memory on device 0"),
            std::string::npos)
      << D.Message;
  EXPECT_EQ(takeErrorCode(Device->dataRetrieve(Back.data(), *Tgt, Size,
                                               nullptr)),
            ErrorCode::OutOfResources);
  // Later: one buffer, then refusals. Whether a copy fails depends on
  // whether that buffer comes back in time; it must end either way.
  Device->PinnedAllocsLeft = 1;
  for (int Round = 0; Round < 20; ++Round) {
    llvm::consumeError(Device->dataSubmit(*Tgt, Host.data(), Size, nullptr));
    llvm::consumeError(
        Device->dataRetrieve(Back.data(), *Tgt, Size, nullptr));
  }
  // Memory is back: exact round trip.
  Device->PinnedAllocsLeft = -1;
  ASSERT_FALSE(bool(Device->dataSubmit(*Tgt, Host.data(), Size, nullptr)));
  ASSERT_FALSE(bool(Device->dataRetrieve(Back.data(), *Tgt, Size, nullptr)));
  EXPECT_EQ(Host, Back);
  EXPECT_EQ(std::memcmp(*Tgt, Host.data(), Size), 0);
  EXPECT_FALSE(bool(Device->dataDelete(*Tgt, AllocKindTy::Device)));
}

TEST_F(DeviceFaultTest, MandatoryMappedLockRefusedFreesTheAllocation) {
  // Plugin settings are read at its init: a fresh plugin and device.
  EXPECT_FALSE(bool(Device->deinit()));
  Device.reset();
  setenv("LIBOMPTARGET_LOCK_MAPPED_HOST_BUFFERS", "mandatory", 1);
  FakePluginTy Mandatory;
  // libomptarget 16 names the mapped buffer in data_alloc (17 and 18:
  // MandatoryMappedLockRefusedFailsTheMapNotice).
  Mandatory.setRuntimeABI(*findDeviceRuntimeABI(16));
  ASSERT_FALSE(bool(Mandatory.init()));
  FakeDeviceTy Dev(Mandatory, true);
  ASSERT_FALSE(bool(Dev.init()));
  std::vector<char> Host(1 << 20);
  Mandatory.FailPins = true;
  auto P = Dev.dataAlloc(1 << 20, Host.data(), AllocKindTy::Default);
  ASSERT_FALSE(bool(P));
  ErrorDetailsTy D = takeErrorDetails(P.takeError());
  EXPECT_NE(D.Message.find("fake pin of 1048576 bytes"), std::string::npos)
      << D.Message;
  EXPECT_EQ(Dev.live(AllocKindTy::Device), 0u) << "the device memory leaked";
  Mandatory.FailPins = false;
  P = Dev.dataAlloc(1 << 20, Host.data(), AllocKindTy::Default);
  ASSERT_TRUE(bool(P)) << takeErrorMessage(P.takeError());
  EXPECT_TRUE(Mandatory.getPinnedMap().lookup(Host.data()).has_value());
  EXPECT_FALSE(bool(Dev.dataDelete(*P, AllocKindTy::Default)));
  EXPECT_FALSE(Mandatory.getPinnedMap().lookup(Host.data()).has_value());
  EXPECT_FALSE(bool(Dev.deinit()));
  EXPECT_EQ(Dev.live(AllocKindTy::Device), 0u);
}

TEST_F(DeviceFaultTest, MandatoryMappedLockRefusedFailsTheMapNotice) {
  EXPECT_FALSE(bool(Device->deinit()));
  Device.reset();
  setenv("LIBOMPTARGET_LOCK_MAPPED_HOST_BUFFERS", "mandatory", 1);
  for (unsigned Version : {17u, 18u}) {
    // libomptarget 17 and 18 name the mapped buffer in data_notify_mapped,
    // after data_alloc, which locks nothing.
    FakePluginTy Mandatory;
    Mandatory.setRuntimeABI(*findDeviceRuntimeABI(Version));
    ASSERT_FALSE(bool(Mandatory.init()));
    FakeDeviceTy Dev(Mandatory, true);
    ASSERT_FALSE(bool(Dev.init()));
    std::vector<char> Host(1 << 20);
    Mandatory.FailPins = true;
    auto P = Dev.dataAlloc(1 << 20, Host.data(), AllocKindTy::Default);
    ASSERT_TRUE(bool(P)) << Version << ": " << takeErrorMessage(P.takeError());
    EXPECT_FALSE(Mandatory.getPinnedMap().lookup(Host.data()).has_value());
    ErrorDetailsTy D =
        takeErrorDetails(Dev.notifyDataMapped(Host.data(), Host.size()));
    EXPECT_NE(D.Message.find("fake pin of 1048576 bytes"), std::string::npos)
        << Version << ": " << D.Message;
    EXPECT_FALSE(Mandatory.getPinnedMap().lookup(Host.data()).has_value());
    Mandatory.FailPins = false;
    EXPECT_FALSE(bool(Dev.notifyDataMapped(Host.data(), Host.size())));
    EXPECT_TRUE(Mandatory.getPinnedMap().lookup(Host.data()).has_value());
    EXPECT_FALSE(bool(Dev.notifyDataUnmapped(Host.data())));
    EXPECT_FALSE(Mandatory.getPinnedMap().lookup(Host.data()).has_value());
    EXPECT_FALSE(bool(Dev.dataDelete(*P, AllocKindTy::Default)));
    EXPECT_FALSE(bool(Dev.deinit()));
    EXPECT_EQ(Dev.live(AllocKindTy::Device), 0u) << Version;
  }
}

} // namespace

// SPDX-License-Identifier: Apache-2.0
//
// The framework's books of the program's allocations (dataAlloc /
// dataDelete) over the fake backend: a free names any kind and frees the
// memory as it was allocated; frees of unknown, interior or already freed
// pointers fail and leave the memory as it was, as does a free the backend
// fails (the program may free it again); the framework's own pinned
// buffers are not the program's allocations.
#include "FakeDevice.h"

#include "gtest/gtest.h"

using namespace offloadio;
using namespace offloadio::unittest;

namespace {

const AllocKindTy Kinds[] = {AllocKindTy::Device, AllocKindTy::Host,
                             AllocKindTy::Shared, AllocKindTy::Default};

class FreeKindTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(bool(Plugin.init()));
    Device = std::make_unique<FakeDeviceTy>(Plugin, /*HostAddressable=*/true);
    ASSERT_FALSE(bool(Device->init()));
  }
  void TearDown() override { EXPECT_FALSE(bool(Device->deinit())); }

  void *alloc(size_t Size, AllocKindTy Kind) {
    auto P = Device->dataAlloc(int64_t(Size), nullptr, Kind);
    EXPECT_TRUE(bool(P)) << llvm::toString(P.takeError());
    return P ? *P : nullptr;
  }
  static ErrorCode codeOf(Error Err) {
    return takeErrorDetails(std::move(Err)).Code;
  }

  FakePluginTy Plugin;
  std::unique_ptr<FakeDeviceTy> Device;
};

TEST_F(FreeKindTest, AnyKindNamedFreesTheAllocation) {
  // Small sizes come from the allocation cache, large ones from the
  // backend; both follow the same rule.
  for (size_t Size : {size_t(64), size_t(1) << 20})
    for (AllocKindTy Allocated : Kinds)
      for (AllocKindTy Named : Kinds) {
        void *P = alloc(Size, Allocated);
        ASSERT_NE(P, nullptr);
        // The fake vendor's view, then the program's registry.
        ASSERT_TRUE(Device->findAllocation(P).has_value());
        ASSERT_TRUE(Device->GenericDeviceTy::findAllocation(P).has_value());
        EXPECT_EQ(Device->GenericDeviceTy::findAllocation(P)->Kind, Allocated);
        EXPECT_FALSE(bool(Device->dataDelete(P, Named)))
            << allocKindName(Allocated) << " freed as "
            << allocKindName(Named) << ", " << Size << " bytes";
        EXPECT_FALSE(Device->GenericDeviceTy::findAllocation(P).has_value());
        EXPECT_EQ(Plugin.getPinnedMap().size(), 0u)
            << "host memory stayed registered after its free";
      }
  EXPECT_EQ(Device->getAllocationUsage().first, 0u);
}

TEST_F(FreeKindTest, HostMemoryFreedAsDefaultLeavesThePinnedMap) {
  void *P = alloc(8192, AllocKindTy::Host);
  ASSERT_NE(P, nullptr);
  PinnedSegmentTy Seg;
  ASSERT_EQ(Plugin.getPinnedMap().segments(P, 8192, &Seg, 1), 1u);
  EXPECT_NE(Seg.DevAccessiblePtr, nullptr) << "host memory is registered";
  size_t PinnedBefore = Device->live(AllocKindTy::Host);
  EXPECT_FALSE(bool(Device->dataDelete(P, AllocKindTy::Default)));
  EXPECT_EQ(Device->live(AllocKindTy::Host), PinnedBefore - 1);
  EXPECT_EQ(Plugin.getPinnedMap().segments(P, 8192, &Seg, 1), 1u);
  EXPECT_EQ(Seg.DevAccessiblePtr, nullptr) << "the registration went";
  // A fresh host allocation at whatever address registers again without
  // an overlap with a stale entry.
  void *Q = alloc(8192, AllocKindTy::Host);
  ASSERT_NE(Q, nullptr);
  EXPECT_FALSE(bool(Device->dataDelete(Q, AllocKindTy::Host)));
}

TEST_F(FreeKindTest, RefusedFreesLeaveTheMemory) {
  for (AllocKindTy Kind : Kinds) {
    char *P = static_cast<char *>(alloc(1 << 20, Kind));
    ASSERT_NE(P, nullptr);
    EXPECT_EQ(codeOf(Device->dataDelete(P + 64, Kind)),
              ErrorCode::InvalidArgument)
        << allocKindName(Kind);
    EXPECT_TRUE(Device->GenericDeviceTy::findAllocation(P).has_value());
    EXPECT_FALSE(bool(Device->dataDelete(P, Kind)));
    EXPECT_EQ(codeOf(Device->dataDelete(P, Kind)), ErrorCode::NotFound)
        << "second free of " << allocKindName(Kind) << " memory";
  }
  int Stack = 0;
  EXPECT_EQ(codeOf(Device->dataDelete(&Stack, AllocKindTy::Host)),
            ErrorCode::NotFound);
  EXPECT_EQ(codeOf(Device->dataDelete(&Stack, AllocKindTy::Default)),
            ErrorCode::NotFound);
}

TEST_F(FreeKindTest, InternalPinnedBuffersAreNotTheProgramsMemory) {
  auto P = Device->allocatePinnedHost(1 << 16);
  ASSERT_TRUE(bool(P)) << llvm::toString(P.takeError());
  EXPECT_FALSE(Device->GenericDeviceTy::findAllocation(*P).has_value());
  EXPECT_EQ(Device->bytesAvailableFrom(*P), SIZE_MAX);
  EXPECT_EQ(Device->getAllocationUsage().first, 0u);
  for (AllocKindTy Kind : Kinds)
    EXPECT_EQ(codeOf(Device->dataDelete(*P, Kind)), ErrorCode::NotFound)
        << allocKindName(Kind);
  EXPECT_FALSE(bool(Device->freePinnedHost(*P)));
  EXPECT_EQ(codeOf(Device->freePinnedHost(*P)), ErrorCode::NotFound)
      << "a pinned buffer freed twice";
}

} // namespace

TEST(FreeKindRetryTest, AFailedVendorFreeLeavesTheAllocationToFreeAgain) {
  FakePluginTy Plugin;
  ASSERT_FALSE(bool(Plugin.init()));
  FakeDeviceTy Device(Plugin, /*HostAddressable=*/true);
  ASSERT_FALSE(bool(Device.init()));
  // Large enough to bypass the allocation cache: the backend frees it.
  const size_t Size = size_t(1) << 20;
  for (AllocKindTy Kind : Kinds) {
    auto P = Device.dataAlloc(int64_t(Size), nullptr, Kind);
    ASSERT_TRUE(bool(P)) << llvm::toString(P.takeError());
    Device.FailFrees = true;
    Error Err = Device.dataDelete(*P, Kind);
    ASSERT_TRUE(bool(Err)) << allocKindName(Kind);
    std::string Message = takeErrorMessage(std::move(Err));
    EXPECT_NE(Message.find("fake free of"), std::string::npos) << Message;
    // Still the program's: owned, found, and freed by the retry.
    EXPECT_TRUE(Device.findAllocation(*P).has_value());
    EXPECT_TRUE(Device.GenericDeviceTy::findAllocation(*P).has_value())
        << allocKindName(Kind);
    EXPECT_EQ(Plugin.getPinnedMap().size(), Kind == AllocKindTy::Host ? 1u : 0u)
        << allocKindName(Kind) << " memory lost its registration";
    Device.FailFrees = false;
    Error Retry = Device.dataDelete(*P, Kind);
    EXPECT_FALSE(bool(Retry)) << allocKindName(Kind) << ": "
                              << takeErrorMessage(std::move(Retry));
    EXPECT_FALSE(Device.GenericDeviceTy::findAllocation(*P).has_value());
    EXPECT_EQ(Plugin.getPinnedMap().size(), 0u);
  }
  EXPECT_FALSE(bool(Device.deinit()));
}

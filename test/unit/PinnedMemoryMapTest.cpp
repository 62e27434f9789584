// SPDX-License-Identifier: Apache-2.0
//
// Rules of the plugin-wide pinned memory map, one test each, then a
// randomised differential test against a linear reference model. Host
// addresses are made up: the map never dereferences them.
#include "offloadio/PinnedMemoryMap.h"

#include "PinnedMemoryModel.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

using namespace offloadio;

namespace {

/// Device addresses are host addresses plus this, so that a map returning
/// the host pointer where a device one is due gets caught.
constexpr uintptr_t DevAlias = 0x100000000000;
/// External registrations use a different alias, so that a region's address
/// cannot be confused with what the fake backend would have returned.
constexpr uintptr_t ExtAlias = 0x200000000000;

constexpr uintptr_t Base = 0x7f0000010000;

void *ptr(uintptr_t Addr) { return reinterpret_cast<void *>(Addr); }
uintptr_t addr(const void *Ptr) { return reinterpret_cast<uintptr_t>(Ptr); }

/// Same format as the map's messages, to check that they name the ranges.
std::string range(uintptr_t Start, uintptr_t Size) {
  return llvm::formatv("[{0:x}, {1:x}) ({2} bytes)", Start, Start + Size, Size)
      .str();
}
std::string hex(uintptr_t Addr) { return llvm::formatv("{0:x}", Addr).str(); }

/// The shared fake backend, handing out host addresses plus DevAlias.
class FakeOpsTy : public test::FakePinningOpsTy {
public:
  FakeOpsTy() : FakePinningOpsTy(DevAlias) {}
};

/// Consume an error, returning its code and storing its message.
ErrorCode codeOf(Error Err, std::string *Msg = nullptr) {
  if (!Err)
    return ErrorCode::Success;
  ErrorCode Code = ErrorCode::Internal;
  llvm::handleAllErrors(std::move(Err), [&](const OffloadErrorTy &E) {
    Code = E.getCode();
    if (Msg)
      *Msg = E.getMessage();
  });
  return Code;
}

template <typename T>
ErrorCode codeOf(Expected<T> &&ValOrErr, std::string *Msg = nullptr) {
  if (ValOrErr)
    return ErrorCode::Success;
  return codeOf(ValOrErr.takeError(), Msg);
}

/// Lock and expect success, returning the device pointer as an integer.
uintptr_t lockOk(PinnedMemoryMapTy &Map, uintptr_t Start, size_t Size) {
  Expected<void *> DevOrErr = Map.lock(ptr(Start), Size);
  if (!DevOrErr) {
    ADD_FAILURE() << "lock " << range(Start, Size)
                  << " failed: " << takeErrorMessage(DevOrErr.takeError());
    return 0;
  }
  return addr(*DevOrErr);
}

class PinnedMemoryMapTest : public ::testing::Test {
protected:
  void TearDown() override {
    EXPECT_TRUE(Ops.Violations.empty())
        << "first violation: " << Ops.Violations.front();
  }

  FakeOpsTy Ops;
  PinnedMemoryMapTy Map{Ops};
};

TEST_F(PinnedMemoryMapTest, NewRangeIsPinnedExactly) {
  EXPECT_EQ(lockOk(Map, Base + 3, 0x1001), Base + 3 + DevAlias);
  ASSERT_EQ(Ops.Calls.size(), 1u);
  EXPECT_TRUE(Ops.Calls[0].IsPin);
  EXPECT_EQ(Ops.Calls[0].HstPtr, Base + 3);
  EXPECT_EQ(Ops.Calls[0].Size, 0x1001u);

  std::optional<PinnedRegionInfoTy> Info = Map.lookup(ptr(Base + 0x500));
  ASSERT_TRUE(Info);
  EXPECT_EQ(addr(Info->HstPtr), Base + 3);
  EXPECT_EQ(addr(Info->DevAccessiblePtr), Base + 3 + DevAlias);
  EXPECT_EQ(Info->Size, 0x1001u);
  EXPECT_EQ(Info->References, 1u);
  EXPECT_FALSE(Info->External);
  EXPECT_EQ(Map.size(), 1u);

  // Exact bytes: neither the byte before nor the exclusive end is inside.
  EXPECT_FALSE(Map.lookup(ptr(Base + 2)));
  EXPECT_FALSE(Map.lookup(ptr(Base + 3 + 0x1001)));
  EXPECT_TRUE(Map.lookup(ptr(Base + 3 + 0x1000)));
}

TEST_F(PinnedMemoryMapTest, ContainedSubBufferSharesItsContainer) {
  lockOk(Map, Base, 0x1000);
  EXPECT_EQ(lockOk(Map, Base + 0x100, 0x10), Base + 0x100 + DevAlias);
  // Touching the container's last byte is still inside.
  EXPECT_EQ(lockOk(Map, Base + 0xff0, 0x10), Base + 0xff0 + DevAlias);
  // Starting at the container's start but shorter is inside too.
  EXPECT_EQ(lockOk(Map, Base, 0x20), Base + DevAlias);
  EXPECT_EQ(Ops.numPins(), 1u);
  EXPECT_EQ(Map.lookup(ptr(Base))->References, 4u);
  EXPECT_EQ(Map.size(), 1u);

  // Sub-buffers are released by their own pointers.
  EXPECT_FALSE(Map.unlock(ptr(Base + 0x100)));
  EXPECT_FALSE(Map.unlock(ptr(Base + 0xff0)));
  EXPECT_FALSE(Map.unlock(ptr(Base)));
  EXPECT_EQ(Ops.numUnpins(), 0u);
  EXPECT_FALSE(Map.unlock(ptr(Base)));
  EXPECT_EQ(Ops.numUnpins(), 1u);
  EXPECT_EQ(Map.size(), 0u);
}

TEST_F(PinnedMemoryMapTest, IdenticalRangeTwiceThenUnlockThrice) {
  EXPECT_EQ(lockOk(Map, Base, 0x2000), Base + DevAlias);
  EXPECT_EQ(lockOk(Map, Base, 0x2000), Base + DevAlias);
  EXPECT_EQ(Ops.numPins(), 1u);
  EXPECT_EQ(Map.lookup(ptr(Base))->References, 2u);

  EXPECT_FALSE(Map.unlock(ptr(Base)));
  EXPECT_EQ(Ops.numUnpins(), 0u);
  EXPECT_EQ(Map.lookup(ptr(Base))->References, 1u);

  EXPECT_FALSE(Map.unlock(ptr(Base)));
  ASSERT_EQ(Ops.numUnpins(), 1u);
  const FakeOpsTy::CallTy &Unpin = Ops.Calls.back();
  EXPECT_EQ(Unpin.HstPtr, Base);
  EXPECT_EQ(Unpin.DevPtr, Base + DevAlias);
  EXPECT_EQ(Unpin.Size, 0x2000u);

  std::string Msg;
  EXPECT_EQ(codeOf(Map.unlock(ptr(Base)), &Msg), ErrorCode::NotFound);
  EXPECT_NE(Msg.find(hex(Base)), std::string::npos) << Msg;
  EXPECT_EQ(Ops.Calls.size(), 2u);
  EXPECT_EQ(Map.size(), 0u);
}

TEST_F(PinnedMemoryMapTest, UnlockOfUnknownPointerChangesNothing) {
  lockOk(Map, Base + 0x100, 0x100);
  std::string Msg;
  EXPECT_EQ(codeOf(Map.unlock(ptr(Base + 0x50)), &Msg), ErrorCode::NotFound);
  EXPECT_NE(Msg.find(hex(Base + 0x50)), std::string::npos) << Msg;
  // The exclusive end belongs to nobody.
  EXPECT_EQ(codeOf(Map.unlock(ptr(Base + 0x200))), ErrorCode::NotFound);
  EXPECT_EQ(codeOf(Map.unlock(ptr(Base + 0xff))), ErrorCode::NotFound);
  EXPECT_EQ(Map.lookup(ptr(Base + 0x100))->References, 1u);
  EXPECT_EQ(Ops.Calls.size(), 1u);
}

TEST_F(PinnedMemoryMapTest, UnlockOfInteriorPointerNeverLockedIsRefused) {
  lockOk(Map, Base, 0x100000);
  for (uintptr_t Addr : {Base + 0x1000, Base + 1, Base + 0xfffff}) {
    std::string Msg;
    EXPECT_EQ(codeOf(Map.unlock(ptr(Addr)), &Msg), ErrorCode::NotFound)
        << hex(Addr);
    EXPECT_NE(Msg.find(hex(Addr)), std::string::npos) << Msg;
    EXPECT_NE(Msg.find(range(Base, 0x100000)), std::string::npos) << Msg;
    EXPECT_NE(Msg.find("no lock was taken there"), std::string::npos) << Msg;
  }
  // Nothing changed: the owner's unlock still releases the region.
  EXPECT_EQ(Map.lookup(ptr(Base))->References, 1u);
  EXPECT_EQ(Ops.numUnpins(), 0u);
  EXPECT_FALSE(Map.unlock(ptr(Base)));
  ASSERT_EQ(Ops.numUnpins(), 1u);
  EXPECT_EQ(Ops.Calls.back().HstPtr, Base);
  EXPECT_EQ(Ops.Calls.back().Size, 0x100000u);
  EXPECT_EQ(Map.size(), 0u);
}

TEST_F(PinnedMemoryMapTest, SubBufferLockIsReleasedAtItsOwnPointerOnly) {
  lockOk(Map, Base, 0x100000);
  EXPECT_EQ(lockOk(Map, Base + 0x1000, 0x1000), Base + 0x1000 + DevAlias);
  EXPECT_EQ(lockOk(Map, Base + 0x1000, 0x10), Base + 0x1000 + DevAlias);
  EXPECT_EQ(Map.lookup(ptr(Base))->References, 3u);
  // A byte of the sub-buffer other than its start is no lock's pointer.
  EXPECT_EQ(codeOf(Map.unlock(ptr(Base + 0x1001))), ErrorCode::NotFound);
  EXPECT_FALSE(Map.unlock(ptr(Base + 0x1000)));
  EXPECT_FALSE(Map.unlock(ptr(Base + 0x1000)));
  // Both locks taken there are released: a third unlock there is refused.
  EXPECT_EQ(codeOf(Map.unlock(ptr(Base + 0x1000))), ErrorCode::NotFound);
  EXPECT_EQ(Map.lookup(ptr(Base))->References, 1u);
  EXPECT_FALSE(Map.unlock(ptr(Base)));
  EXPECT_EQ(Ops.numUnpins(), 1u);
  EXPECT_EQ(Map.size(), 0u);
}

TEST_F(PinnedMemoryMapTest, StartIsRefusedWhenOnlySubBufferLocksRemain) {
  lockOk(Map, Base, 0x1000);
  lockOk(Map, Base + 0x100, 0x10);
  EXPECT_FALSE(Map.unlock(ptr(Base)));
  std::string Msg;
  EXPECT_EQ(codeOf(Map.unlock(ptr(Base)), &Msg), ErrorCode::NotFound);
  EXPECT_NE(Msg.find(hex(Base)), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("the 1 locks left on the region " + range(Base, 0x1000) +
                     " are locks of sub-buffers"),
            std::string::npos)
      << Msg;
  EXPECT_EQ(Map.lookup(ptr(Base))->References, 1u);
  EXPECT_EQ(Ops.numUnpins(), 0u);
  // The sub-buffer's lock is the last one: releasing it unpins the region
  // as it was locked.
  EXPECT_FALSE(Map.unlock(ptr(Base + 0x100)));
  ASSERT_EQ(Ops.numUnpins(), 1u);
  EXPECT_EQ(Ops.Calls.back().HstPtr, Base);
  EXPECT_EQ(Ops.Calls.back().Size, 0x1000u);
  EXPECT_EQ(Map.size(), 0u);
  // A new region at the same place knows nothing of the old sub-buffer.
  lockOk(Map, Base, 0x1000);
  EXPECT_EQ(codeOf(Map.unlock(ptr(Base + 0x100))), ErrorCode::NotFound);
  EXPECT_FALSE(Map.unlock(ptr(Base)));
}

/// Expect lock(Start, Size) to be refused as overlapping the region
/// [OldStart, OldStart+OldSize) with no change to the map or the backend.
void expectOverlap(PinnedMemoryMapTy &Map, FakeOpsTy &Ops, uintptr_t Start,
                   size_t Size, uintptr_t OldStart, size_t OldSize) {
  std::vector<PinnedRegionInfoTy> Before = Map.snapshot();
  size_t CallsBefore = Ops.Calls.size();
  Expected<void *> DevOrErr = Map.lock(ptr(Start), Size);
  std::string Msg;
  EXPECT_EQ(codeOf(std::move(DevOrErr), &Msg), ErrorCode::Overlap)
      << "lock " << range(Start, Size);
  EXPECT_NE(Msg.find(range(Start, Size)), std::string::npos) << Msg;
  EXPECT_NE(Msg.find(range(OldStart, OldSize)), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("not allowed"), std::string::npos) << Msg;
  EXPECT_EQ(Ops.Calls.size(), CallsBefore);
  std::vector<PinnedRegionInfoTy> After = Map.snapshot();
  ASSERT_EQ(After.size(), Before.size());
  for (size_t I = 0; I < After.size(); ++I) {
    EXPECT_EQ(After[I].HstPtr, Before[I].HstPtr);
    EXPECT_EQ(After[I].Size, Before[I].Size);
    EXPECT_EQ(After[I].References, Before[I].References);
  }
}

TEST_F(PinnedMemoryMapTest, PartialOverlapFromTheLeft) {
  lockOk(Map, Base + 0x100, 0x100);
  // Starts before, ends inside.
  expectOverlap(Map, Ops, Base, 0x180, Base + 0x100, 0x100);
  // Ends on the region's first byte.
  expectOverlap(Map, Ops, Base + 0xff, 2, Base + 0x100, 0x100);
}

TEST_F(PinnedMemoryMapTest, PartialOverlapFromTheRight) {
  lockOk(Map, Base, 0x100);
  // Starts inside, ends after.
  expectOverlap(Map, Ops, Base + 0x80, 0x100, Base, 0x100);
  // Starts on the region's last byte.
  expectOverlap(Map, Ops, Base + 0xff, 2, Base, 0x100);
}

TEST_F(PinnedMemoryMapTest, SupersetIsRefused) {
  lockOk(Map, Base + 0x100, 0x100);
  expectOverlap(Map, Ops, Base, 0x400, Base + 0x100, 0x100);

  // The region before the new start is no help: the one that begins inside
  // the new range must still be found.
  lockOk(Map, Base + 0x1000, 0x10);
  lockOk(Map, Base + 0x1100, 0x10);
  expectOverlap(Map, Ops, Base + 0x1020, 0x200, Base + 0x1100, 0x10);
  // Several regions inside: the first one is named.
  expectOverlap(Map, Ops, Base + 0x800, 0x1000, Base + 0x1000, 0x10);
}

TEST_F(PinnedMemoryMapTest, ExtensionIsRefused) {
  lockOk(Map, Base, 0x100);
  // Starts inside and runs one byte past the end.
  expectOverlap(Map, Ops, Base + 0x10, 0xf1, Base, 0x100);
  // Same start, longer.
  expectOverlap(Map, Ops, Base, 0x101, Base, 0x100);
  // Extension that would also swallow the next region.
  lockOk(Map, Base + 0x200, 0x100);
  expectOverlap(Map, Ops, Base + 0x200, 0x1000, Base + 0x200, 0x100);
  EXPECT_EQ(Ops.numPins(), 2u);
}

TEST_F(PinnedMemoryMapTest, AdjacentRegionsAreIndependent) {
  EXPECT_EQ(lockOk(Map, Base, 0x100), Base + DevAlias);
  EXPECT_EQ(lockOk(Map, Base + 0x100, 0x100), Base + 0x100 + DevAlias);
  EXPECT_EQ(lockOk(Map, Base - 0x100, 0x100), Base - 0x100 + DevAlias);
  EXPECT_EQ(Ops.numPins(), 3u);
  EXPECT_EQ(Map.size(), 3u);
  EXPECT_EQ(addr(Map.lookup(ptr(Base + 0xff))->HstPtr), Base);
  EXPECT_EQ(addr(Map.lookup(ptr(Base + 0x100))->HstPtr), Base + 0x100);
  EXPECT_EQ(addr(Map.lookup(ptr(Base - 1))->HstPtr), Base - 0x100);

  EXPECT_FALSE(Map.unlock(ptr(Base)));
  EXPECT_FALSE(Map.lookup(ptr(Base)));
  EXPECT_EQ(Map.lookup(ptr(Base + 0x100))->References, 1u);
  EXPECT_EQ(Map.lookup(ptr(Base - 0x100))->References, 1u);
  EXPECT_FALSE(Map.unlock(ptr(Base + 0x100)));
  EXPECT_FALSE(Map.unlock(ptr(Base - 0x100)));
  EXPECT_EQ(Map.size(), 0u);
}

TEST_F(PinnedMemoryMapTest, TwoSubPageBuffersInOnePage) {
  constexpr uintptr_t Page = Base + 0x3000;
  EXPECT_EQ(lockOk(Map, Page + 0x10, 0x20), Page + 0x10 + DevAlias);
  EXPECT_EQ(lockOk(Map, Page + 0x40, 0x20), Page + 0x40 + DevAlias);
  EXPECT_EQ(Ops.numPins(), 2u);
  EXPECT_EQ(Ops.Calls[1].HstPtr, Page + 0x40);
  EXPECT_EQ(Ops.Calls[1].Size, 0x20u);
  EXPECT_FALSE(Map.lookup(ptr(Page + 0x30)));
  EXPECT_FALSE(Map.lookup(ptr(Page)));
  EXPECT_FALSE(Map.unlock(ptr(Page + 0x10)));
  EXPECT_TRUE(Map.lookup(ptr(Page + 0x40)));
  EXPECT_FALSE(Map.unlock(ptr(Page + 0x40)));
}

TEST_F(PinnedMemoryMapTest, InvalidArguments) {
  EXPECT_EQ(codeOf(Map.lock(nullptr, 16)), ErrorCode::InvalidArgument);
  EXPECT_EQ(codeOf(Map.lock(ptr(Base), 0)), ErrorCode::InvalidArgument);
  EXPECT_EQ(codeOf(Map.lock(ptr(UINTPTR_MAX - 0xf), 0x20)),
            ErrorCode::InvalidArgument);
  EXPECT_EQ(codeOf(Map.lock(ptr(Base), SIZE_MAX)), ErrorCode::InvalidArgument);
  // The exclusive end must be representable.
  EXPECT_EQ(codeOf(Map.lock(ptr(UINTPTR_MAX - 0xf), 0x10)),
            ErrorCode::InvalidArgument);
  EXPECT_EQ(codeOf(Map.unlock(nullptr)), ErrorCode::InvalidArgument);
  EXPECT_EQ(codeOf(Map.registerExternal(nullptr, ptr(ExtAlias), 16)),
            ErrorCode::InvalidArgument);
  EXPECT_EQ(codeOf(Map.registerExternal(ptr(Base), ptr(ExtAlias), 0)),
            ErrorCode::InvalidArgument);
  EXPECT_EQ(
      codeOf(Map.registerExternal(ptr(UINTPTR_MAX - 0xf), ptr(ExtAlias), 0x20)),
      ErrorCode::InvalidArgument);
  EXPECT_EQ(codeOf(Map.registerExternal(ptr(Base), nullptr, 16)),
            ErrorCode::InvalidArgument);
  EXPECT_EQ(codeOf(Map.unregisterExternal(nullptr)),
            ErrorCode::InvalidArgument);

  std::string Msg;
  Expected<void *> DevOrErr = Map.lock(ptr(Base), 0);
  EXPECT_EQ(codeOf(std::move(DevOrErr), &Msg), ErrorCode::InvalidArgument);
  EXPECT_NE(Msg.find(hex(Base)), std::string::npos) << Msg;

  EXPECT_TRUE(Ops.Calls.empty());
  EXPECT_EQ(Map.size(), 0u);
}

TEST_F(PinnedMemoryMapTest, PinFailureLeavesMapUnchanged) {
  lockOk(Map, Base, 0x100);
  Ops.FailNextPin = true;
  Expected<void *> DevOrErr = Map.lock(ptr(Base + 0x1000), 0x234);
  std::string Msg;
  EXPECT_EQ(codeOf(std::move(DevOrErr), &Msg), ErrorCode::BackendError);
  EXPECT_NE(Msg.find(range(Base + 0x1000, 0x234)), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("fake pin of"), std::string::npos) << Msg;
  EXPECT_EQ(Map.size(), 1u);
  EXPECT_FALSE(Map.lookup(ptr(Base + 0x1000)));

  // Nothing was left behind that would make a retry look like an overlap.
  EXPECT_EQ(lockOk(Map, Base + 0x1000, 0x234), Base + 0x1000 + DevAlias);
  EXPECT_EQ(Map.size(), 2u);
}

TEST_F(PinnedMemoryMapTest, NullDevicePointerFromBackendIsRefused) {
  Ops.NullNextPin = true;
  Expected<void *> DevOrErr = Map.lock(ptr(Base), 0x100);
  EXPECT_EQ(codeOf(std::move(DevOrErr)), ErrorCode::BackendError);
  EXPECT_EQ(Map.size(), 0u);
  // The backend was asked to undo the pin it reported.
  EXPECT_EQ(Ops.numUnpins(), 1u);
  EXPECT_TRUE(Ops.Pinned.empty());
}

TEST_F(PinnedMemoryMapTest, UnpinFailureKeepsRegion) {
  lockOk(Map, Base, 0x100);
  Ops.FailNextUnpin = true;
  std::string Msg;
  EXPECT_EQ(codeOf(Map.unlock(ptr(Base)), &Msg), ErrorCode::BackendError);
  EXPECT_NE(Msg.find(range(Base, 0x100)), std::string::npos) << Msg;
  ASSERT_TRUE(Map.lookup(ptr(Base)));
  EXPECT_EQ(Map.lookup(ptr(Base))->References, 1u);
  EXPECT_FALSE(Map.unlock(ptr(Base)));
  EXPECT_EQ(Map.size(), 0u);
  EXPECT_TRUE(Ops.Pinned.empty());
}

TEST_F(PinnedMemoryMapTest, UnpinFailureKeepsTheLastSubBufferLock) {
  lockOk(Map, Base, 0x100);
  lockOk(Map, Base + 8, 8);
  EXPECT_FALSE(Map.unlock(ptr(Base)));
  Ops.FailNextUnpin = true;
  EXPECT_EQ(codeOf(Map.unlock(ptr(Base + 8))), ErrorCode::BackendError);
  EXPECT_EQ(Map.lookup(ptr(Base))->References, 1u);
  // The lock is still the sub-buffer's, released at its pointer.
  EXPECT_EQ(codeOf(Map.unlock(ptr(Base))), ErrorCode::NotFound);
  EXPECT_FALSE(Map.unlock(ptr(Base + 8)));
  EXPECT_EQ(Map.size(), 0u);
  EXPECT_TRUE(Ops.Pinned.empty());
}

TEST_F(PinnedMemoryMapTest, ExternalRegionLifecycle) {
  EXPECT_FALSE(Map.registerExternal(ptr(Base), ptr(Base + ExtAlias), 0x1000));
  std::optional<PinnedRegionInfoTy> Info = Map.lookup(ptr(Base + 0x10));
  ASSERT_TRUE(Info);
  EXPECT_TRUE(Info->External);
  EXPECT_EQ(Info->References, 1u);
  EXPECT_EQ(addr(Info->DevAccessiblePtr), Base + ExtAlias);

  // A user lock inside shares the external region's address.
  EXPECT_EQ(lockOk(Map, Base + 0x200, 0x10), Base + 0x200 + ExtAlias);
  EXPECT_EQ(Map.lookup(ptr(Base))->References, 2u);

  std::string Msg;
  EXPECT_EQ(codeOf(Map.unregisterExternal(ptr(Base)), &Msg), ErrorCode::Busy);
  EXPECT_NE(Msg.find("still has 1 user locks"), std::string::npos) << Msg;
  EXPECT_EQ(Map.lookup(ptr(Base))->References, 2u);

  // The user's lock was taken at Base + 0x200, not at the region's start.
  EXPECT_EQ(codeOf(Map.unlock(ptr(Base))), ErrorCode::NotFound);
  EXPECT_EQ(Map.lookup(ptr(Base))->References, 2u);
  EXPECT_FALSE(Map.unlock(ptr(Base + 0x200)));
  // The registration reference is not the user's to drop.
  EXPECT_EQ(codeOf(Map.unlock(ptr(Base + 0x200)), &Msg), ErrorCode::NotFound);
  EXPECT_NE(Msg.find("has no user locks"), std::string::npos) << Msg;
  EXPECT_EQ(codeOf(Map.unlock(ptr(Base))), ErrorCode::NotFound);
  EXPECT_EQ(Map.lookup(ptr(Base))->References, 1u);

  // Only the exact start unregisters.
  EXPECT_EQ(codeOf(Map.unregisterExternal(ptr(Base + 0x10))),
            ErrorCode::NotFound);
  EXPECT_FALSE(Map.unregisterExternal(ptr(Base)));
  EXPECT_EQ(Map.size(), 0u);
  EXPECT_EQ(codeOf(Map.unregisterExternal(ptr(Base))), ErrorCode::NotFound);

  // External memory never reaches the backend.
  EXPECT_TRUE(Ops.Calls.empty());
}

TEST_F(PinnedMemoryMapTest, ExternalRegionCollisions) {
  lockOk(Map, Base + 0x1000, 0x1000);
  std::string Msg;
  // Inside, around, and partially over a locked region.
  EXPECT_EQ(
      codeOf(Map.registerExternal(ptr(Base + 0x1100), ptr(ExtAlias), 0x10),
             &Msg),
      ErrorCode::Overlap);
  EXPECT_NE(Msg.find(range(Base + 0x1000, 0x1000)), std::string::npos) << Msg;
  EXPECT_EQ(codeOf(Map.registerExternal(ptr(Base), ptr(ExtAlias), 0x3000)),
            ErrorCode::Overlap);
  EXPECT_EQ(
      codeOf(Map.registerExternal(ptr(Base + 0x1fff), ptr(ExtAlias), 0x10)),
      ErrorCode::Overlap);

  // Adjacent is fine.
  EXPECT_FALSE(
      Map.registerExternal(ptr(Base + 0x2000), ptr(Base + ExtAlias), 0x1000));
  // Locks that extend or swallow the external region are refused too.
  expectOverlap(Map, Ops, Base + 0x2800, 0x1000, Base + 0x2000, 0x1000);
  expectOverlap(Map, Ops, Base + 0x1800, 0x1000, Base + 0x1000, 0x1000);
  // Adjacent to the external region's end is fine for a lock as well.
  EXPECT_EQ(lockOk(Map, Base + 0x3000, 0x10), Base + 0x3000 + DevAlias);
  EXPECT_EQ(Map.size(), 3u);
  EXPECT_FALSE(Map.unlock(ptr(Base + 0x3000)));

  // A locked region cannot be unregistered as if it were external.
  EXPECT_EQ(codeOf(Map.unregisterExternal(ptr(Base + 0x1000)), &Msg),
            ErrorCode::NotFound);
  EXPECT_EQ(Map.lookup(ptr(Base + 0x1000))->References, 1u);
  EXPECT_EQ(Map.size(), 2u);
}

TEST_F(PinnedMemoryMapTest, SegmentsOfFullyLockedRange) {
  lockOk(Map, Base, 0x1000);
  PinnedSegmentTy Segs[4];
  ASSERT_EQ(Map.segments(ptr(Base + 0x10), 0x100, Segs, 4), 1u);
  EXPECT_EQ(addr(Segs[0].HstPtr), Base + 0x10);
  EXPECT_EQ(Segs[0].Size, 0x100u);
  EXPECT_EQ(addr(Segs[0].DevAccessiblePtr), Base + 0x10 + DevAlias);

  // The whole region, exactly.
  ASSERT_EQ(Map.segments(ptr(Base), 0x1000, Segs, 4), 1u);
  EXPECT_EQ(Segs[0].Size, 0x1000u);
  EXPECT_EQ(addr(Segs[0].DevAccessiblePtr), Base + DevAlias);
}

TEST_F(PinnedMemoryMapTest, SegmentsOfFullyUnlockedRange) {
  lockOk(Map, Base, 0x100);
  lockOk(Map, Base + 0x300, 0x100);
  PinnedSegmentTy Segs[4];
  // Between two regions, touching both.
  ASSERT_EQ(Map.segments(ptr(Base + 0x100), 0x200, Segs, 4), 1u);
  EXPECT_EQ(addr(Segs[0].HstPtr), Base + 0x100);
  EXPECT_EQ(Segs[0].Size, 0x200u);
  EXPECT_EQ(Segs[0].DevAccessiblePtr, nullptr);
  // Beyond every region.
  ASSERT_EQ(Map.segments(ptr(Base + 0x1000), 0x10, Segs, 4), 1u);
  EXPECT_EQ(Segs[0].DevAccessiblePtr, nullptr);
  // Empty map.
  FakeOpsTy OtherOps;
  PinnedMemoryMapTy Empty(OtherOps);
  ASSERT_EQ(Empty.segments(ptr(Base), 0x10, Segs, 4), 1u);
  EXPECT_EQ(Segs[0].Size, 0x10u);
  EXPECT_EQ(Segs[0].DevAccessiblePtr, nullptr);
}

TEST_F(PinnedMemoryMapTest, SegmentsSpanningLockedAndUnlocked) {
  lockOk(Map, Base + 0x100, 0x100);
  lockOk(Map, Base + 0x300, 0x100);
  lockOk(Map, Base + 0x400, 0x80); // Adjacent to the previous one.
  PinnedSegmentTy Segs[8];
  ASSERT_EQ(Map.segments(ptr(Base + 0x180), 0x200, Segs, 8), 3u);
  EXPECT_EQ(addr(Segs[0].HstPtr), Base + 0x180);
  EXPECT_EQ(Segs[0].Size, 0x80u);
  EXPECT_EQ(addr(Segs[0].DevAccessiblePtr), Base + 0x180 + DevAlias);
  EXPECT_EQ(addr(Segs[1].HstPtr), Base + 0x200);
  EXPECT_EQ(Segs[1].Size, 0x100u);
  EXPECT_EQ(Segs[1].DevAccessiblePtr, nullptr);
  EXPECT_EQ(addr(Segs[2].HstPtr), Base + 0x300);
  EXPECT_EQ(Segs[2].Size, 0x80u);
  EXPECT_EQ(addr(Segs[2].DevAccessiblePtr), Base + 0x300 + DevAlias);

  // Starting unlocked, crossing two adjacent regions, ending unlocked: the
  // adjacent regions stay two segments.
  ASSERT_EQ(Map.segments(ptr(Base), 0x600, Segs, 8), 6u);
  uintptr_t Starts[] = {0, 0x100, 0x200, 0x300, 0x400, 0x480};
  uintptr_t Sizes[] = {0x100, 0x100, 0x100, 0x100, 0x80, 0x180};
  bool Locked[] = {false, true, false, true, true, false};
  for (int I = 0; I < 6; ++I) {
    EXPECT_EQ(addr(Segs[I].HstPtr), Base + Starts[I]) << I;
    EXPECT_EQ(Segs[I].Size, Sizes[I]) << I;
    EXPECT_EQ(addr(Segs[I].DevAccessiblePtr),
              Locked[I] ? Base + Starts[I] + DevAlias : 0)
        << I;
  }
}

TEST_F(PinnedMemoryMapTest, SegmentsWithTooFewSlots) {
  lockOk(Map, Base + 0x100, 0x100);
  lockOk(Map, Base + 0x300, 0x100);
  PinnedSegmentTy Segs[2];
  // Needs four; the second ends where it naturally ends.
  ASSERT_EQ(Map.segments(ptr(Base), 0x380, Segs, 2), 2u);
  EXPECT_EQ(addr(Segs[0].HstPtr), Base);
  EXPECT_EQ(Segs[0].Size, 0x100u);
  EXPECT_EQ(addr(Segs[1].HstPtr), Base + 0x100);
  EXPECT_EQ(Segs[1].Size, 0x100u);
  EXPECT_EQ(addr(Segs[1].DevAccessiblePtr), Base + 0x100 + DevAlias);

  // Resume from there.
  ASSERT_EQ(Map.segments(ptr(Base + 0x200), 0x180, Segs, 2), 2u);
  EXPECT_EQ(Segs[0].Size, 0x100u);
  EXPECT_EQ(Segs[0].DevAccessiblePtr, nullptr);
  EXPECT_EQ(addr(Segs[1].HstPtr), Base + 0x300);
  EXPECT_EQ(Segs[1].Size, 0x80u);
  EXPECT_EQ(addr(Segs[1].DevAccessiblePtr), Base + 0x300 + DevAlias);

  ASSERT_EQ(Map.segments(ptr(Base), 0x380, Segs, 1), 1u);
  EXPECT_EQ(Segs[0].Size, 0x100u);

  // Nothing to describe.
  EXPECT_EQ(Map.segments(ptr(Base), 0, Segs, 2), 0u);
  EXPECT_EQ(Map.segments(ptr(Base), 0x10, Segs, 0), 0u);
  EXPECT_EQ(Map.segments(ptr(UINTPTR_MAX - 0xf), 0x20, Segs, 2), 0u);
}

TEST_F(PinnedMemoryMapTest, SnapshotAndDump) {
  lockOk(Map, Base + 0x1000, 0x10);
  EXPECT_FALSE(Map.registerExternal(ptr(Base), ptr(Base + ExtAlias), 0x20));
  lockOk(Map, Base + 0x1000, 0x8);
  std::vector<PinnedRegionInfoTy> Snap = Map.snapshot();
  ASSERT_EQ(Snap.size(), 2u);
  EXPECT_EQ(addr(Snap[0].HstPtr), Base);
  EXPECT_TRUE(Snap[0].External);
  EXPECT_EQ(addr(Snap[1].HstPtr), Base + 0x1000);
  EXPECT_EQ(Snap[1].References, 2u);

  std::string Text;
  llvm::raw_string_ostream OS(Text);
  Map.dump(OS);
  OS.flush();
  EXPECT_NE(Text.find("2 regions"), std::string::npos) << Text;
  EXPECT_NE(Text.find(range(Base + 0x1000, 0x10)), std::string::npos) << Text;
  EXPECT_NE(Text.find("external"), std::string::npos) << Text;
}

TEST_F(PinnedMemoryMapTest, ReleaseAllUnpinsAndForgetsEverything) {
  lockOk(Map, Base, 0x100);
  lockOk(Map, Base + 0x10, 0x10);
  lockOk(Map, Base + 0x1000, 0x100);
  lockOk(Map, Base + 0x2000, 0x100);
  EXPECT_FALSE(Map.registerExternal(ptr(Base + 0x3000),
                                    ptr(Base + 0x3000 + ExtAlias), 0x100));
  Ops.FailNextUnpin = true;
  std::string Msg;
  EXPECT_EQ(codeOf(Map.releaseAll(), &Msg), ErrorCode::BackendError);
  EXPECT_NE(Msg.find(range(Base, 0x100)), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("2 references"), std::string::npos) << Msg;
  // The failure did not stop the others from being unpinned.
  EXPECT_EQ(Ops.numUnpins(), 3u);
  EXPECT_EQ(Ops.Pinned.size(), 1u);
  Ops.Pinned.clear();
  EXPECT_EQ(Map.size(), 0u);

  // Empty again, and usable; the sub-buffer lock at Base + 0x10 went too.
  EXPECT_FALSE(Map.releaseAll());
  EXPECT_EQ(lockOk(Map, Base, 0x100), Base + DevAlias);
  EXPECT_EQ(codeOf(Map.unlock(ptr(Base + 0x10))), ErrorCode::NotFound);
  EXPECT_FALSE(Map.releaseAll());
  EXPECT_TRUE(Ops.Pinned.empty());
}

TEST(PinnedMemoryMapLifetimeTest, DestructorUnpinsWhatIsLeft) {
  FakeOpsTy Ops;
  {
    PinnedMemoryMapTy Map(Ops);
    lockOk(Map, Base, 0x100);
    lockOk(Map, Base, 0x10);
    lockOk(Map, Base + 0x1000, 0x100);
    EXPECT_FALSE(Map.registerExternal(ptr(Base + 0x2000),
                                      ptr(Base + 0x2000 + ExtAlias), 0x100));
  }
  EXPECT_EQ(Ops.numPins(), 2u);
  EXPECT_EQ(Ops.numUnpins(), 2u);
  EXPECT_TRUE(Ops.Pinned.empty());
  EXPECT_TRUE(Ops.Violations.empty());
}

//===----------------------------------------------------------------------===//
// Differential test against a linear reference model.
//===----------------------------------------------------------------------===//

/// The shared reference model (test/support/PinnedMemoryModel.h).
class ModelTy : public test::PinnedMemoryModelTy {
public:
  ModelTy() : PinnedMemoryModelTy(DevAlias) {}
};

struct DiffConfigTy {
  uint64_t Seed;
  size_t Ops;
  uintptr_t ArenaSize;
  size_t MaxLen;
};

/// Keeps ctest's test names readable instead of a byte dump.
void PrintTo(const DiffConfigTy &Config, std::ostream *OS) {
  *OS << "seed " << Config.Seed << ", " << Config.Ops << " operations, arena "
      << Config.ArenaSize << " bytes, lengths up to " << Config.MaxLen;
}

class PinnedMemoryMapDiffTest : public ::testing::TestWithParam<DiffConfigTy> {
};

TEST_P(PinnedMemoryMapDiffTest, MatchesReferenceModel) {
  const DiffConfigTy Config = GetParam();
  std::mt19937_64 Rng(Config.Seed);
  // Avoid std::uniform_int_distribution: its output differs between
  // standard libraries, and the sequence should be the same everywhere.
  auto below = [&](uint64_t N) { return N ? Rng() % N : 0; };
  const uintptr_t Arena = 0x10000;

  FakeOpsTy Ops;
  PinnedMemoryMapTy Map(Ops);
  ModelTy Model;
  size_t Counts[7] = {};
  // How often each operation ended each way, to show that the random walk
  // reaches every rule rather than just the easy paths.
  std::map<std::string, size_t> Outcomes;
  auto note = [&](const char *Op, ErrorCode Code) {
    ++Outcomes[std::string(Op) + "/" + describe(Code)];
  };

  // A random address, usually inside or near an existing region so that
  // containment, extension and interior unlocks are common.
  auto pickAddr = [&]() -> uintptr_t {
    if (!Model.Regions.empty() && below(4) != 0) {
      size_t I = below(Model.Regions.size());
      const ModelTy::RegionTy &R = Model.Regions[I];
      switch (below(5)) {
      case 0:
        return R.Start;
      case 4:
        // Where a lock was taken, so that unlocks of sub-buffers succeed.
        if (uintptr_t Start = Model.lockStart(I, Rng()))
          return Start;
        return R.Start;
      case 1:
        return R.Start + below(R.End - R.Start);
      case 2:
        return R.End;
      default:
        return R.Start - std::min<uintptr_t>(R.Start - Arena, 1 + below(8));
      }
    }
    return Arena + below(Config.ArenaSize);
  };
  auto pickLen = [&](uintptr_t Start) -> size_t {
    int I = Model.containing(Start);
    if (I >= 0 && below(2)) {
      const ModelTy::RegionTy &R = Model.Regions[I];
      // Inside, exactly to the end, or one byte past it.
      uintptr_t Room = R.End - Start;
      switch (below(3)) {
      case 0:
        return 1 + below(Room);
      case 1:
        return Room;
      default:
        return Room + 1 + below(4);
      }
    }
    return 1 + below(Config.MaxLen);
  };

  for (size_t Step = 0; Step < Config.Ops; ++Step) {
    SCOPED_TRACE(testing::Message()
                 << "seed " << Config.Seed << " step " << Step);
    unsigned Kind = below(100);
    if (Kind < 30) {
      ++Counts[0];
      uintptr_t Start = pickAddr();
      size_t Len = pickLen(Start);
      bool PinFails = below(20) == 0;
      Ops.FailNextPin = PinFails;
      uintptr_t ModelDev = 0;
      size_t PinsBefore = Ops.numPins();
      ErrorCode WantCode = Model.lock(Start, Len, PinFails, ModelDev);
      auto DevOrErr = Map.lock(ptr(Start), Len);
      Ops.FailNextPin = false;
      if (DevOrErr) {
        ASSERT_EQ(WantCode, ErrorCode::Success) << range(Start, Len);
        ASSERT_EQ(addr(*DevOrErr), ModelDev) << range(Start, Len);
        note(Ops.numPins() == PinsBefore ? "lock-contained" : "lock-new",
             WantCode);
      } else {
        note("lock", WantCode);
        ASSERT_EQ(codeOf(DevOrErr.takeError()), WantCode) << range(Start, Len);
      }
    } else if (Kind < 55) {
      ++Counts[1];
      uintptr_t Addr = pickAddr();
      bool UnpinFails = below(20) == 0;
      Ops.FailNextUnpin = UnpinFails;
      int I = Model.containing(Addr);
      bool AtSubBuffer = I >= 0 && Addr != Model.Regions[I].Start;
      ErrorCode WantCode = Model.unlock(Addr, UnpinFails);
      ASSERT_EQ(codeOf(Map.unlock(ptr(Addr))), WantCode) << hex(Addr);
      note(AtSubBuffer ? "unlock-inside" : "unlock", WantCode);
      Ops.FailNextUnpin = false;
    } else if (Kind < 70) {
      ++Counts[2];
      uintptr_t Addr = pickAddr();
      int I = Model.containing(Addr);
      std::optional<PinnedRegionInfoTy> Info = Map.lookup(ptr(Addr));
      ASSERT_EQ(Info.has_value(), I >= 0) << hex(Addr);
      if (Info) {
        const ModelTy::RegionTy &R = Model.Regions[I];
        ASSERT_EQ(addr(Info->HstPtr), R.Start);
        ASSERT_EQ(Info->Size, R.End - R.Start);
        ASSERT_EQ(addr(Info->DevAccessiblePtr), R.Dev);
        ASSERT_EQ(Info->References, R.References);
        ASSERT_EQ(Info->External, R.External);
      }
    } else if (Kind < 85) {
      ++Counts[3];
      uintptr_t Start = pickAddr();
      size_t Len = 1 + below(Config.MaxLen * 4);
      if (below(16) == 0)
        Len = 0;
      size_t MaxSegs = below(6);
      std::vector<PinnedSegmentTy> Want = Model.segments(Start, Len, MaxSegs);
      std::vector<PinnedSegmentTy> Got(MaxSegs + 1);
      size_t N = Map.segments(ptr(Start), Len, Got.data(), MaxSegs);
      ASSERT_EQ(N, Want.size()) << range(Start, Len) << " max " << MaxSegs;
      for (size_t I = 0; I < N; ++I) {
        ASSERT_EQ(Got[I].HstPtr, Want[I].HstPtr) << I;
        ASSERT_EQ(Got[I].Size, Want[I].Size) << I;
        ASSERT_EQ(Got[I].DevAccessiblePtr, Want[I].DevAccessiblePtr) << I;
      }
    } else if (Kind < 92) {
      ++Counts[4];
      uintptr_t Start = pickAddr();
      size_t Len = pickLen(Start);
      uintptr_t Dev = Start + ExtAlias;
      ErrorCode WantCode = Model.registerExternal(Start, Dev, Len);
      ASSERT_EQ(codeOf(Map.registerExternal(ptr(Start), ptr(Dev), Len)),
                WantCode)
          << range(Start, Len);
      note("register", WantCode);
    } else if (Kind < 98) {
      ++Counts[5];
      uintptr_t Start = pickAddr();
      ErrorCode WantCode = Model.unregisterExternal(Start);
      ASSERT_EQ(codeOf(Map.unregisterExternal(ptr(Start))), WantCode)
          << hex(Start);
      note("unregister", WantCode);
    } else {
      // Inputs that must be refused before anything is looked at.
      ++Counts[6];
      uintptr_t Start = below(2) ? 0 : UINTPTR_MAX - below(64);
      size_t Len = below(2) ? 0 : 64 + below(64);
      if (Start == 0 && Len == 0)
        Len = 1;
      uintptr_t Dev;
      ErrorCode WantCode = Model.lock(Start, Len, false, Dev);
      ASSERT_EQ(WantCode, ErrorCode::InvalidArgument);
      ASSERT_EQ(codeOf(Map.lock(ptr(Start), Len).takeError()), WantCode);
      ASSERT_EQ(codeOf(Map.registerExternal(ptr(Start), ptr(ExtAlias), Len)),
                Model.registerExternal(Start, ExtAlias, Len));
    }

    // The backend holds exactly the model's non-external regions.
    ASSERT_EQ(Ops.Pinned, Model.pinned());
    ASSERT_EQ(Map.size(), Model.Regions.size());
    ASSERT_TRUE(Ops.Violations.empty()) << Ops.Violations.front();
    if (Step % 64 == 0) {
      std::vector<ModelTy::RegionTy> Sorted = Model.Regions;
      std::sort(Sorted.begin(), Sorted.end(),
                [](const auto &A, const auto &B) { return A.Start < B.Start; });
      std::vector<PinnedRegionInfoTy> Snap = Map.snapshot();
      ASSERT_EQ(Snap.size(), Sorted.size());
      for (size_t I = 0; I < Snap.size(); ++I) {
        ASSERT_EQ(addr(Snap[I].HstPtr), Sorted[I].Start);
        ASSERT_EQ(Snap[I].Size, Sorted[I].End - Sorted[I].Start);
        ASSERT_EQ(addr(Snap[I].DevAccessiblePtr), Sorted[I].Dev);
        ASSERT_EQ(Snap[I].References, Sorted[I].References);
        ASSERT_EQ(Snap[I].External, Sorted[I].External);
      }
    }
  }

  // Every kind of operation ran often enough to mean something.
  for (size_t Count : Counts)
    EXPECT_GT(Count, Config.Ops / 100);
  for (ErrorCode Code : {ErrorCode::Overlap, ErrorCode::BackendError})
    EXPECT_GT(Outcomes[std::string("lock/") + describe(Code)], 0u);
  EXPECT_GT(Outcomes[std::string("lock-new/") + describe(ErrorCode::Success)],
            0u);
  EXPECT_GT(
      Outcomes[std::string("lock-contained/") + describe(ErrorCode::Success)],
      0u);
  for (ErrorCode Code :
       {ErrorCode::Success, ErrorCode::NotFound, ErrorCode::BackendError})
    EXPECT_GT(Outcomes[std::string("unlock/") + describe(Code)], 0u);
  // Inside a region: released where a sub-buffer lock was taken, refused
  // elsewhere.
  for (ErrorCode Code : {ErrorCode::Success, ErrorCode::NotFound})
    EXPECT_GT(Outcomes[std::string("unlock-inside/") + describe(Code)], 0u);
  for (ErrorCode Code : {ErrorCode::Success, ErrorCode::Overlap})
    EXPECT_GT(Outcomes[std::string("register/") + describe(Code)], 0u);
  for (ErrorCode Code :
       {ErrorCode::Success, ErrorCode::NotFound, ErrorCode::Busy})
    EXPECT_GT(Outcomes[std::string("unregister/") + describe(Code)], 0u);
  if (HasFailure()) {
    for (const auto &[Key, Count] : Outcomes)
      std::printf("  %s: %zu\n", Key.c_str(), Count);
  }
}

// 5 x 25,000 = 125,000 operations over dense and sparser arenas.
INSTANTIATE_TEST_SUITE_P(
    Seeds, PinnedMemoryMapDiffTest,
    ::testing::Values(DiffConfigTy{1, 25000, 256, 32},
                      DiffConfigTy{2, 25000, 1024, 64},
                      DiffConfigTy{3, 25000, 4096, 256},
                      DiffConfigTy{0x5eed, 25000, 512, 16},
                      DiffConfigTy{20240601, 25000, 2048, 512}),
    [](const ::testing::TestParamInfo<DiffConfigTy> &Info) {
      return "Seed" + std::to_string(Info.param.Seed);
    });

} // namespace

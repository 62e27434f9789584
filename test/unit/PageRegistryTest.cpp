// SPDX-License-Identifier: Apache-2.0
//
// PageRegistryTy: byte-exact pins over page-granular locks. Pages shared by
// several pins are locked once and unlocked with the last of them; a
// failed lock leaves nothing behind. The backend is a fake that records
// which pages are locked.
#include "offloadio/PageRegistry.h"

#include "gtest/gtest.h"

#include <set>

using namespace offloadio;

namespace {

constexpr size_t Page = 4096;

/// Records locked pages; fails a lock that would exceed Limit pages.
class FakePagesTy : public PageLockOpsTy {
public:
  Expected<bool> lockPages(void *Ptr, size_t Size) override {
    EXPECT_EQ(reinterpret_cast<uintptr_t>(Ptr) % Page, 0u);
    EXPECT_EQ(Size % Page, 0u);
    if (Locked.size() + Size / Page > Limit)
      return makeError(ErrorCode::OutOfResources, "over the limit");
    for (size_t I = 0; I < Size / Page; ++I)
      EXPECT_TRUE(
          Locked.insert(reinterpret_cast<uintptr_t>(Ptr) / Page + I).second)
          << "page locked twice";
    ++Calls;
    return false;
  }
  Error unlockPages(void *Ptr, size_t Size) override {
    for (size_t I = 0; I < Size / Page; ++I)
      EXPECT_EQ(Locked.erase(reinterpret_cast<uintptr_t>(Ptr) / Page + I), 1u)
          << "page unlocked that was not locked";
    return Error::success();
  }
  std::set<uintptr_t> Locked;
  size_t Limit = SIZE_MAX;
  unsigned Calls = 0;
};

void *at(uintptr_t Addr) { return reinterpret_cast<void *>(Addr); }

TEST(PageRegistryTest, RegionsSharingAPageKeepItLocked) {
  FakePagesTy Fake;
  PageRegistryTy Pages(Fake, Page);
  uintptr_t Base = 0x100000;
  ASSERT_FALSE(Pages.pin(at(Base + 10), 100));
  ASSERT_FALSE(Pages.pin(at(Base + 200), 100));
  EXPECT_EQ(Fake.Locked.size(), 1u);
  EXPECT_EQ(Fake.Calls, 1u) << "the shared page is locked once";
  ASSERT_FALSE(Pages.unpin(at(Base + 10), 100));
  EXPECT_EQ(Fake.Locked.size(), 1u) << "still used by the second region";
  ASSERT_FALSE(Pages.unpin(at(Base + 200), 100));
  EXPECT_TRUE(Fake.Locked.empty());
  EXPECT_EQ(Pages.numChunks(), 0u);
}

TEST(PageRegistryTest, ARegionOverlappingLockedPagesLocksOnlyTheGaps) {
  FakePagesTy Fake;
  PageRegistryTy Pages(Fake, Page);
  uintptr_t Base = 0x200000;
  // [Base+Page+8, +Page) covers pages 1 and 2; then pages 0..3.
  ASSERT_FALSE(Pages.pin(at(Base + Page + 8), Page));
  ASSERT_FALSE(Pages.pin(at(Base), 4 * Page));
  EXPECT_EQ(Fake.Locked.size(), 4u);
  EXPECT_EQ(Pages.contiguousBytes(at(Base), 4 * Page), Page)
      << "page 0 is its own chunk";
  ASSERT_FALSE(Pages.unpin(at(Base), 4 * Page));
  EXPECT_EQ(Fake.Locked.size(), 2u) << "pages 1 and 2 stay for the first pin";
  ASSERT_FALSE(Pages.unpin(at(Base + Page + 8), Page));
  EXPECT_TRUE(Fake.Locked.empty());
}

TEST(PageRegistryTest, AFailedLockLeavesNothingBehind) {
  FakePagesTy Fake;
  PageRegistryTy Pages(Fake, Page);
  uintptr_t Base = 0x300000;
  ASSERT_FALSE(Pages.pin(at(Base + Page), Page));
  Fake.Limit = 2;
  // Gaps: page 0 (fits), pages 2..3 (over the limit): page 0 is undone.
  Error Err = Pages.pin(at(Base), 4 * Page);
  EXPECT_TRUE(bool(Err));
  llvm::consumeError(std::move(Err));
  EXPECT_EQ(Fake.Locked, std::set<uintptr_t>{Base / Page + 1});
  EXPECT_EQ(Pages.numChunks(), 1u);
  // Unpinning what never got pinned changes nothing.
  ASSERT_FALSE(Pages.unpin(at(Base), 4 * Page));
  EXPECT_EQ(Fake.Locked.size(), 1u);
  ASSERT_FALSE(Pages.unpin(at(Base + Page), Page));
  EXPECT_TRUE(Fake.Locked.empty());
}

TEST(PageRegistryTest, TheSameRangePinnedTwiceNeedsTwoUnpins) {
  FakePagesTy Fake;
  PageRegistryTy Pages(Fake, Page);
  uintptr_t Base = 0x400000;
  ASSERT_FALSE(Pages.pin(at(Base), 3 * Page));
  ASSERT_FALSE(Pages.pin(at(Base), 3 * Page));
  ASSERT_FALSE(Pages.unpin(at(Base), 3 * Page));
  EXPECT_EQ(Fake.Locked.size(), 3u);
  ASSERT_FALSE(Pages.unpin(at(Base), 3 * Page));
  EXPECT_TRUE(Fake.Locked.empty());
}

} // namespace

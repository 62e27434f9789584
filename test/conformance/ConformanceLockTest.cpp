// SPDX-License-Identifier: Apache-2.0
//
// Conformance: data_lock and data_unlock: sub-ranges, reference counts,
// overlaps refused, invalid ranges, and transfers from locked memory.
#include "ConformanceFixture.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <cstring>
#include <string>

namespace offloadio::conformance {

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

} // namespace offloadio::conformance

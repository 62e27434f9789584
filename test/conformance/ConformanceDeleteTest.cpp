// SPDX-License-Identifier: Apache-2.0
//
// Conformance: deletes that leave a broken plugin behind if they go wrong.
// They run after the allocation, transfer, event and lock cases (the order
// of the sources in CMakeLists.txt), so that a failure here cannot disturb
// those in a whole-binary run (ctest runs every case in its own process
// anyway).
#include "ConformanceFixture.h"

#include "gtest/gtest.h"

#include <string>

namespace offloadio::conformance {

TEST_P(DeviceConformance, DataDeleteTwiceFails) {
  // Small (pooled by a memory manager) and large allocations of each kind:
  // the second delete must fail and must not free anything else. The small
  // size is one no other case allocates: if the second delete wrongly frees
  // a pooled block, the pool may hand freed memory out again, and only
  // allocations of that size class can receive it.
  for (int32_t Kind : {KindDevice, KindHost, KindShared, KindDefault})
    for (size_t Size : {size_t(400), 64 * KiB}) {
      SCOPED_TRACE("kind " + std::to_string(Kind) + ", size " +
                   std::to_string(Size));
      void *Tgt = P->data_alloc(Dev, Size, nullptr, Kind);
      ASSERT_NE(Tgt, nullptr);
      ASSERT_EQ(P->data_delete(Dev, Tgt, Kind), OFFLOAD_SUCCESS);
      // Stop at the first wrong success: what follows would use memory
      // the plugin has freed behind its own back.
      ASSERT_NE(P->data_delete(Dev, Tgt, Kind), OFFLOAD_SUCCESS)
          << "the second data_delete of " << Tgt << " succeeded";
      // Whatever the plugin hands out next is distinct memory: two live
      // allocations never alias.
      void *A = P->data_alloc(Dev, Size, nullptr, Kind);
      void *B = P->data_alloc(Dev, Size, nullptr, Kind);
      ASSERT_NE(A, nullptr);
      ASSERT_NE(B, nullptr);
      EXPECT_NE(A, B) << "two live allocations share an address";
      EXPECT_EQ(P->data_delete(Dev, A, Kind), OFFLOAD_SUCCESS);
      EXPECT_EQ(P->data_delete(Dev, B, Kind), OFFLOAD_SUCCESS);
    }
}

TEST_P(DeviceConformance, DataDeleteHostMemoryWithDefaultKind) {
  // omp_target_free passes DEFAULT whatever allocated the memory, so HOST
  // memory from llvm_omp_target_alloc_host can come back with kind DEFAULT.
  // The plugin may refuse that or free it, but it must stay usable: a later
  // HOST allocation (likely at the same address) and locks there work.
  for (int Round = 0; Round < 4; ++Round) {
    SCOPED_TRACE("round " + std::to_string(Round));
    void *H = P->data_alloc(Dev, 64 * KiB, nullptr, KindHost);
    ASSERT_NE(H, nullptr);
    if (P->data_delete(Dev, H, KindDefault) != OFFLOAD_SUCCESS)
      ASSERT_EQ(P->data_delete(Dev, H, KindHost), OFFLOAD_SUCCESS);
  }
  void *H = P->data_alloc(Dev, 64 * KiB, nullptr, KindHost);
  ASSERT_NE(H, nullptr) << "HOST allocation fails after DEFAULT-kind frees";
  void *Locked = nullptr;
  EXPECT_EQ(lock(at(H, 128), 256, &Locked), OFFLOAD_SUCCESS);
  EXPECT_EQ(unlock(at(H, 128)), OFFLOAD_SUCCESS);
  EXPECT_EQ(P->data_delete(Dev, H, KindHost), OFFLOAD_SUCCESS);
}

TEST_P(DeviceConformance, DataDeleteHostMemoryOnAnotherDeviceFails) {
  // HOST memory belongs to the device that allocated it, but its
  // registration in the lock map is plugin-wide: another device must refuse
  // to free it and leave it registered, or the owner could never free it
  // (found by test/fuzz/PluginLockFuzzer).
  if (NumDevices < 2)
    GTEST_SKIP() << "plugin '" << GetParam() << "' has " << NumDevices
                 << " device(s)";
  ASSERT_EQ(P->init_device(1), OFFLOAD_SUCCESS);
  char *H = static_cast<char *>(alloc(4 * KiB, KindHost));
  ASSERT_NE(H, nullptr);
  for (int32_t Kind : {KindHost, KindDefault})
    EXPECT_NE(P->data_delete(1, H, Kind), OFFLOAD_SUCCESS) << "kind " << Kind;
  // Still registered: a lock inside shares the allocation and holds off its
  // deletion until it is released.
  void *Locked = nullptr;
  ASSERT_EQ(lock(H + 64, 64, &Locked), OFFLOAD_SUCCESS);
  EXPECT_NE(P->data_delete(Dev, H, KindHost), OFFLOAD_SUCCESS);
  EXPECT_EQ(unlock(H + 64), OFFLOAD_SUCCESS);
  EXPECT_TRUE(release(H));
}

} // namespace offloadio::conformance

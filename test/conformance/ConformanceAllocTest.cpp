// SPDX-License-Identifier: Apache-2.0
//
// Conformance: data_alloc of each kind and size, and data_delete of what
// is not an allocation.
#include "ConformanceFixture.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace offloadio::conformance {

TEST_P(DeviceConformance, DataAllocEachKind) {
  for (int32_t Kind : {KindDevice, KindHost, KindShared, KindDefault}) {
    SCOPED_TRACE("kind " + std::to_string(Kind));
    std::vector<std::pair<char *, size_t>> Ptrs;
    for (size_t Size : {size_t(1), size_t(100), 4 * KiB, 64 * KiB, 3 * MiB}) {
      SCOPED_TRACE("size " + std::to_string(Size));
      void *Tgt = P->data_alloc(Dev, Size, nullptr, Kind);
      ASSERT_NE(Tgt, nullptr);
      Ptrs.push_back({static_cast<char *>(Tgt), Size});
      // The allocation holds data.
      HostMemTy Src(Size), Dst(Size);
      fillPattern(Src.get(), Size, Size + Kind);
      ASSERT_EQ(P->data_submit(Dev, Tgt, Src.get(), Size), OFFLOAD_SUCCESS);
      ASSERT_EQ(P->data_retrieve(Dev, Dst.get(), Tgt, Size), OFFLOAD_SUCCESS);
      EXPECT_TRUE(hasPattern(Dst.get(), Size, Size + Kind));
      // HOST and SHARED memory is accessible from the host, too.
      if (Kind == KindHost || Kind == KindShared)
        EXPECT_TRUE(hasPattern(Tgt, Size, Size + Kind));
    }
    // Live allocations are disjoint.
    std::sort(Ptrs.begin(), Ptrs.end());
    for (size_t I = 1; I < Ptrs.size(); ++I)
      EXPECT_LE(Ptrs[I - 1].first + Ptrs[I - 1].second, Ptrs[I].first);
    for (auto &[Ptr, Size] : Ptrs)
      EXPECT_EQ(P->data_delete(Dev, Ptr, Kind), OFFLOAD_SUCCESS);
  }
}

TEST_P(DeviceConformance, DataAllocInvalidFails) {
  EXPECT_EQ(P->data_alloc(Dev, -1, nullptr, KindDefault), nullptr);
  EXPECT_EQ(P->data_alloc(Dev, INT64_MIN, nullptr, KindDefault), nullptr);
  EXPECT_EQ(P->data_alloc(Dev, 64, nullptr, 4), nullptr) << "unknown kind";
  EXPECT_EQ(P->data_alloc(Dev, 64, nullptr, -1), nullptr) << "unknown kind";
}

TEST_P(DeviceConformance, DataDeleteForeignPointerFails) {
  int Stack = 0;
  HostMemTy Heap(4096);
  void *Real = alloc(4096);
  ASSERT_NE(Real, nullptr);
  for (int32_t Kind : {KindDevice, KindHost, KindShared, KindDefault}) {
    SCOPED_TRACE("kind " + std::to_string(Kind));
    EXPECT_NE(P->data_delete(Dev, &Stack, Kind), OFFLOAD_SUCCESS);
    EXPECT_NE(P->data_delete(Dev, Heap.get(), Kind), OFFLOAD_SUCCESS);
    EXPECT_NE(P->data_delete(Dev, nullptr, Kind), OFFLOAD_SUCCESS);
    EXPECT_NE(P->data_delete(Dev, reinterpret_cast<void *>(uintptr_t(8)), Kind),
              OFFLOAD_SUCCESS);
    // An interior pointer is not an allocation either.
    EXPECT_NE(P->data_delete(Dev, at(Real, 64), Kind), OFFLOAD_SUCCESS);
  }
  // The real allocation survived all that.
  HostMemTy Src(4096), Dst(4096);
  fillPattern(Src.get(), 4096, 7);
  ASSERT_EQ(P->data_submit(Dev, Real, Src.get(), 4096), OFFLOAD_SUCCESS);
  ASSERT_EQ(P->data_retrieve(Dev, Dst.get(), Real, 4096), OFFLOAD_SUCCESS);
  EXPECT_TRUE(hasPattern(Dst.get(), 4096, 7));
}

} // namespace offloadio::conformance

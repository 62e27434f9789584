// SPDX-License-Identifier: Apache-2.0
//
// Conformance: transfers between host and device, sync and async, of
// every size class, and the transfers that must do nothing or fail.
#include "ConformanceFixture.h"

#include "gtest/gtest.h"

#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>

namespace offloadio::conformance {

TEST_P(DeviceConformance, RoundTripSync) {
  for (size_t Size : TransferSizes) {
    SCOPED_TRACE("size " + std::to_string(Size));
    HostMemTy Src(Size), Dst(Size);
    roundTrip(Src.get(), Dst.get(), Size, /*Async=*/false, Size);
  }
}

TEST_P(DeviceConformance, RoundTripAsync) {
  for (size_t Size : TransferSizes) {
    SCOPED_TRACE("size " + std::to_string(Size));
    HostMemTy Src(Size), Dst(Size);
    roundTrip(Src.get(), Dst.get(), Size, /*Async=*/true, Size + 1);
  }
}

TEST_P(DeviceConformance, RoundTripUnalignedHostAndDevice) {
  // Odd host and device offsets and lengths around the staging and lock
  // thresholds.
  for (size_t Size : {size_t(3), 4 * KiB + 1, 1 * MiB - 1, 1 * MiB + 3}) {
    SCOPED_TRACE("size " + std::to_string(Size));
    HostMemTy Src(Size + 16), Dst(Size + 16, 0x5A);
    char *Tgt = static_cast<char *>(alloc(Size + 16));
    ASSERT_NE(Tgt, nullptr);
    fillPattern(Src + 3, Size, Size);
    ASSERT_EQ(P->data_submit(Dev, Tgt + 5, Src + 3, Size), OFFLOAD_SUCCESS);
    ASSERT_EQ(P->data_retrieve(Dev, Dst + 7, Tgt + 5, Size), OFFLOAD_SUCCESS);
    EXPECT_TRUE(hasPattern(Dst + 7, Size, Size));
    EXPECT_TRUE(isFilled(Dst.get(), 7, 0x5A)) << "wrote before the range";
    EXPECT_TRUE(isFilled(Dst + 7 + Size, 9, 0x5A)) << "wrote past the range";
  }
}

TEST_P(DeviceConformance, QueryAsyncUntilDone) {
  for (size_t Size : TransferSizes) {
    SCOPED_TRACE("size " + std::to_string(Size));
    HostMemTy Src(Size), Dst(Size);
    void *Tgt = alloc(Size);
    ASSERT_NE(Tgt, nullptr);
    fillPattern(Src.get(), Size, 11 * Size);
    AsyncTy AI(P, Dev);
    ASSERT_EQ(P->data_submit_async(Dev, Tgt, Src.get(), Size, &AI),
              OFFLOAD_SUCCESS);
    ASSERT_EQ(P->data_retrieve_async(Dev, Dst.get(), Tgt, Size, &AI),
              OFFLOAD_SUCCESS);
    ASSERT_NE(AI.queue(), nullptr);
    auto Deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    unsigned Polls = 0;
    while (AI.queue()) {
      ASSERT_EQ(P->query_async(Dev, &AI), OFFLOAD_SUCCESS);
      ++Polls;
      ASSERT_LT(std::chrono::steady_clock::now(), Deadline)
          << "query_async never finished after " << Polls << " polls";
      if (AI.queue())
        std::this_thread::yield();
    }
    EXPECT_TRUE(hasPattern(Dst.get(), Size, 11 * Size));
    // Querying a finished async info is harmless.
    EXPECT_EQ(P->query_async(Dev, &AI), OFFLOAD_SUCCESS);
    EXPECT_EQ(AI.queue(), nullptr);
  }
}

TEST_P(DeviceConformance, AsyncSubmitCapturesUnlockedSource) {
  // libomptarget frees or reuses firstprivate buffers as soon as the async
  // submit returns: the bytes in the buffer at the call are what must
  // arrive. Keep the queue busy first (a large copy from locked memory,
  // which is genuinely asynchronous) so that the copy under test is still
  // pending when the source is overwritten.
  constexpr size_t BusySize = 32 * MiB;
  HostMemTy Busy(BusySize);
  void *BusyLocked = nullptr;
  ASSERT_EQ(lock(Busy.get(), BusySize, &BusyLocked), OFFLOAD_SUCCESS);
  void *BusyTgt = alloc(BusySize);
  ASSERT_NE(BusyTgt, nullptr);
  for (size_t Size : {size_t(1), size_t(100), 4 * KiB, 64 * KiB, 3 * MiB}) {
    SCOPED_TRACE("size " + std::to_string(Size));
    HostMemTy Src(Size), Dst(Size);
    void *Tgt = alloc(Size);
    ASSERT_NE(Tgt, nullptr);
    fillPattern(Src.get(), Size, 3 * Size);
    {
      AsyncTy AI(P, Dev);
      ASSERT_EQ(P->data_submit_async(Dev, BusyTgt, Busy.get(), BusySize, &AI),
                OFFLOAD_SUCCESS);
      ASSERT_EQ(P->data_submit_async(Dev, Tgt, Src.get(), Size, &AI),
                OFFLOAD_SUCCESS);
      std::memset(Src.get(), 0xEE, Size);
      ASSERT_EQ(P->synchronize(Dev, &AI), OFFLOAD_SUCCESS);
      EXPECT_EQ(AI.queue(), nullptr);
    }
    ASSERT_EQ(P->data_retrieve(Dev, Dst.get(), Tgt, Size), OFFLOAD_SUCCESS);
    EXPECT_TRUE(hasPattern(Dst.get(), Size, 3 * Size))
        << "the source was read after the async submit returned";
    EXPECT_TRUE(release(Tgt));
  }
  EXPECT_EQ(unlock(Busy.get()), OFFLOAD_SUCCESS);
}

TEST_P(DeviceConformance, ZeroSizeTransfersDoNothing) {
  constexpr size_t Size = 256;
  HostMemTy Host(Size), Check(Size);
  void *Tgt = alloc(Size);
  void *Tgt1 = alloc(Size);
  ASSERT_NE(Tgt, nullptr);
  ASSERT_NE(Tgt1, nullptr);
  fillPattern(Host.get(), Size, 1);
  ASSERT_EQ(P->data_submit(Dev, Tgt, Host.get(), Size), OFFLOAD_SUCCESS);
  ASSERT_EQ(P->data_submit(Dev, Tgt1, Host.get(), Size), OFFLOAD_SUCCESS);
  fillPattern(Host.get(), Size, 2);

  EXPECT_EQ(P->data_submit(Dev, Tgt, Host.get(), 0), OFFLOAD_SUCCESS);
  EXPECT_EQ(P->data_retrieve(Dev, Host.get(), Tgt, 0), OFFLOAD_SUCCESS);
  EXPECT_EQ(P->data_exchange(Dev, Tgt1, Dev, Tgt, 0), OFFLOAD_SUCCESS);
  {
    AsyncTy AI(P, Dev);
    EXPECT_EQ(P->data_submit_async(Dev, Tgt, Host.get(), 0, &AI),
              OFFLOAD_SUCCESS);
    EXPECT_EQ(P->data_retrieve_async(Dev, Host.get(), Tgt, 0, &AI),
              OFFLOAD_SUCCESS);
    EXPECT_EQ(P->data_exchange_async(Dev, Tgt1, Dev, Tgt, 0, &AI),
              OFFLOAD_SUCCESS);
    // Nothing needed queueing; if the plugin queued anyway, synchronize
    // must still clear it.
    if (AI.queue()) {
      EXPECT_EQ(P->synchronize(Dev, &AI), OFFLOAD_SUCCESS);
      EXPECT_EQ(AI.queue(), nullptr);
    }
  }
  // Nothing moved either way.
  EXPECT_TRUE(hasPattern(Host.get(), Size, 2));
  ASSERT_EQ(P->data_retrieve(Dev, Check.get(), Tgt, Size), OFFLOAD_SUCCESS);
  EXPECT_TRUE(hasPattern(Check.get(), Size, 1));
}

TEST_P(DeviceConformance, InvalidTransfersFail) {
  constexpr size_t Size = 256;
  HostMemTy Host(Size);
  void *Tgt = alloc(Size);
  ASSERT_NE(Tgt, nullptr);
  fillPattern(Host.get(), Size, 5);
  ASSERT_EQ(P->data_submit(Dev, Tgt, Host.get(), Size), OFFLOAD_SUCCESS);
  HostMemTy Before(Size);
  std::memcpy(Before.get(), Host.get(), Size);

  for (int64_t Bad : {int64_t(-1), int64_t(-4096), INT64_MIN}) {
    SCOPED_TRACE("size " + std::to_string(Bad));
    EXPECT_NE(P->data_submit(Dev, Tgt, Host.get(), Bad), OFFLOAD_SUCCESS);
    EXPECT_NE(P->data_retrieve(Dev, Host.get(), Tgt, Bad), OFFLOAD_SUCCESS);
    EXPECT_NE(P->data_exchange(Dev, Tgt, Dev, Tgt, Bad), OFFLOAD_SUCCESS);
    AsyncTy AI(P, Dev);
    EXPECT_NE(P->data_submit_async(Dev, Tgt, Host.get(), Bad, &AI),
              OFFLOAD_SUCCESS);
    EXPECT_NE(P->data_retrieve_async(Dev, Host.get(), Tgt, Bad, &AI),
              OFFLOAD_SUCCESS);
    EXPECT_NE(P->data_exchange_async(Dev, Tgt, Dev, Tgt, Bad, &AI),
              OFFLOAD_SUCCESS);
    if (AI.queue())
      EXPECT_EQ(P->synchronize(Dev, &AI), OFFLOAD_SUCCESS);
  }
  EXPECT_NE(P->data_submit(Dev, nullptr, Host.get(), Size), OFFLOAD_SUCCESS);
  EXPECT_NE(P->data_submit(Dev, Tgt, nullptr, Size), OFFLOAD_SUCCESS);
  EXPECT_NE(P->data_retrieve(Dev, nullptr, Tgt, Size), OFFLOAD_SUCCESS);
  EXPECT_NE(P->data_retrieve(Dev, Host.get(), nullptr, Size), OFFLOAD_SUCCESS);
  EXPECT_NE(P->data_exchange(Dev, nullptr, Dev, Tgt, Size), OFFLOAD_SUCCESS);
  EXPECT_NE(P->data_exchange(Dev, Tgt, Dev, nullptr, Size), OFFLOAD_SUCCESS);
  {
    AsyncTy AI(P, Dev);
    EXPECT_NE(P->data_submit_async(Dev, nullptr, Host.get(), Size, &AI),
              OFFLOAD_SUCCESS);
    EXPECT_NE(P->data_submit_async(Dev, Tgt, nullptr, Size, &AI),
              OFFLOAD_SUCCESS);
    EXPECT_NE(P->data_retrieve_async(Dev, nullptr, Tgt, Size, &AI),
              OFFLOAD_SUCCESS);
    EXPECT_NE(P->data_retrieve_async(Dev, Host.get(), nullptr, Size, &AI),
              OFFLOAD_SUCCESS);
    if (AI.queue())
      EXPECT_EQ(P->synchronize(Dev, &AI), OFFLOAD_SUCCESS);
  }
  // synchronize and query_async need an async info.
  EXPECT_NE(P->synchronize(Dev, nullptr), OFFLOAD_SUCCESS);
  EXPECT_NE(P->query_async(Dev, nullptr), OFFLOAD_SUCCESS);
  // Nothing was damaged on either side.
  EXPECT_EQ(std::memcmp(Host.get(), Before.get(), Size), 0);
  HostMemTy Check(Size);
  ASSERT_EQ(P->data_retrieve(Dev, Check.get(), Tgt, Size), OFFLOAD_SUCCESS);
  EXPECT_TRUE(hasPattern(Check.get(), Size, 5));
}

} // namespace offloadio::conformance

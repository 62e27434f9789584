// SPDX-License-Identifier: Apache-2.0
//
// Conformance: events ordering work across async infos, and copies from
// one device to another.
#include "ConformanceFixture.h"

#include "gtest/gtest.h"

#include <cstring>
#include <string>
#include <vector>

namespace offloadio::conformance {

TEST_P(DeviceConformance, Events) {
  // A copy on one async info, an event recorded after it, and a readback on
  // a second async info that waits for the event: the readback must see the
  // copy's data. The first copy is large and from locked memory so that it
  // is still running when the second queue is set up.
  constexpr size_t Size = 32 * MiB;
  HostMemTy Src(Size), Dst(4 * KiB);
  void *SrcLocked = nullptr;
  ASSERT_EQ(lock(Src.get(), Size, &SrcLocked), OFFLOAD_SUCCESS);
  void *Tgt = alloc(Size);
  ASSERT_NE(Tgt, nullptr);
  std::memset(Src.get(), 0x11, Size);
  ASSERT_EQ(P->data_submit(Dev, Tgt, Src.get(), Size), OFFLOAD_SUCCESS);
  fillPattern(Src.get(), Size, 99);

  void *Event = nullptr, *Other = nullptr;
  ASSERT_EQ(P->create_event(Dev, &Event), OFFLOAD_SUCCESS);
  ASSERT_NE(Event, nullptr);
  ASSERT_EQ(P->create_event(Dev, &Other), OFFLOAD_SUCCESS);
  ASSERT_NE(Other, nullptr);
  EXPECT_NE(Event, Other) << "two live events are the same object";
  {
    AsyncTy First(P, Dev), Second(P, Dev);
    ASSERT_EQ(P->data_submit_async(Dev, Tgt, Src.get(), Size, &First),
              OFFLOAD_SUCCESS);
    ASSERT_EQ(P->record_event(Dev, Event, &First), OFFLOAD_SUCCESS);
    ASSERT_EQ(P->wait_event(Dev, Event, &Second), OFFLOAD_SUCCESS);
    ASSERT_EQ(P->data_retrieve_async(Dev, Dst.get(), at(Tgt, Size - 4 * KiB),
                                     4 * KiB, &Second),
              OFFLOAD_SUCCESS);
    ASSERT_NE(Second.queue(), nullptr);
    ASSERT_EQ(P->synchronize(Dev, &Second), OFFLOAD_SUCCESS);
    EXPECT_EQ(Second.queue(), nullptr);
    std::vector<unsigned char> Want(Size);
    fillPattern(Want.data(), Size, 99);
    EXPECT_EQ(std::memcmp(Dst.get(), Want.data() + Size - 4 * KiB, 4 * KiB), 0)
        << "the readback did not wait for the recorded copy";

    // sync_event waits for everything recorded before the event, so the
    // first queue has nothing left to do.
    EXPECT_EQ(P->sync_event(Dev, Event), OFFLOAD_SUCCESS);
    if (First.queue()) {
      EXPECT_EQ(P->query_async(Dev, &First), OFFLOAD_SUCCESS);
      EXPECT_EQ(First.queue(), nullptr)
          << "work recorded before a synchronised event is still pending";
    }
    // An event recorded on a queue with no work is complete at once, and
    // waiting on it is harmless.
    AsyncTy Third(P, Dev);
    EXPECT_EQ(P->record_event(Dev, Other, &Third), OFFLOAD_SUCCESS);
    EXPECT_EQ(P->sync_event(Dev, Other), OFFLOAD_SUCCESS);
    EXPECT_EQ(P->wait_event(Dev, Other, &Second), OFFLOAD_SUCCESS);
    if (Second.queue())
      EXPECT_EQ(P->synchronize(Dev, &Second), OFFLOAD_SUCCESS);
    if (Third.queue())
      EXPECT_EQ(P->synchronize(Dev, &Third), OFFLOAD_SUCCESS);
  }
  // An event can be recorded and waited for again (libomptarget keeps one
  // per mapping and reuses it for every transfer).
  {
    AsyncTy AI(P, Dev);
    ASSERT_EQ(P->data_submit_async(Dev, Tgt, Src.get(), 4 * KiB, &AI),
              OFFLOAD_SUCCESS);
    EXPECT_EQ(P->record_event(Dev, Event, &AI), OFFLOAD_SUCCESS);
    EXPECT_EQ(P->synchronize(Dev, &AI), OFFLOAD_SUCCESS);
    EXPECT_EQ(P->sync_event(Dev, Event), OFFLOAD_SUCCESS);
  }
  EXPECT_EQ(P->destroy_event(Dev, Event), OFFLOAD_SUCCESS);
  EXPECT_EQ(P->destroy_event(Dev, Other), OFFLOAD_SUCCESS);
  // Null events are refused.
  EXPECT_NE(P->create_event(Dev, nullptr), OFFLOAD_SUCCESS);
  EXPECT_NE(P->sync_event(Dev, nullptr), OFFLOAD_SUCCESS);
  EXPECT_NE(P->destroy_event(Dev, nullptr), OFFLOAD_SUCCESS);
  EXPECT_EQ(unlock(Src.get()), OFFLOAD_SUCCESS);
}

TEST_P(DeviceConformance, DataExchangeBetweenDevices) {
  if (NumDevices < 2)
    GTEST_SKIP() << "plugin '" << GetParam() << "' has " << NumDevices
                 << " device(s); data_exchange needs 2";
  if (!P->is_data_exchangable(0, 1))
    GTEST_SKIP() << "is_data_exchangable(0, 1) says no";
  ASSERT_EQ(P->init_device(1), OFFLOAD_SUCCESS);
  // Ids outside the plugin are never exchangeable.
  EXPECT_FALSE(P->is_data_exchangable(0, NumDevices));
  EXPECT_FALSE(P->is_data_exchangable(-1, 0));
  for (size_t Size : TransferSizes) {
    SCOPED_TRACE("size " + std::to_string(Size));
    HostMemTy Src(Size), Dst(Size);
    void *T0 = alloc(Size, KindDefault, 0);
    void *T1 = alloc(Size, KindDefault, 1);
    ASSERT_NE(T0, nullptr);
    ASSERT_NE(T1, nullptr);
    fillPattern(Src.get(), Size, Size + 17);
    ASSERT_EQ(P->data_submit(0, T0, Src.get(), Size), OFFLOAD_SUCCESS);
    ASSERT_EQ(P->data_exchange(0, T0, 1, T1, Size), OFFLOAD_SUCCESS);
    ASSERT_EQ(P->data_retrieve(1, Dst.get(), T1, Size), OFFLOAD_SUCCESS);
    EXPECT_TRUE(hasPattern(Dst.get(), Size, Size + 17)) << "sync exchange";

    // Async, back from device 1 to device 0; the async info belongs to the
    // source device, as in libomptarget.
    fillPattern(Src.get(), Size, Size + 18);
    ASSERT_EQ(P->data_submit(1, T1, Src.get(), Size), OFFLOAD_SUCCESS);
    AsyncTy AI(P, 1);
    ASSERT_EQ(P->data_exchange_async(1, T1, 0, T0, Size, &AI),
              OFFLOAD_SUCCESS);
    ASSERT_EQ(P->synchronize(1, &AI), OFFLOAD_SUCCESS);
    EXPECT_EQ(AI.queue(), nullptr);
    ASSERT_EQ(P->data_retrieve(0, Dst.get(), T0, Size), OFFLOAD_SUCCESS);
    EXPECT_TRUE(hasPattern(Dst.get(), Size, Size + 18)) << "async exchange";
    EXPECT_TRUE(release(T0));
    EXPECT_TRUE(release(T1));
  }
}

} // namespace offloadio::conformance

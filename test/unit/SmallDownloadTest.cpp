// SPDX-License-Identifier: Apache-2.0
//
// Small downloads from unlocked memory on a backend whose driver stages
// pageable copies (the CUDA plugin's case, set through FakeDevice.h): the
// device copies into a pinned bounce buffer and the bytes reach the
// caller's memory when the owner of the async info synchronizes or finds it
// complete by query (StreamTy::deferUntilComplete), or before any event
// recorded behind the download completes (another thread may order its work
// on that event). Checked: the data, that nothing is copied out before, that more downloads than bounce buffers on
// one stream neither wait nor fail, that a refused pinned allocation only
// costs the speed-up, and that a stream nobody synchronized still gives its
// buffers back at deinit.
#include "FakeDevice.h"

#include "gtest/gtest.h"

#include <cstring>
#include <vector>

using namespace offloadio;
using namespace offloadio::unittest;

namespace {

class SmallDownloadTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(bool(Plugin.init()));
    Device = std::make_unique<FakeDeviceTy>(Plugin, /*HostAddressable=*/true);
    Device->PageableCaptureLimit = 64 << 10;
    ASSERT_FALSE(bool(Device->init()));
    Tgt = static_cast<char *>(
        cantFail(Device->dataAlloc(Size, nullptr, AllocKindTy::Device)));
    for (size_t I = 0; I < Size; ++I)
      Tgt[I] = char(I * 7 + 3);
  }
  void TearDown() override {
    EXPECT_FALSE(bool(Device->dataDelete(Tgt, AllocKindTy::Device)));
    EXPECT_FALSE(bool(Device->deinit()));
    EXPECT_EQ(Device->live(AllocKindTy::Host), 0u)
        << "a bounce buffer outlived the device";
  }

  uint64_t stagedDownloads() const {
    return Device->getCounters()
        .Operations[unsigned(TransferPathTy::PageableFromDevice)]
        .load();
  }

  static constexpr size_t Size = 256 << 10;
  FakePluginTy Plugin;
  std::unique_ptr<FakeDeviceTy> Device;
  char *Tgt = nullptr;
};

TEST_F(SmallDownloadTest, CopiedOutWhenTheOwnerSynchronizes) {
  std::vector<char> Back(4096, 'x');
  __tgt_async_info Async{nullptr};
  ASSERT_FALSE(bool(Device->dataRetrieve(Back.data(), Tgt + 100, 4096, &Async)));
  ASSERT_NE(Async.Queue, nullptr);
  // The device may well be done, but the bytes stay in the bounce buffer
  // until the owner synchronizes.
  EXPECT_EQ(Back, std::vector<char>(4096, 'x'));
  EXPECT_EQ(Device->live(AllocKindTy::Host), 1u) << "one bounce buffer";
  ASSERT_FALSE(bool(Device->synchronize(Async)));
  EXPECT_EQ(Async.Queue, nullptr);
  EXPECT_EQ(std::memcmp(Back.data(), Tgt + 100, 4096), 0);
  EXPECT_EQ(stagedDownloads(), 1u);
  // The synchronous entry point waits itself.
  std::vector<char> Sync(64);
  ASSERT_FALSE(bool(Device->dataRetrieve(Sync.data(), Tgt + 5, 64, nullptr)));
  EXPECT_EQ(std::memcmp(Sync.data(), Tgt + 5, 64), 0);
}

TEST_F(SmallDownloadTest, CopiedOutWhenAQueryFindsTheWorkDone) {
  std::vector<char> Back(1000, 0);
  __tgt_async_info Async{nullptr};
  ASSERT_FALSE(bool(Device->dataRetrieve(Back.data(), Tgt, 1000, &Async)));
  for (int I = 0; I < 100000 && Async.Queue; ++I)
    ASSERT_FALSE(bool(Device->queryAsync(Async)));
  ASSERT_EQ(Async.Queue, nullptr) << "the stream never completed";
  EXPECT_EQ(std::memcmp(Back.data(), Tgt, 1000), 0);
}

TEST_F(SmallDownloadTest, CopiedOutBeforeAnEventRecordedBehindIt) {
  // libomptarget records an event after a mapping's download and other
  // threads wait for that event, not for this stream's synchronize: once the
  // event is complete the bytes must be in place.
  std::vector<char> Back(4096, 'x');
  __tgt_async_info Async{nullptr};
  ASSERT_FALSE(bool(Device->dataRetrieve(Back.data(), Tgt + 9, 4096, &Async)));
  auto Event = Device->createEvent();
  ASSERT_TRUE(bool(Event)) << takeErrorMessage(Event.takeError());
  ASSERT_FALSE(bool(Device->recordEvent(**Event, Async)));
  ASSERT_FALSE(bool(Device->syncEvent(**Event)));
  EXPECT_EQ(std::memcmp(Back.data(), Tgt + 9, 4096), 0)
      << "the event completed with the bytes still in the bounce buffer";
  // A download after the event is deferred again, and the owner's
  // synchronize still copies it out and returns every buffer.
  std::vector<char> Later(64, 'y');
  ASSERT_FALSE(bool(Device->dataRetrieve(Later.data(), Tgt, 64, &Async)));
  ASSERT_FALSE(bool(Device->synchronize(Async)));
  EXPECT_EQ(std::memcmp(Later.data(), Tgt, 64), 0);
  EXPECT_EQ(stagedDownloads(), 2u);
  ASSERT_FALSE(bool(Device->destroyEvent(**Event)));
}

TEST_F(SmallDownloadTest, MoreDownloadsThanBuffersOnOneStreamNeverWait) {
  // Each download wants a bounce buffer that only comes back at the
  // synchronize below: past the pool's size they must go to the stream
  // directly rather than wait.
  const unsigned N = GenericDeviceTy::MaxSmallDownloadBuffers + 9;
  std::vector<std::vector<char>> Backs(N, std::vector<char>(512, 0));
  __tgt_async_info Async{nullptr};
  for (unsigned I = 0; I < N; ++I)
    ASSERT_FALSE(bool(
        Device->dataRetrieve(Backs[I].data(), Tgt + I * 512, 512, &Async)));
  EXPECT_EQ(Device->live(AllocKindTy::Host),
            GenericDeviceTy::MaxSmallDownloadBuffers);
  ASSERT_FALSE(bool(Device->synchronize(Async)));
  for (unsigned I = 0; I < N; ++I)
    EXPECT_EQ(std::memcmp(Backs[I].data(), Tgt + I * 512, 512), 0) << I;
  EXPECT_EQ(stagedDownloads(), N);
  // The buffers came back and serve the next round.
  ASSERT_FALSE(bool(Device->dataRetrieve(Backs[0].data(), Tgt, 512, &Async)));
  ASSERT_FALSE(bool(Device->synchronize(Async)));
  EXPECT_EQ(Device->live(AllocKindTy::Host),
            GenericDeviceTy::MaxSmallDownloadBuffers);
}

TEST_F(SmallDownloadTest, RefusedBounceBufferFallsBackToTheStream) {
  Device->PinnedAllocsLeft = 0;
  std::vector<char> Back(2048, 0);
  ASSERT_FALSE(bool(Device->dataRetrieve(Back.data(), Tgt + 7, 2048, nullptr)));
  EXPECT_EQ(std::memcmp(Back.data(), Tgt + 7, 2048), 0);
  EXPECT_GE(Device->RefusedAllocs.load(), 1u);
  EXPECT_EQ(Device->live(AllocKindTy::Host), 0u);
  Device->PinnedAllocsLeft = -1;
}

TEST_F(SmallDownloadTest, LargerDownloadsAreNotDeferred) {
  // Above the small-copy size the ordinary staged path copies out before
  // synchronize returns, as before; nothing is left deferred.
  std::vector<char> Back(Size, 0);
  __tgt_async_info Async{nullptr};
  ASSERT_FALSE(bool(Device->dataRetrieve(Back.data(), Tgt, Size, &Async)));
  ASSERT_FALSE(bool(Device->synchronize(Async)));
  EXPECT_EQ(std::memcmp(Back.data(), Tgt, Size), 0);
}

TEST_F(SmallDownloadTest, NeverSynchronizedStreamReturnsItsBufferAtDeinit) {
  // The destination dies before the device does, as the buffers of a
  // program that never waited for its download would at exit.
  {
    std::vector<char> Back(256, 0);
    __tgt_async_info Async{nullptr};
    ASSERT_FALSE(bool(Device->dataRetrieve(Back.data(), Tgt, 256, &Async)));
    ASSERT_NE(Async.Queue, nullptr);
  }
  // No synchronize: deinit must drain the stream and free the buffer,
  // without writing to the dead destination (ASan builds would catch it)
  // and without reporting the buffer busy.
  EXPECT_FALSE(bool(Device->deinit()));
  EXPECT_EQ(Device->live(AllocKindTy::Host), 0u);
  ASSERT_FALSE(bool(Device->init()));
}

} // namespace

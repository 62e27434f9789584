// SPDX-License-Identifier: Apache-2.0
//
// The resource caps: the staging pool (OFFLOADIO_STAGING_BUFFERS and
// OFFLOADIO_STAGING_POOL_MAX) waits at its cap and never allocates past it,
// without deadlock even for one caller that needs more buffers than the
// pool holds, and copies through a capped pool are exact; the file engine's
// outstanding requests (OMPX_IO_MAX_REQUESTS) are capped, a submission past
// the cap fails at once with EAGAIN and a message naming the setting, and
// every way a request ends gives its slot back. Every wait is bounded.
#include "BoundedWait.h"
#include "FakeDevice.h"
#include "FakeSys.h"
#include "TestPinnedPools.h"

#include "offloadio/Envar.h"
#include "offloadio/StagingPool.h"
#include "offloadio/io/IOEngine.h"

#include "gtest/gtest.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <future>
#include <mutex>
#include <set>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace offloadio;
using namespace offloadio::unittest;

namespace {

char pat(size_t O) { return char(O * 7 + (O >> 9) * 13 + 1); }

//===----------------------------------------------------------------------===//
// Staging pool
//===----------------------------------------------------------------------===//

/// malloc-backed buffers, counting what is live and the most ever live.
struct CountingAllocatorTy {
  std::atomic<unsigned> Live{0}, Peak{0}, Calls{0};
  TestPinnedAllocFnTy alloc() {
    return [this](size_t Bytes) -> Expected<void *> {
      ++Calls;
      unsigned Now = ++Live, Seen = Peak.load();
      while (Now > Seen && !Peak.compare_exchange_weak(Seen, Now))
        ;
      return std::malloc(Bytes);
    };
  }
  TestPinnedFreeFnTy free() {
    return [this](void *Ptr) -> Error {
      --Live;
      std::free(Ptr);
      return Error::success();
    };
  }
  /// A pinned pool over alloc() and free(), without a cap.
  PinnedPoolTy &pool() { return Pools.make(alloc(), free()); }
  TestPinnedPoolsTy Pools;
};

TEST(StagingPoolCapTest, LeaseAtTheCapWaitsForAReturn) {
  CountingAllocatorTy A;
  StagingPoolTy Pool(4096, 2, A.pool());
  auto B1 = Pool.acquire(), B2 = Pool.acquire();
  ASSERT_TRUE(B1 && B2);
  std::atomic<bool> Got{false};
  auto Third = std::async(std::launch::async, [&] {
    auto B = Pool.acquire();
    Got = true;
    return B ? *B : nullptr;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(Got.load()) << "a third lease was served past a cap of 2";
  Pool.release(*B2);
  EXPECT_EQ(within(Third, "third lease", 20), *B2);
  EXPECT_EQ(Pool.allocated(), 2u);
  EXPECT_EQ(A.Calls.load(), 2u);
  Pool.release(*B1);
  Pool.release(*B2);
  EXPECT_FALSE(bool(Pool.clear()));
  EXPECT_EQ(A.Live.load(), 0u);
}

TEST(StagingPoolCapTest, ManyThreadsNeverAllocatePastTheCap) {
  CountingAllocatorTy A;
  StagingPoolTy Pool(4096, 3, A.pool());
  std::atomic<unsigned> Held{0}, MostHeld{0};
  auto Worker = [&] {
    for (int I = 0; I < 2000; ++I) {
      auto B = Pool.acquire();
      if (!B)
        return false;
      unsigned Now = ++Held, Seen = MostHeld.load();
      while (Now > Seen && !MostHeld.compare_exchange_weak(Seen, Now))
        ;
      std::memset((*B)->Ptr, I, 64);
      --Held;
      Pool.release(*B);
    }
    return true;
  };
  std::vector<std::future<bool>> Threads;
  for (int T = 0; T < 8; ++T)
    Threads.push_back(std::async(std::launch::async, Worker));
  for (auto &T : Threads)
    EXPECT_TRUE(within(T, "worker", 20));
  EXPECT_LE(A.Peak.load(), 3u);
  EXPECT_LE(MostHeld.load(), 3u);
  EXPECT_EQ(Pool.allocated(), A.Calls.load());
  EXPECT_FALSE(bool(Pool.clear()));
}

TEST(StagingPoolCapTest, OneCallerNeedingMoreBuffersThanTheCapCompletes) {
  // The staged-copy pattern: lease, fill, hand the buffer to a stream whose
  // callback returns it, lease the next. 64 chunks through 2 buffers: the
  // caller waits for the stream, never for itself.
  CountingAllocatorTy A;
  StagingPoolTy Pool(4096, 2, A.pool());
  host::HostStreamTy Stream;
  const size_t Chunks = 64, Size = Chunks * 4096;
  std::vector<char> Src(Size), Dst(Size, 0);
  for (size_t I = 0; I < Size; ++I)
    Src[I] = pat(I);
  auto Copy = std::async(std::launch::async, [&]() -> bool {
    for (size_t C = 0; C < Chunks; ++C) {
      auto B = Pool.acquire();
      if (!B)
        return false;
      std::memcpy((*B)->Ptr, Src.data() + C * 4096, 4096);
      if (auto Err = Stream.copyAsync(Dst.data() + C * 4096, (*B)->Ptr, 4096,
                                      CopyKindTy::HostToDevice)) {
        llvm::consumeError(std::move(Err));
        return false;
      }
      if (auto Err =
              Stream.hostCallback(StagingPoolTy::releaseCallback, *B)) {
        llvm::consumeError(std::move(Err));
        return false;
      }
    }
    return !Stream.synchronize();
  });
  EXPECT_TRUE(within(Copy, "64 staged chunks through 2 buffers", 20));
  EXPECT_EQ(std::memcmp(Src.data(), Dst.data(), Size), 0);
  EXPECT_LE(A.Peak.load(), 2u);
  EXPECT_FALSE(bool(Pool.clear()));
}

/// A device with the staging environment of the test, staged copies only.
class StagingCapDeviceTest : public ::testing::Test {
protected:
  void TearDown() override {
    if (Device)
      EXPECT_FALSE(bool(Device->deinit()));
    for (const char *V :
         {"OFFLOADIO_STAGING_BUFFER_SIZE", "OFFLOADIO_STAGING_BUFFERS",
          "OFFLOADIO_STAGING_POOL_MAX", "OFFLOADIO_PAGEABLE_PATH",
          "OFFLOADIO_PARALLEL_STAGING_THRESHOLD"})
      unsetenv(V);
  }
  void start() {
    ASSERT_FALSE(bool(Plugin.init()));
    Device = std::make_unique<FakeDeviceTy>(Plugin, /*HostAddressable=*/true);
    ASSERT_FALSE(bool(Device->init()));
  }

  FakePluginTy Plugin;
  std::unique_ptr<FakeDeviceTy> Device;
};

TEST_F(StagingCapDeviceTest, PoolMaxBoundsTheBuffersWhateverTheirCount) {
  setenv("OFFLOADIO_STAGING_BUFFER_SIZE", "16K", 1);
  setenv("OFFLOADIO_STAGING_BUFFERS", "64", 1);
  setenv("OFFLOADIO_STAGING_POOL_MAX", "48K", 1);
  start();
  EXPECT_EQ(Device->getStagingPool().getMaxBuffers(), 3u);
  EXPECT_EQ(Device->getStagingPool().getBufferSize(), 16u << 10);
}

TEST_F(StagingCapDeviceTest, DefaultsKeepThirtyTwoBuffersOfTwoMiB) {
  start();
  EXPECT_EQ(Device->getStagingPool().getMaxBuffers(), 32u);
  EXPECT_EQ(Device->getStagingPool().getBufferSize(), 2u << 20);
}

TEST_F(StagingCapDeviceTest, PoolMaxBelowOneBufferIsReportedAndIgnored) {
  setenv("OFFLOADIO_STAGING_BUFFER_SIZE", "64K", 1);
  setenv("OFFLOADIO_STAGING_POOL_MAX", "32K", 1);
  ::testing::internal::CaptureStderr();
  start();
  std::string Err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(Err.find("ignoring OFFLOADIO_STAGING_POOL_MAX='32K': expected a "
                     "size from 65536"),
            std::string::npos)
      << Err;
  // The default cap (256 MiB) leaves the 32 buffers.
  EXPECT_EQ(Device->getStagingPool().getMaxBuffers(), 32u);
}

TEST_F(StagingCapDeviceTest, CopiesThroughAOneBufferPoolFromManyThreads) {
  // One 4 KiB bounce buffer for the whole device; 8 threads copy 100 KiB
  // both ways, synchronously and on their own async infos, through it.
  setenv("OFFLOADIO_STAGING_BUFFER_SIZE", "4K", 1);
  setenv("OFFLOADIO_STAGING_POOL_MAX", "4K", 1);
  setenv("OFFLOADIO_PAGEABLE_PATH", "staged", 1);
  start();
  ASSERT_EQ(Device->getStagingPool().getMaxBuffers(), 1u);
  const size_t Size = 100 * 1024 + 17;
  auto Worker = [&](unsigned T) -> bool {
    std::vector<char> Src(Size), Back(Size);
    for (size_t I = 0; I < Size; ++I)
      Src[I] = pat(I + T);
    auto Dev = Device->dataAlloc(Size, nullptr, AllocKindTy::Device);
    if (!Dev) {
      llvm::consumeError(Dev.takeError());
      return false;
    }
    bool Ok = true;
    for (int Round = 0; Round < 5 && Ok; ++Round) {
      __tgt_async_info Async{nullptr};
      __tgt_async_info *AI = Round % 2 ? &Async : nullptr;
      Error Err = Device->dataSubmit(*Dev, Src.data(), Size, AI);
      if (!Err)
        Err = Device->dataRetrieve(Back.data(), *Dev, Size, AI);
      if (!Err && AI)
        Err = Device->synchronize(Async);
      Ok = !Err && std::memcmp(Src.data(), Back.data(), Size) == 0;
      llvm::consumeError(std::move(Err));
      std::memset(Back.data(), 0, Size);
    }
    Ok &= !Device->dataDelete(*Dev, AllocKindTy::Device);
    return Ok;
  };
  std::vector<std::future<bool>> Threads;
  for (unsigned T = 0; T < 8; ++T)
    Threads.push_back(std::async(std::launch::async, Worker, T));
  for (auto &T : Threads)
    EXPECT_TRUE(within(T, "copies through one bounce buffer", 20));
  EXPECT_EQ(Device->getStagingPool().allocated(), 1u);
  EXPECT_EQ(Device->live(AllocKindTy::Host), 1u);
}

TEST(StagingParallelTest, LargeCopiesThroughAFewBuffersFromManyThreadsAreExact) {
  // Large copies take the parallel route: the copy threads memcpy into
  // bounce buffers handed back by event (uploads), and keep one download
  // DMA queued while they copy another out. Three 4 KiB buffers for four
  // copy threads plus the callers: every wait at the cap must end, and
  // every byte arrive.
  const char *Vars[][2] = {{"OFFLOADIO_STAGING_BUFFER_SIZE", "4K"},
                           {"OFFLOADIO_STAGING_POOL_MAX", "12K"},
                           {"OFFLOADIO_PARALLEL_STAGING_THRESHOLD", "8K"},
                           {"OFFLOADIO_COPY_THREADS", "4"}};
  for (auto &V : Vars)
    setenv(V[0], V[1], 1);
  {
    FakePluginTy Plugin;
    ASSERT_FALSE(bool(Plugin.init()));
    FakeDeviceTy Device(Plugin, /*HostAddressable=*/true);
    ASSERT_FALSE(bool(Device.init()));
    ASSERT_EQ(Device.getStagingPool().getMaxBuffers(), 3u);
    const size_t Size = (1 << 20) + 17;
    auto Worker = [&](unsigned T) -> bool {
      std::vector<char> Src(Size), Back(Size);
      for (size_t I = 0; I < Size; ++I)
        Src[I] = pat(I + T);
      auto Dev = Device.dataAlloc(Size, nullptr, AllocKindTy::Device);
      if (!Dev) {
        llvm::consumeError(Dev.takeError());
        return false;
      }
      bool Ok = true;
      for (int Round = 0; Round < 4 && Ok; ++Round) {
        __tgt_async_info Async{nullptr};
        __tgt_async_info *AI = Round % 2 ? &Async : nullptr;
        Error Err = Device.dataSubmit(*Dev, Src.data(), Size, AI);
        if (!Err)
          Err = Device.dataRetrieve(Back.data(), *Dev, Size, AI);
        if (!Err && AI)
          Err = Device.synchronize(Async);
        Ok = !Err && std::memcmp(Src.data(), Back.data(), Size) == 0;
        llvm::consumeError(std::move(Err));
        std::memset(Back.data(), 0, Size);
      }
      Ok &= !Device.dataDelete(*Dev, AllocKindTy::Device);
      return Ok;
    };
    std::vector<std::future<bool>> Threads;
    for (unsigned T = 0; T < 3; ++T)
      Threads.push_back(std::async(std::launch::async, Worker, T));
    for (auto &T : Threads)
      EXPECT_TRUE(
          within(T, "parallel staged copies through three buffers", 20));
    EXPECT_LE(Device.getStagingPool().allocated(), 3u);
    EXPECT_FALSE(bool(Device.deinit()));
  }
  for (auto &V : Vars)
    unsetenv(V[0]);
}

//===----------------------------------------------------------------------===//
// Outstanding file requests
//===----------------------------------------------------------------------===//

class RequestCapTest : public ::testing::Test {
protected:
  void SetUp() override {
    char Name[] = "/tmp/offloadio-request-cap-XXXXXX";
    Fd = ::mkstemp(Name);
    ASSERT_GE(Fd, 0);
    ::unlink(Name);
    std::vector<char> F(FileSize);
    for (size_t I = 0; I < FileSize; ++I)
      F[I] = pat(I);
    ASSERT_EQ(::pwrite(Fd, F.data(), FileSize, 0), ssize_t(FileSize));
    Device = std::make_unique<FakeDeviceTy>(Plugin, /*HostAddressable=*/true);
    Buf = Device->alloc(FileSize);
  }
  void TearDown() override {
    Engine.reset();
    ::close(Fd);
  }
  IOEngineTy &engine(unsigned MaxRequests) {
    IOConfigTy C;
    C.Threads = 2;
    C.ChunkSize = 64 << 10;
    C.MaxRequests = MaxRequests;
    Engine = std::make_unique<IOEngineTy>(Device->io(), Sys, nullptr, C);
    return *Engine;
  }
  Expected<std::unique_ptr<IORequestTy>> read(size_t Offset, size_t Count) {
    return Engine->submit(IORequestTy::Read, Fd, Buf + Offset, Count,
                          off_t(Offset));
  }
  size_t mismatches(size_t Offset, size_t Count) const {
    size_t Bad = 0;
    for (size_t I = Offset; I < Offset + Count; ++I)
      Bad += Buf[I] != pat(I);
    return Bad;
  }

  static constexpr size_t FileSize = 1 << 20;
  FakePluginTy Plugin;
  CountingSysTy Sys;
  std::unique_ptr<FakeDeviceTy> Device;
  std::unique_ptr<IOEngineTy> Engine;
  char *Buf = nullptr;
  int Fd = -1;
};

TEST_F(RequestCapTest, SubmissionPastTheCapFailsWithEagainAndSaysWhy) {
  IOEngineTy &E = engine(3);
  std::vector<std::unique_ptr<IORequestTy>> Held;
  for (int I = 0; I < 3; ++I) {
    auto R = read(I * 4096, 4096);
    ASSERT_TRUE(bool(R)) << takeErrorMessage(R.takeError());
    Held.push_back(std::move(*R));
  }
  EXPECT_EQ(E.outstandingRequests(), 3u);
  // Completed but not yet waited for still counts: they hold descriptors.
  for (auto &R : Held)
    while (!R->isDone())
      std::this_thread::yield();
  auto Refused = read(3 * 4096, 4096);
  ASSERT_FALSE(bool(Refused));
  ErrorDetailsTy D = takeErrorDetails(Refused.takeError());
  EXPECT_EQ(D.Errno, EAGAIN);
  EXPECT_NE(D.Message.find("read of 4096 bytes on device 0: 3 requests are "
                           "outstanding, the OMPX_IO_MAX_REQUESTS limit"),
            std::string::npos)
      << D.Message;
  EXPECT_EQ(E.outstandingRequests(), 3u);
  // Waiting for one and releasing it makes room.
  auto N = Held[1]->wait();
  ASSERT_TRUE(bool(N));
  EXPECT_EQ(*N, 4096u);
  Held[1].reset();
  EXPECT_EQ(E.outstandingRequests(), 2u);
  auto Again = read(3 * 4096, 4096);
  ASSERT_TRUE(bool(Again)) << takeErrorMessage(Again.takeError());
  Held[1] = std::move(*Again);
  for (auto &R : Held) {
    auto M = R->wait();
    ASSERT_TRUE(bool(M));
    EXPECT_EQ(*M, 4096u);
  }
  Held.clear();
  EXPECT_EQ(E.outstandingRequests(), 0u);
  EXPECT_EQ(mismatches(0, 4 * 4096), 0u);
}

TEST_F(RequestCapTest, EveryEndOfARequestGivesItsSlotBack) {
  IOEngineTy &E = engine(2);
  // Refused at validation: no slot taken.
  for (int I = 0; I < 100; ++I) {
    auto R = Engine->submit(IORequestTy::Read, -1, Buf, 10, 0);
    ASSERT_FALSE(bool(R));
    EXPECT_EQ(takeErrorDetails(R.takeError()).Errno, EBADF);
  }
  // Refused when the descriptor cannot be duplicated: the slot comes back.
  Sys.DupErrno = EMFILE;
  for (int I = 0; I < 100; ++I) {
    auto R = read(0, 10);
    ASSERT_FALSE(bool(R));
    EXPECT_EQ(takeErrorDetails(R.takeError()).Errno, EMFILE);
  }
  Sys.DupErrno = 0;
  EXPECT_EQ(E.outstandingRequests(), 0u);
  // Zero-byte requests, dropped without a wait, and waited ones.
  for (int I = 0; I < 100; ++I) {
    auto Empty = read(0, 0);
    ASSERT_TRUE(bool(Empty));
    auto Dropped = read(I * 1000, 1000);
    ASSERT_TRUE(bool(Dropped)) << takeErrorMessage(Dropped.takeError());
    EXPECT_EQ(E.outstandingRequests(), 2u);
  }
  EXPECT_EQ(E.outstandingRequests(), 0u);
}

TEST_F(RequestCapTest, ConcurrentSubmittersStayUnderTheCapAndReadExactly) {
  // 8 threads, 4 slots: each thread reads its slice in 64 requests, keeping
  // up to 3 in flight and retrying on EAGAIN after waiting for its oldest.
  IOEngineTy &E = engine(4);
  std::atomic<unsigned> MostOutstanding{0}, Refusals{0};
  const size_t Slice = FileSize / 8, Piece = Slice / 64;
  auto Worker = [&](unsigned T) -> bool {
    std::vector<std::unique_ptr<IORequestTy>> Mine;
    size_t Next = 0;
    while (Next < 64 || !Mine.empty()) {
      if (Next < 64 && Mine.size() < 3) {
        auto R = read(T * Slice + Next * Piece, Piece);
        if (R) {
          unsigned Now = E.outstandingRequests(),
                   Seen = MostOutstanding.load();
          while (Now > Seen && !MostOutstanding.compare_exchange_weak(Seen, Now))
            ;
          Mine.push_back(std::move(*R));
          ++Next;
          continue;
        }
        ErrorDetailsTy D = takeErrorDetails(R.takeError());
        if (D.Errno != EAGAIN)
          return false;
        ++Refusals;
        if (Mine.empty()) {
          std::this_thread::yield();
          continue;
        }
      }
      if (Mine.empty())
        continue;
      auto N = Mine.front()->wait();
      if (!N || *N != Piece)
        return false;
      Mine.erase(Mine.begin());
    }
    return true;
  };
  std::vector<std::future<bool>> Threads;
  for (unsigned T = 0; T < 8; ++T)
    Threads.push_back(std::async(std::launch::async, Worker, T));
  for (auto &T : Threads)
    EXPECT_TRUE(within(T, "submitter", 20));
  EXPECT_LE(MostOutstanding.load(), 4u);
  EXPECT_GT(Refusals.load(), 0u) << "the cap was never reached";
  EXPECT_EQ(E.outstandingRequests(), 0u);
  EXPECT_EQ(mismatches(0, FileSize), 0u);
}

TEST(RequestCapConfigTest, FromEnvDefaultValidAndInvalid) {
  unsetenv("OMPX_IO_MAX_REQUESTS");
  EXPECT_EQ(IOConfigTy::fromEnv().MaxRequests, 256u);
  setenv("OMPX_IO_MAX_REQUESTS", "4096", 1);
  EXPECT_EQ(IOConfigTy::fromEnv().MaxRequests, 4096u);
  for (const char *Bad : {"0", "-3", "lots"}) {
    setenv("OMPX_IO_MAX_REQUESTS", Bad, 1);
    ::testing::internal::CaptureStderr();
    EXPECT_EQ(IOConfigTy::fromEnv().MaxRequests, 256u) << Bad;
    std::string Err = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(Err.find(std::string("ignoring OMPX_IO_MAX_REQUESTS='") + Bad +
                       "': expected an integer from 1 to 1048576; using 256"),
              std::string::npos)
        << Err;
  }
  unsetenv("OMPX_IO_MAX_REQUESTS");
}

} // namespace

// SPDX-License-Identifier: Apache-2.0
//
// The completion notification of IORequestTy (notifyWhenDone): run exactly
// once, by the thread that completes the request or at once by the one that
// registers it on a request that is done, and free to release the request.
// First on bare requests whose chunks the test finishes from racing
// threads, then through a real engine (fake device, real file) whose
// workers run the notifications.
#include "FakeDevice.h"

#include "offloadio/io/IOEngine.h"
#include "offloadio/io/IORequest.h"
#include "offloadio/io/Sys.h"

#include "gtest/gtest.h"

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <random>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace offloadio;
using namespace offloadio::unittest;

namespace {

constexpr size_t Chunk = 4096;

/// A queued read of \p Chunks chunks that no engine serves: the test
/// finishes its chunks.
std::unique_ptr<IORequestTy> bareRequest(size_t Chunks) {
  auto R = std::make_unique<IORequestTy>(IORequestTy::Read, -1, nullptr,
                                         Chunks * Chunk, 0,
                                         IOPathTy::HostAddressable, Chunk);
  if (Chunks)
    R->markQueued();
  return R;
}

/// What a notification saw.
struct SeenTy {
  std::atomic<unsigned> Calls{0};
  std::thread::id Thread;
};

void countCall(void *Arg) {
  auto *S = static_cast<SeenTy *>(Arg);
  S->Thread = std::this_thread::get_id();
  S->Calls.fetch_add(1);
}

int errnoOf(Error E) { return takeErrorDetails(std::move(E)).Errno; }

TEST(IORequestNotifyTest, RegisteredBeforeCompletionRunsInTheFinishingThread) {
  auto R = bareRequest(3);
  SeenTy Seen;
  ASSERT_FALSE(bool(R->notifyWhenDone({countCall, &Seen})));
  R->finishChunks(2);
  EXPECT_EQ(Seen.Calls.load(), 0u) << "ran before the last chunk";
  std::thread::id Finisher;
  std::thread T([&] {
    Finisher = std::this_thread::get_id();
    R->finishChunks(1);
  });
  T.join();
  EXPECT_EQ(Seen.Calls.load(), 1u);
  EXPECT_EQ(Seen.Thread, Finisher);
  EXPECT_TRUE(R->isDone());
}

TEST(IORequestNotifyTest, RegisteredAfterCompletionRunsAtOnceInTheCaller) {
  auto R = bareRequest(2);
  R->finishChunks(2);
  SeenTy Seen;
  ASSERT_FALSE(bool(R->notifyWhenDone({countCall, &Seen})));
  EXPECT_EQ(Seen.Calls.load(), 1u);
  EXPECT_EQ(Seen.Thread, std::this_thread::get_id());
}

TEST(IORequestNotifyTest, RequestOfNoChunksRunsAtOnce) {
  auto R = bareRequest(0);
  SeenTy Seen;
  ASSERT_FALSE(bool(R->notifyWhenDone({countCall, &Seen})));
  EXPECT_EQ(Seen.Calls.load(), 1u);
  auto N = R->wait();
  ASSERT_TRUE(bool(N));
  EXPECT_EQ(*N, 0u);
}

TEST(IORequestNotifyTest, SecondNotificationAndNoFunctionAreEINVAL) {
  auto R = bareRequest(1);
  SeenTy Seen;
  EXPECT_EQ(errnoOf(R->notifyWhenDone({nullptr, &Seen})), EINVAL);
  ASSERT_FALSE(bool(R->notifyWhenDone({countCall, &Seen})));
  EXPECT_EQ(errnoOf(R->notifyWhenDone({countCall, &Seen})), EINVAL);
  R->finishChunks(1);
  EXPECT_EQ(Seen.Calls.load(), 1u) << "the first notification only";
}

/// Released by its notification: checks the result, then destroys the
/// request, as __tgt_rtl_ompx_io_wait does.
struct ReleasingTy {
  IORequestTy *Request = nullptr;
  size_t Expected = 0;
  std::atomic<unsigned> *Calls = nullptr;
  std::atomic<unsigned> *Wrong = nullptr;
};

void releaseRequest(void *Arg) {
  auto *Rel = static_cast<ReleasingTy *>(Arg);
  std::unique_ptr<IORequestTy> R(Rel->Request);
  auto N = R->wait();
  if (!N || *N != Rel->Expected) {
    llvm::consumeError(N.takeError());
    Rel->Wrong->fetch_add(1);
  }
  R.reset();
  Rel->Calls->fetch_add(1);
}

TEST(IORequestNotifyTest, RacingRegistrationAndCompletionRunItOnce) {
  // Requests whose chunks several threads finish while another registers a
  // notification that releases the request: before, during or after the
  // last chunk, at random. Each must run exactly once, and ASan sees any
  // use of the request after its release.
  std::mt19937 Rng(20250611);
  constexpr unsigned Rounds = 400;
  std::atomic<unsigned> Calls{0}, Wrong{0};
  std::vector<ReleasingTy> Releases(Rounds);
  for (unsigned Round = 0; Round < Rounds; ++Round) {
    size_t Chunks = 1 + Rng() % 8;
    unsigned Finishers = 1 + Rng() % 4;
    IORequestTy *R = bareRequest(Chunks).release();
    for (size_t I = 0; I < Chunks; ++I)
      R->recordChunk(I, Chunk);
    Releases[Round] = {R, Chunks * Chunk, &Calls, &Wrong};
    std::atomic<size_t> Left{Chunks};
    std::vector<std::thread> Threads;
    for (unsigned T = 0; T < Finishers; ++T)
      Threads.emplace_back([&] {
        // Claims as the queue hands them out: each chunk finished once.
        while (true) {
          size_t Before = Left.load();
          if (Before == 0 || Left.compare_exchange_weak(Before, Before - 1)) {
            if (Before == 0)
              return;
            R->finishChunks(1);
          }
        }
      });
    unsigned Spin = Rng() % 2000;
    Threads.emplace_back([&, Spin] {
      for (volatile unsigned I = 0; I < Spin; ++I)
        ;
      if (auto Err = R->notifyWhenDone({releaseRequest, &Releases[Round]}))
        ADD_FAILURE() << llvm::toString(std::move(Err));
    });
    for (auto &T : Threads)
      T.join();
    ASSERT_EQ(Calls.load(), Round + 1) << "round " << Round;
  }
  EXPECT_EQ(Wrong.load(), 0u);
}

//===----------------------------------------------------------------------===//
// Through the engine
//===----------------------------------------------------------------------===//

class IOEngineNotifyTest : public ::testing::TestWithParam<int> {
protected:
  void SetUp() override {
    char Path[] = "/tmp/offloadio-notify-XXXXXX";
    Fd = ::mkstemp(Path);
    ASSERT_GE(Fd, 0);
    ::unlink(Path);
    File.resize(FileSize);
    for (size_t I = 0; I < FileSize; ++I)
      File[I] = char(I * 13 + (I >> 9));
    ASSERT_EQ(::pwrite(Fd, File.data(), FileSize, 0), ssize_t(FileSize));
    IOConfigTy C;
    C.Threads = 4;
    C.ChunkSize = Chunk;
    C.RingDepth = 2;
    C.ForcedPath = GetParam();
    Device = std::make_unique<FakeDeviceTy>(Plugin, true);
    Engine = std::make_unique<IOEngineTy>(Device->io(), Sys, nullptr, C);
  }
  void TearDown() override {
    Engine.reset();
    if (Fd >= 0)
      ::close(Fd);
  }

  static constexpr size_t FileSize = 1 << 20;
  std::vector<char> File;
  FakePluginTy Plugin;
  SysTy Sys;
  std::unique_ptr<FakeDeviceTy> Device;
  std::unique_ptr<IOEngineTy> Engine;
  int Fd = -1;
};

/// One read whose notification takes its result and releases it.
struct NotifiedReadTy {
  IORequestTy *Request = nullptr;
  size_t Bytes = SIZE_MAX;
  std::mutex *Lock = nullptr;
  std::condition_variable *Done = nullptr;
  unsigned *Left = nullptr;
};

void finishRead(void *Arg) {
  auto *N = static_cast<NotifiedReadTy *>(Arg);
  std::unique_ptr<IORequestTy> R(N->Request);
  auto Bytes = R->wait();
  N->Bytes = Bytes ? *Bytes : SIZE_MAX - 1;
  llvm::consumeError(Bytes.takeError());
  R.reset();
  std::lock_guard<std::mutex> Guard(*N->Lock);
  if (--*N->Left == 0)
    N->Done->notify_all();
}

TEST_P(IOEngineNotifyTest, WorkersRunNotificationsThatReleaseTheRequests) {
  // Many threads submit reads and register notifications at once; the
  // engine's workers (or, for reads already done, the submitters) run
  // them, and each takes its result and destroys its request.
  constexpr unsigned Submitters = 8, PerThread = 16;
  constexpr unsigned Total = Submitters * PerThread;
  std::mt19937 Rng(7);
  char *Buf = Device->alloc(FileSize);
  ASSERT_NE(Buf, nullptr);
  std::vector<NotifiedReadTy> Reads(Total);
  std::vector<size_t> Offsets(Total), Counts(Total);
  for (unsigned I = 0; I < Total; ++I) {
    // Disjoint slices of the buffer, 8 KiB each, from anywhere in the file;
    // some are empty (no chunks: done at submission).
    Counts[I] = Rng() % 4 == 0 ? 0 : 1 + Rng() % 8192;
    Offsets[I] = Rng() % (FileSize - 8192);
  }
  std::mutex Lock;
  std::condition_variable Done;
  unsigned Left = Total;
  std::atomic<unsigned> Failed{0};
  std::vector<std::thread> Threads;
  for (unsigned T = 0; T < Submitters; ++T)
    Threads.emplace_back([&, T] {
      for (unsigned J = 0; J < PerThread; ++J) {
        unsigned I = T * PerThread + J;
        auto R = Engine->submit(IORequestTy::Read, Fd, Buf + I * 8192,
                                Counts[I], off_t(Offsets[I]));
        if (!R) {
          llvm::consumeError(R.takeError());
          Failed.fetch_add(1);
          continue;
        }
        Reads[I] = {R->get(), SIZE_MAX, &Lock, &Done, &Left};
        IORequestTy *Raw = R->release();
        if (auto Err = Raw->notifyWhenDone({finishRead, &Reads[I]})) {
          llvm::consumeError(std::move(Err));
          Failed.fetch_add(1);
        }
      }
    });
  for (auto &T : Threads)
    T.join();
  ASSERT_EQ(Failed.load(), 0u);
  {
    std::unique_lock<std::mutex> Guard(Lock);
    ASSERT_TRUE(Done.wait_for(Guard, std::chrono::seconds(60),
                              [&] { return Left == 0; }));
  }
  EXPECT_EQ(Engine->outstandingRequests(), 0u) << "every request released";
  for (unsigned I = 0; I < Total; ++I) {
    ASSERT_EQ(Reads[I].Bytes, Counts[I]) << "read " << I;
    EXPECT_EQ(std::memcmp(Buf + I * 8192, File.data() + Offsets[I], Counts[I]),
              0)
        << "read " << I;
  }
  Device->release(Buf);
}

INSTANTIATE_TEST_SUITE_P(Paths, IOEngineNotifyTest,
                         ::testing::Values(int(IOPathTy::HostAddressable),
                                           int(IOPathTy::Staged)));

} // namespace

// SPDX-License-Identifier: Apache-2.0
//
// A worker of the file engine goes on to its next read while the copies of
// the last one are still in flight, and finishes each read only once its
// copies have landed. The device's stream runs nothing until the test
// opens it: a worker that waited for the device at the end of each request
// would pread only the first of two reads meanwhile.
#include "BoundedWait.h"
#include "FakeSys.h"

#include "offloadio/PinnedPool.h"
#include "offloadio/io/IOBusyMemory.h"
#include "offloadio/io/IODevice.h"
#include "offloadio/io/IOEngine.h"
#include "offloadio/io/Sys.h"

#include "gtest/gtest.h"

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace offloadio;
using offloadio::unittest::CountingSysTy;
using offloadio::unittest::within;

namespace {

/// A stream whose work waits until open(); from then on it runs at once.
class GatedStreamTy;

/// Done once the stream has run everything queued before its record.
class GatedEventTy final : public EventTy {
public:
  explicit GatedEventTy(GatedStreamTy &Stream) : Stream(Stream) {}
  Error synchronize() override;
  Expected<bool> query() override;
  GatedStreamTy &Stream;
  uint64_t Mark = 0;
};

class GatedStreamTy final : public StreamTy {
public:
  Error copyAsync(void *Dst, const void *Src, size_t Size,
                  CopyKindTy) override {
    enqueue([=] { std::memcpy(Dst, Src, Size); });
    return Error::success();
  }
  Error recordEvent(EventTy &E) override {
    std::lock_guard<std::mutex> Guard(Lock);
    static_cast<GatedEventTy &>(E).Mark = Queued;
    return Error::success();
  }
  Error waitEvent(EventTy &) override { return Error::success(); }
  Error hostCallback(HostCallbackTy Fn, void *Data) override {
    enqueue([=] { llvm::consumeError(Fn(Data)); });
    return Error::success();
  }
  Error synchronize() override {
    std::unique_lock<std::mutex> Guard(Lock);
    CV.wait(Guard, [&] { return Ran == Queued; });
    ++Syncs;
    return Error::success();
  }
  Expected<bool> query() override {
    std::lock_guard<std::mutex> Guard(Lock);
    return Ran == Queued;
  }
  /// Run what is queued, and everything queued from now on at once.
  void open() {
    std::lock_guard<std::mutex> Guard(Lock);
    Open = true;
    runQueued();
  }
  bool ranUpTo(uint64_t Mark) {
    std::lock_guard<std::mutex> Guard(Lock);
    return Ran >= Mark;
  }
  void waitUpTo(uint64_t Mark) {
    std::unique_lock<std::mutex> Guard(Lock);
    CV.wait(Guard, [&] { return Ran >= Mark; });
  }
  unsigned Syncs = 0;
  /// Waits for events recorded behind at most this many operations report
  /// a failed copy.
  std::atomic<uint64_t> FailUpTo{0};

private:
  void enqueue(std::function<void()> Work) {
    std::lock_guard<std::mutex> Guard(Lock);
    Pending.push_back(std::move(Work));
    ++Queued;
    if (Open)
      runQueued();
  }
  void runQueued() {
    while (!Pending.empty()) {
      Pending.front()();
      Pending.pop_front();
      ++Ran;
    }
    CV.notify_all();
  }
  std::mutex Lock;
  std::condition_variable CV;
  std::deque<std::function<void()>> Pending;
  uint64_t Queued = 0, Ran = 0;
  bool Open = false;
};

Error GatedEventTy::synchronize() {
  Stream.waitUpTo(Mark);
  if (Mark <= Stream.FailUpTo)
    return makeError(ErrorCode::BackendError, "gated: the copy failed");
  return Error::success();
}

Expected<bool> GatedEventTy::query() { return Stream.ranUpTo(Mark); }

/// Device memory is host memory the test allocates; the host cannot
/// address it as such (the staged path serves every request).
class GatedDeviceTy final : public IODeviceTy, public PinnedAllocatorTy {
public:
  GatedDeviceTy() : Budget(1ULL << 30) {}
  ~GatedDeviceTy() override {
    for (void *P : Pinned)
      std::free(P);
  }
  int32_t getDeviceId() const override { return 0; }
  std::string getPluginName() const override { return "gated"; }
  bool hostCanAccessDeviceMemory() const override { return false; }
  std::optional<AllocationInfoTy>
  findAllocation(const void *Ptr) const override {
    return AllocationInfoTy{const_cast<void *>(Ptr), SIZE_MAX,
                            AllocKindTy::Device};
  }
  size_t bytesAvailableFrom(const void *) const override { return SIZE_MAX; }
  IOBusyMemoryTy &getIOBusyMemory() override { return Busy; }
  Expected<void *> allocatePinned(size_t Size) override {
    std::lock_guard<std::mutex> Guard(Lock);
    Pinned.push_back(std::malloc(Size));
    return Pinned.back();
  }
  Error freePinned(void *Ptr, size_t) override {
    std::lock_guard<std::mutex> Guard(Lock);
    for (void *&P : Pinned)
      if (P == Ptr) {
        std::free(P);
        P = nullptr;
      }
    return Error::success();
  }
  PinnedPoolTy &getPinnedPool() override { return PinnedMemory; }
  Expected<StreamTy *> acquireStream() override { return &Stream; }
  void releaseStream(StreamTy *) override {}
  Expected<EventTy *> acquireEvent() override {
    std::lock_guard<std::mutex> Guard(Lock);
    Events.push_back(std::make_unique<GatedEventTy>(Stream));
    return Events.back().get();
  }
  void releaseEvent(EventTy *) override {}

  GatedStreamTy Stream;

private:
  std::mutex Lock;
  PinnedBudgetTy Budget;
  PinnedPoolTy PinnedMemory{Budget, *this};
  IOBusyMemoryTy Busy;
  std::vector<void *> Pinned;
  std::vector<std::unique_ptr<GatedEventTy>> Events;
};

class IOWorkerOverlapTest : public ::testing::Test {
protected:
  static constexpr size_t Chunk = 64 << 10;

  void SetUp() override {
    char Path[] = "/tmp/offloadio-overlap-XXXXXX";
    Fd = mkstemp(Path);
    ASSERT_GE(Fd, 0);
    unlink(Path);
    File.resize(4 * Chunk);
    for (size_t I = 0; I < File.size(); ++I)
      File[I] = char(I * 131 + 7);
    ASSERT_EQ(::pwrite(Fd, File.data(), File.size(), 0),
              ssize_t(File.size()));
    IOConfigTy Config;
    Config.Threads = 1;
    Config.ChunkSize = Chunk;
    Config.RingDepth = 4;
    Config.ForcedPath = int(IOPathTy::Staged);
    // The worker's first pread waits for Sys.openGate(), so that a test can
    // queue several requests before the worker ends the first.
    Sys.closeGate();
    Engine = std::make_unique<IOEngineTy>(Device, Sys, nullptr, Config);
  }
  void TearDown() override {
    Sys.openGate();
    Device.Stream.open();
    Engine.reset();
    ::close(Fd);
  }

  /// Reads of chunks 0 and 1, both queued while the worker's first pread
  /// waits for Sys.openGate(), so that the worker finds the second before it
  /// could wait for the first one's copies. Going away, it opens the stream
  /// and releases the preads before its requests (whose destruction waits
  /// for them) go, also when a test returns early.
  struct TwoReadsTy {
    IOWorkerOverlapTest &T;
    std::unique_ptr<IORequestTy> R0 = T.read(0), R1 = T.read(1);
    ~TwoReadsTy() {
      T.Sys.openGate();
      T.Device.Stream.open();
    }
  };

  /// Read chunk \p I of the file into Dev[I].
  std::unique_ptr<IORequestTy> read(size_t I) {
    auto R = Engine->submit(IORequestTy::Read, Fd, Dev[I].data(), Chunk,
                            off_t(I * Chunk));
    EXPECT_TRUE(bool(R)) << (R ? "" : toString(R.takeError()));
    return R ? std::move(*R) : nullptr;
  }

  /// The result of \p R, waited for boundedly.
  Expected<size_t> waitFor(IORequestTy &R, const char *What) {
    auto Done = std::async(std::launch::async, [&] { return R.wait(); });
    return within(Done, What);
  }

  /// Wait, boundedly, until the worker has made \p N preads.
  void waitForPreads(unsigned N) {
    auto Done = std::async(std::launch::async, [&] {
      while (Sys.Preads < N)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return true;
    });
    within(Done, "the worker's preads while the device runs nothing");
  }

  GatedDeviceTy Device;
  CountingSysTy Sys;
  int Fd = -1;
  std::vector<char> File;
  std::vector<char> Dev[4] = {std::vector<char>(Chunk), std::vector<char>(Chunk),
                              std::vector<char>(Chunk), std::vector<char>(Chunk)};
  std::unique_ptr<IOEngineTy> Engine;
};

TEST_F(IOWorkerOverlapTest, TheNextReadStartsWhileTheLastOnesCopiesRun) {
  TwoReadsTy Reads{*this};
  ASSERT_TRUE(Reads.R0 && Reads.R1);
  Sys.openGate();
  // One worker, the device stopped: both preads happen anyway.
  waitForPreads(2);
  EXPECT_FALSE(Reads.R0->isDone()) << "finished before its copy landed";
  EXPECT_FALSE(Reads.R1->isDone()) << "finished before its copy landed";
  Device.Stream.open();
  for (size_t I = 0; I < 2; ++I) {
    auto N = waitFor(I ? *Reads.R1 : *Reads.R0,
                     "a read once the device ran its copies");
    ASSERT_TRUE(bool(N)) << toString(N.takeError());
    EXPECT_EQ(*N, Chunk);
    EXPECT_EQ(std::memcmp(Dev[I].data(), File.data() + I * Chunk, Chunk), 0)
        << "read " << I;
  }
}

TEST_F(IOWorkerOverlapTest, AFailedCopyIsTheErrorOfItsReadAlone) {
  // The first read's copy (the stream's first operation) fails; the
  // second's does not.
  Device.Stream.FailUpTo = 1;
  TwoReadsTy Reads{*this};
  ASSERT_TRUE(Reads.R0 && Reads.R1);
  Sys.openGate();
  waitForPreads(2);
  Device.Stream.open();
  auto N0 = waitFor(*Reads.R0, "the failed read");
  ASSERT_FALSE(bool(N0));
  EXPECT_NE(toString(N0.takeError()).find("gated: the copy failed"),
            std::string::npos);
  auto N1 = waitFor(*Reads.R1, "the read after it");
  ASSERT_TRUE(bool(N1)) << toString(N1.takeError());
  EXPECT_EQ(*N1, Chunk);
  EXPECT_EQ(std::memcmp(Dev[1].data(), File.data() + Chunk, Chunk), 0);
}

TEST_F(IOWorkerOverlapTest, ManyReadsOfOneWorkerAllLandInOrder) {
  // Rounds of more reads than the ring has buffers, with the device running
  // at once: every read finishes with its data.
  Sys.openGate();
  Device.Stream.open();
  for (int Round = 0; Round < 50; ++Round) {
    std::vector<std::unique_ptr<IORequestTy>> Rs;
    for (size_t I = 0; I < 4; ++I)
      Rs.push_back(read(I));
    for (size_t I = 0; I < 4; ++I) {
      ASSERT_TRUE(Rs[I]);
      auto N = waitFor(*Rs[I], "a read of a round");
      ASSERT_TRUE(bool(N)) << toString(N.takeError());
      EXPECT_EQ(*N, Chunk);
      EXPECT_EQ(std::memcmp(Dev[I].data(), File.data() + I * Chunk, Chunk), 0);
      std::memset(Dev[I].data(), 0, Chunk);
    }
  }
}

} // namespace

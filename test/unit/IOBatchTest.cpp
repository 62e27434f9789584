// SPDX-License-Identifier: Apache-2.0
//
// IOBatchTy, one device's share of a batch: random batches on real files
// checked against a model of pread/pwrite (results and every byte), on the
// direct and the staged path; faults of the gathering preadv (or the staged
// pread) through the SysTy seam fail exactly the operations POSIX would;
// 2,000 operations hold one request slot and a bounded number of
// descriptors.
#include "FakeDevice.h"

#include "offloadio/io/IOEngine.h"
#include "offloadio/io/Sys.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <future>
#include <random>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace offloadio;
using namespace offloadio::unittest;

namespace {

/// Real system calls; calls on the file with inode FaultIno fail with
/// EIO once FaultAfter bytes of it have moved through them (a call that
/// would cross that point moves only up to it).
class FaultSysTy final : public SysTy {
public:
  ino_t FaultIno = 0;
  size_t FaultAfter = 0;
  std::atomic<unsigned> GatherCalls{0}; ///< preadv and pwritev calls made.

  ssize_t pread(int Fd, void *Buf, size_t Count, off_t Offset) override {
    size_t Allowed = Count;
    if (faulty(Fd, Allowed))
      return fault();
    ssize_t N = SysTy::pread(Fd, Buf, Allowed, Offset);
    moved(Fd, N);
    return N;
  }
  ssize_t preadv(int Fd, const struct iovec *Iov, int IovCount,
                 off_t Offset) override {
    ++GatherCalls;
    size_t Total = 0;
    for (int I = 0; I < IovCount; ++I)
      Total += Iov[I].iov_len;
    size_t Allowed = Total;
    if (faulty(Fd, Allowed))
      return fault();
    // Cut the vector at Allowed bytes.
    std::vector<struct iovec> Cut;
    for (int I = 0; I < IovCount && Allowed; ++I) {
      size_t L = std::min(Allowed, Iov[I].iov_len);
      Cut.push_back({Iov[I].iov_base, L});
      Allowed -= L;
    }
    ssize_t N = SysTy::preadv(Fd, Cut.data(), int(Cut.size()), Offset);
    moved(Fd, N);
    return N;
  }
  ssize_t pwritev(int Fd, const struct iovec *Iov, int IovCount,
                  off_t Offset) override {
    ++GatherCalls;
    return SysTy::pwritev(Fd, Iov, IovCount, Offset);
  }

private:
  bool isFaultFile(int Fd) {
    struct stat St;
    return FaultIno && ::fstat(Fd, &St) == 0 && St.st_ino == FaultIno;
  }
  /// Whether the call fails; else \p Count is cut to what may move.
  bool faulty(int Fd, size_t &Count) {
    if (!isFaultFile(Fd))
      return false;
    std::lock_guard<std::mutex> Guard(Lock);
    if (Moved >= FaultAfter)
      return true;
    Count = std::min(Count, FaultAfter - Moved);
    return false;
  }
  void moved(int Fd, ssize_t N) {
    if (N > 0 && isFaultFile(Fd)) {
      std::lock_guard<std::mutex> Guard(Lock);
      Moved += size_t(N);
    }
  }
  static ssize_t fault() {
    errno = EIO;
    return -1;
  }
  std::mutex Lock;
  size_t Moved = 0;
};

/// A temporary file with \p Bytes.
struct TempFileTy {
  std::string Path;
  int Fd = -1;
  explicit TempFileTy(const std::vector<char> &Bytes) {
    char Name[] = "/tmp/iobatchtest-XXXXXX";
    Fd = ::mkstemp(Name);
    Path = Name;
    if (!Bytes.empty())
      EXPECT_EQ(::pwrite(Fd, Bytes.data(), Bytes.size(), 0),
                ssize_t(Bytes.size()));
  }
  ~TempFileTy() {
    ::close(Fd);
    ::unlink(Path.c_str());
  }
  std::vector<char> contents() const {
    struct stat St;
    ::fstat(Fd, &St);
    std::vector<char> Out(St.st_size);
    EXPECT_EQ(::pread(Fd, Out.data(), Out.size(), 0), ssize_t(Out.size()));
    return Out;
  }
  ino_t inode() const {
    struct stat St;
    ::fstat(Fd, &St);
    return St.st_ino;
  }
};

size_t openDescriptors() {
  size_t N = 0;
  DIR *D = ::opendir("/proc/self/fd");
  while (::readdir(D))
    ++N;
  ::closedir(D);
  return N;
}

IOConfigTy batchConfig(IOPathTy Path) {
  IOConfigTy C;
  C.Threads = 3;
  C.ChunkSize = 16 << 10;
  C.RingDepth = 2;
  C.ForcedPath = int(Path);
  C.Info = false;
  return C;
}

class IOBatchTest : public ::testing::TestWithParam<IOPathTy> {
protected:
  IOEngineTy &engine(IOConfigTy Config) {
    bool HostAddressable = GetParam() == IOPathTy::HostAddressable;
    Engine.reset(); // Before the device it uses.
    Device = std::make_unique<FakeDeviceTy>(Plugin, HostAddressable);
    Engine = std::make_unique<IOEngineTy>(Device->io(), Sys, nullptr, Config);
    return *Engine;
  }
  std::unique_ptr<IOBatchTy> run(const std::vector<IOBatchOpTy> &Ops) {
    auto B = Engine->createBatch();
    EXPECT_TRUE(bool(B));
    if (!B) {
      llvm::consumeError(B.takeError());
      return nullptr;
    }
    Engine->startBatch(**B, Ops);
    return std::move(*B);
  }
  void TearDown() override {
    Engine.reset();
    Device.reset();
  }

  FakePluginTy Plugin;
  std::unique_ptr<FakeDeviceTy> Device;
  FaultSysTy Sys;
  std::unique_ptr<IOEngineTy> Engine;
};

std::vector<char> randomBytes(std::mt19937 &Rng, size_t N) {
  std::vector<char> B(N);
  for (char &C : B)
    C = char(Rng());
  return B;
}

TEST_P(IOBatchTest, RandomBatchesMatchPreadAndPwrite) {
  std::mt19937 Rng(1234);
  for (int Round = 0; Round < 30; ++Round) {
    engine(batchConfig(GetParam()));
    // Two files read, one written: directions on distinct files.
    std::vector<char> A = randomBytes(Rng, Rng() % 100000);
    std::vector<char> Bf = randomBytes(Rng, Rng() % 60000);
    std::vector<char> C0 = randomBytes(Rng, Rng() % 50000);
    TempFileTy FA(A), FB(Bf), FC(C0);
    std::vector<IOBatchOpTy> Ops;
    auto Add = [&](IORequestTy::OpTy Op, int Fd, size_t Count, off_t Off) {
      Ops.push_back({Op, Fd, nullptr, Count, Off});
    };
    // Runs of touching small reads, some crossing or past end of file.
    for (int Run = 0; Run < 6; ++Run) {
      const TempFileTy &F = Rng() % 2 ? FA : FB;
      size_t Size = &F == &FA ? A.size() : Bf.size();
      off_t Off = off_t(Rng() % (Size + 3000));
      for (int K = 0, N = 1 + Rng() % 12; K < N; ++K) {
        size_t Count = Rng() % 5 == 0 ? 0 : 1 + Rng() % 3000;
        Add(IORequestTy::Read, F.Fd, Count, Off);
        Off += off_t(Count);
      }
    }
    // Large reads, over several chunks.
    for (int K = 0; K < 2; ++K)
      Add(IORequestTy::Read, FA.Fd, 20000 + Rng() % 50000,
          off_t(Rng() % (A.size() + 1)));
    // Writes: pieces of a range of C, touching, some gaps, any order.
    std::vector<std::pair<off_t, size_t>> Pieces;
    off_t W = off_t(Rng() % 20000);
    for (int K = 0, N = 1 + Rng() % 20; K < N; ++K) {
      size_t Count = 1 + (Rng() % 4 == 0 ? Rng() % 40000 : Rng() % 2000);
      Pieces.push_back({W, Count});
      W += off_t(Count + (Rng() % 4 == 0 ? Rng() % 100 : 0));
    }
    std::shuffle(Pieces.begin(), Pieces.end(), Rng);
    for (auto [Off, Count] : Pieces)
      Add(IORequestTy::Write, FC.Fd, Count, Off);
    std::shuffle(Ops.begin(), Ops.end(), Rng);

    // Each operation's buffer, in the shuffled order, one byte apart.
    size_t At = 0;
    for (const IOBatchOpTy &Op : Ops)
      At += Op.Count + 1;
    char *Dev = Device->alloc(At + 1);
    std::vector<char> Src = randomBytes(Rng, At + 1);
    std::memcpy(Dev, Src.data(), Src.size());
    At = 0;
    for (IOBatchOpTy &Op : Ops) {
      Op.DevPtr = Dev + At;
      At += Op.Count + 1;
    }

    // The model: the written file, and each operation's result.
    std::vector<char> C = C0;
    std::vector<ssize_t> Expected;
    for (const IOBatchOpTy &Op : Ops) {
      const char *Mem = static_cast<const char *>(Op.DevPtr);
      if (Op.Op == IORequestTy::Write) {
        size_t End = size_t(Op.Offset) + Op.Count;
        if (C.size() < End)
          C.resize(End, 0);
        std::memcpy(C.data() + Op.Offset, Src.data() + (Mem - Dev), Op.Count);
        Expected.push_back(ssize_t(Op.Count));
        continue;
      }
      const std::vector<char> &F = Op.Fd == FA.Fd ? A : Bf;
      size_t Off = size_t(Op.Offset);
      Expected.push_back(Off >= F.size()
                             ? 0
                             : ssize_t(std::min(Op.Count, F.size() - Off)));
    }

    auto B = run(Ops);
    ASSERT_TRUE(B);
    EXPECT_EQ(Engine->outstandingRequests(), 1u);
    std::vector<IOBatchResultTy> R = B->wait();
    ASSERT_EQ(R.size(), Ops.size());
    for (size_t I = 0; I < Ops.size(); ++I) {
      const IOBatchOpTy &Op = Ops[I];
      ASSERT_EQ(R[I].Errno, 0) << Round << " op " << I << ": " << R[I].Message;
      ASSERT_EQ(ssize_t(R[I].Bytes), Expected[I]) << Round << " op " << I;
      const char *Mem = static_cast<const char *>(Op.DevPtr);
      if (Op.Op == IORequestTy::Read) {
        const std::vector<char> &F = Op.Fd == FA.Fd ? A : Bf;
        size_t N = size_t(Expected[I]);
        ASSERT_EQ(std::memcmp(Mem, F.data() + Op.Offset, N), 0)
            << Round << " op " << I;
        // Past the bytes read, the buffer is as it was.
        ASSERT_EQ(std::memcmp(Mem + N, Src.data() + (Mem - Dev) + N,
                              Op.Count - N),
                  0)
            << Round << " op " << I;
      }
    }
    EXPECT_EQ(FC.contents(), C) << Round;
    B.reset();
    EXPECT_EQ(Engine->outstandingRequests(), 0u);
  }
}

TEST_P(IOBatchTest, FailedGatheredReadFailsExactlyItsOperations) {
  engine(batchConfig(GetParam()));
  std::mt19937 Rng(7);
  std::vector<char> A = randomBytes(Rng, 20000), Bf = randomBytes(Rng, 20000);
  TempFileTy FA(A), FB(Bf);
  // Ten touching reads of 1000 bytes on each file: one gathered request
  // each. The file of A fails after 3500 bytes: reads 0-2 got all their
  // bytes before the failure, as separate preads would; 3 to 9 fail.
  Sys.FaultIno = FA.inode();
  Sys.FaultAfter = 3500;
  char *Dev = Device->alloc(20 * 1000);
  std::vector<IOBatchOpTy> Ops;
  for (int K = 0; K < 10; ++K) {
    Ops.push_back({IORequestTy::Read, FA.Fd, Dev + K * 1000, 1000,
                   off_t(K * 1000)});
    Ops.push_back({IORequestTy::Read, FB.Fd, Dev + 10000 + K * 1000, 1000,
                   off_t(K * 1000)});
  }
  auto B = run(Ops);
  ASSERT_TRUE(B);
  EXPECT_EQ(B->numRequests(), 2u);
  std::vector<IOBatchResultTy> R = B->wait();
  for (int K = 0; K < 10; ++K) {
    const IOBatchResultTy &OnA = R[2 * K], &OnB = R[2 * K + 1];
    if (K < 3) {
      EXPECT_EQ(OnA.Errno, 0) << K << ": " << OnA.Message;
      EXPECT_EQ(OnA.Bytes, 1000u) << K;
      EXPECT_EQ(std::memcmp(Dev + K * 1000, A.data() + K * 1000, 1000), 0);
    } else {
      EXPECT_EQ(OnA.Errno, EIO) << K;
      EXPECT_FALSE(OnA.Message.empty()) << K;
    }
    EXPECT_EQ(OnB.Errno, 0) << K << ": " << OnB.Message;
    EXPECT_EQ(OnB.Bytes, 1000u) << K;
  }
  EXPECT_EQ(std::memcmp(Dev + 10000, Bf.data(), 10000), 0);
  if (GetParam() == IOPathTy::HostAddressable)
    EXPECT_GE(Sys.GatherCalls, 2u);
}

TEST_P(IOBatchTest, ThousandsOfOperationsHoldOneSlotAndFewDescriptors) {
  IOConfigTy Config = batchConfig(GetParam());
  Config.MaxRequests = 2;
  engine(Config);
  std::mt19937 Rng(3);
  std::vector<char> A = randomBytes(Rng, 2000 * 100);
  TempFileTy FA(A);
  char *Dev = Device->alloc(A.size());
  std::vector<IOBatchOpTy> Ops;
  for (int K = 0; K < 2000; ++K)
    Ops.push_back({IORequestTy::Read, FA.Fd, Dev + K * 100, 100,
                   off_t(K * 100)});
  size_t Before = openDescriptors();
  auto B = run(Ops);
  ASSERT_TRUE(B);
  EXPECT_EQ(Engine->outstandingRequests(), 1u);
  EXPECT_LE(B->numDescriptors(), 2u);
  EXPECT_LE(openDescriptors(), Before + 2);
  // 2,000 touching reads of 100 bytes, gathered up to a chunk each.
  EXPECT_LE(B->numRequests(), 2000u * 100 / (16 << 10) + 1);
  // A second share fits; a third does not: each holds one slot.
  auto Second = Engine->createBatch();
  ASSERT_TRUE(bool(Second));
  auto Third = Engine->createBatch();
  ASSERT_FALSE(bool(Third));
  EXPECT_EQ(takeErrorDetails(Third.takeError()).Errno, EAGAIN);
  std::vector<IOBatchResultTy> R = B->wait();
  for (size_t I = 0; I < R.size(); ++I)
    ASSERT_EQ(R[I].Bytes, 100u) << I << ": " << R[I].Message;
  EXPECT_EQ(std::memcmp(Dev, A.data(), A.size()), 0);
  B.reset();
  Second->reset();
  EXPECT_EQ(Engine->outstandingRequests(), 0u);
  EXPECT_EQ(openDescriptors(), Before);
}

TEST_P(IOBatchTest, RefusedOperationsLeaveTheOthersRunning) {
  engine(batchConfig(GetParam()));
  std::vector<char> A(5000, 'a');
  TempFileTy FA(A);
  char *Dev = Device->alloc(3000);
  char Heap[16];
  std::vector<IOBatchOpTy> Ops = {
      {IORequestTy::Read, FA.Fd, Dev, 1000, 0},
      {IORequestTy::Read, -1, Dev + 1000, 1000, 0},       // EBADF
      {IORequestTy::Read, FA.Fd, Heap, 16, 0},            // EFAULT
      {IORequestTy::Read, FA.Fd, Dev + 2000, 1000, -1},   // EINVAL
      {IORequestTy::Read, FA.Fd, Dev + 2000, 1000, 1000},
  };
  auto B = run(Ops);
  ASSERT_TRUE(B);
  std::vector<IOBatchResultTy> R = B->wait();
  EXPECT_EQ(R[0].Bytes, 1000u);
  EXPECT_EQ(R[1].Errno, EBADF);
  EXPECT_EQ(R[2].Errno, EFAULT);
  EXPECT_EQ(R[3].Errno, EINVAL);
  EXPECT_EQ(R[4].Bytes, 1000u);
  for (int I = 1; I < 4; ++I)
    EXPECT_FALSE(R[I].Message.empty()) << I;
}

TEST_P(IOBatchTest, ClosedDescriptorFailsAndNoDuplicateTakesItsNumber) {
  // The second operation names the number of a descriptor closed just
  // before: the lowest free one, which a duplicate of the first
  // operation's descriptor would take if the share duplicated before it
  // checked every operation.
  for (bool Write : {true, false}) {
    engine(batchConfig(GetParam()));
    TempFileTy FA(std::vector<char>(8192, 'a'));
    TempFileTy FB(std::vector<char>(8192, 'b'));
    int Closed = ::dup(FB.Fd);
    ASSERT_GE(Closed, 0);
    ::close(Closed);
    char *Dev = Device->alloc(8192);
    std::memset(Dev, 'w', 8192);
    IORequestTy::OpTy Op = Write ? IORequestTy::Write : IORequestTy::Read;
    std::vector<IOBatchOpTy> Ops = {{Op, FA.Fd, Dev, 4096, 0},
                                    {Op, Closed, Dev + 4096, 4096, 4096}};
    auto B = run(Ops);
    ASSERT_TRUE(B);
    std::vector<IOBatchResultTy> R = B->wait();
    EXPECT_EQ(R[0].Errno, 0) << Write;
    EXPECT_EQ(R[0].Bytes, 4096u) << Write;
    EXPECT_EQ(R[1].Errno, EBADF) << Write;
    std::vector<char> A = FA.contents();
    EXPECT_EQ(std::count(A.begin() + 4096, A.end(), 'a'), 4096) << Write;
    EXPECT_EQ(std::count(Dev + 4096, Dev + 8192, 'w'), 4096) << Write;
  }
}

TEST_P(IOBatchTest, NotificationRunsOnceWhenAllIsDoneAndMayReleaseTheShare) {
  engine(batchConfig(GetParam()));
  std::mt19937 Rng(5);
  for (int Round = 0; Round < 60; ++Round) {
    // Gathered small reads, a large split one and a refused one.
    std::vector<char> A = randomBytes(Rng, 300 * 64 + (200 << 10));
    TempFileTy FA(A);
    char *Dev = Device->alloc(A.size());
    std::vector<IOBatchOpTy> Ops;
    for (int K = 0; K < 300; ++K)
      Ops.push_back({IORequestTy::Read, FA.Fd, Dev + K * 64, 64,
                     off_t(K * 64)});
    Ops.push_back({IORequestTy::Read, FA.Fd, Dev + 300 * 64, 200 << 10,
                   off_t(300 * 64)});
    Ops.push_back({IORequestTy::Read, -1, Dev, 64, 0});
    auto B = run(Ops);
    ASSERT_TRUE(B);
    // The notification owns the share from registration on: it collects
    // the results and destroys it, from whichever thread runs it.
    struct StateTy {
      std::unique_ptr<IOBatchTy> Share;
      std::vector<IOBatchResultTy> Results;
      std::atomic<int> Runs{0};
      std::promise<void> Done;
    } State;
    State.Share = std::move(B);
    IOBatchTy *Share = State.Share.get();
    if (Round % 3 == 0) // Also registered after every request finished.
      while (!Share->isDone())
        std::this_thread::yield();
    auto Notify = [](void *Arg) {
      auto *S = static_cast<StateTy *>(Arg);
      S->Results = S->Share->wait();
      S->Share.reset();
      if (S->Runs.fetch_add(1) == 0)
        S->Done.set_value();
    };
    ASSERT_FALSE(bool(Share->notifyWhenDone({Notify, &State})));
    ASSERT_EQ(State.Done.get_future().wait_for(std::chrono::seconds(30)),
              std::future_status::ready);
    EXPECT_EQ(State.Runs.load(), 1);
    EXPECT_EQ(State.Share, nullptr);
    ASSERT_EQ(State.Results.size(), Ops.size());
    for (size_t I = 0; I + 1 < Ops.size(); ++I)
      ASSERT_EQ(State.Results[I].Bytes, Ops[I].Count) << I;
    EXPECT_EQ(State.Results.back().Errno, EBADF);
    EXPECT_EQ(std::memcmp(Dev, A.data(), A.size()), 0);
    EXPECT_EQ(Engine->outstandingRequests(), 0u);
  }
}

TEST_P(IOBatchTest, SecondNotificationOrNoFunctionIsRefused) {
  engine(batchConfig(GetParam()));
  std::vector<char> A(4096, 'x');
  TempFileTy FA(A);
  char *Dev = Device->alloc(A.size());
  auto B = run({{IORequestTy::Read, FA.Fd, Dev, A.size(), 0}});
  ASSERT_TRUE(B);
  auto ErrnoOf = [](Error Err) {
    return takeErrorDetails(std::move(Err)).Errno;
  };
  EXPECT_EQ(ErrnoOf(B->notifyWhenDone({nullptr, nullptr})), EINVAL);
  std::atomic<int> Runs{0};
  auto Count = [](void *Arg) { ++*static_cast<std::atomic<int> *>(Arg); };
  ASSERT_FALSE(bool(B->notifyWhenDone({Count, &Runs})));
  EXPECT_EQ(ErrnoOf(B->notifyWhenDone({Count, &Runs})), EINVAL);
  // The share is the notification's until it ran: only then may it go.
  while (Runs.load() == 0)
    std::this_thread::yield();
  ASSERT_EQ(B->wait()[0].Bytes, A.size());
  B.reset();
  EXPECT_EQ(Runs.load(), 1);
}

INSTANTIATE_TEST_SUITE_P(Paths, IOBatchTest,
                         ::testing::Values(IOPathTy::HostAddressable,
                                           IOPathTy::Staged),
                         [](const ::testing::TestParamInfo<IOPathTy> &Info) {
                           return std::string(ioPathName(Info.param));
                         });

} // namespace

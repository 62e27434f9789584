// SPDX-License-Identifier: Apache-2.0
//
// IOEngineTy driven directly: a fake device whose memory is host memory it
// tracks (so ownsPointer works) with the host backend's streams and events,
// a fake SysTy holding the file in memory and injecting EINTR, short counts,
// EIO, ENOSPC, zero-length writes and truncation, and fake fastpaths that
// work, refuse, or fail with ENODEV/EREMOTEIO/ENOTSUP (fallback to staged)
// or EIO (no fallback). Both the direct and the staged path are run with
// small chunks and rings so that requests span many chunks and rings wrap.
#include "FakeDevice.h"

#include "offloadio/Device.h"
#include "offloadio/Plugin.h"
#include "offloadio/io/IOEngine.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <random>
#include <shared_mutex>
#include <thread>
#include <tuple>
#include <unistd.h>
#include <vector>

using namespace offloadio;
using namespace offloadio::unittest;

namespace {

char pat(size_t O, unsigned Seed = 1) {
  return char(O * 7 + (O >> 8) * 31 + (O >> 16) * 131 + Seed);
}

//===----------------------------------------------------------------------===//
// Fake system calls: the file lives in memory
//===----------------------------------------------------------------------===//

class FakeSysTy : public SysTy {
public:
  // Settings; set before submitting.
  int Mode = O_RDWR;            ///< Access mode getFlags reports.
  bool EintrEveryOther = false; ///< Each thread: every 2nd call EINTR.
  size_t MaxPerCall = SIZE_MAX; ///< Short counts.
  size_t EioAt = SIZE_MAX;      ///< File offset whose access fails with EIO.
  size_t SpaceLimit = SIZE_MAX; ///< Writes past it: ENOSPC.
  bool WritesReturnZero = false;
  size_t TruncateAfter = SIZE_MAX; ///< Once this many bytes were read ...
  size_t TruncateTo = 0;           ///< ... the file shrinks to this size.
  int DupErrno = 0;                ///< dup fails with this errno.
  bool CallerDirect = false;       ///< The caller's fd has O_DIRECT.
  int ReopenErrno = 0;             ///< reopen fails with this errno.
  bool DirectEinval = false;       ///< All I/O on O_DIRECT fds: EINVAL.
  size_t DioAlign = 4096;          ///< directIOAlignment.
  int ExtraFlags = 0;              ///< Status flags getFlags adds (O_APPEND).
  mode_t FileType = S_IFREG;       ///< The file type fstat reports.
  dev_t FileSystem = 0;            ///< st_dev fstat reports, if not 0.
  size_t SizeLimit = SIZE_MAX;     ///< RLIMIT_FSIZE: writes stop there, EFBIG.

  // Observations.
  std::atomic<unsigned> Eintrs{0}, Preads{0}, Pwrites{0};
  std::atomic<size_t> LargestCall{0};

  /// One pread or pwrite that reached the file (or was refused EINVAL).
  struct CallTy {
    bool Write;
    bool Direct; ///< On a descriptor with O_DIRECT.
    size_t Offset, Count;
    bool operator<(const CallTy &O) const {
      return std::tie(Write, Direct, Offset, Count) <
             std::tie(O.Write, O.Direct, O.Offset, O.Count);
    }
    bool operator==(const CallTy &O) const {
      return !(*this < O) && !(O < *this);
    }
  };
  /// The calls so far, sorted, and forgotten.
  std::vector<CallTy> takeCalls() {
    std::lock_guard<std::mutex> Guard(Lock);
    std::vector<CallTy> C = std::move(Calls);
    Calls.clear();
    std::sort(C.begin(), C.end());
    return C;
  }
  /// The flags of each reopen, in order.
  std::vector<int> reopens() {
    std::lock_guard<std::mutex> Guard(Lock);
    return Reopens;
  }

  std::vector<char> file() {
    std::lock_guard<std::mutex> Guard(Lock);
    return File;
  }
  void setFile(std::vector<char> F) {
    std::lock_guard<std::mutex> Guard(Lock);
    File = std::move(F);
  }

  ssize_t pread(int Fd, void *Buf, size_t Count, off_t Offset) override {
    if (interrupt())
      return -1;
    ++Preads;
    noteCall(Count);
    std::lock_guard<std::mutex> Guard(Lock);
    if (refuseDirect(Fd, false, Buf, Count, Offset))
      return -1;
    size_t N = std::min(Count, MaxPerCall);
    if (auto Err = eio(Offset, N))
      return Err;
    if (size_t(Offset) >= File.size())
      return 0;
    N = std::min(N, File.size() - size_t(Offset));
    std::memcpy(Buf, File.data() + Offset, N);
    Served += N;
    if (Served >= TruncateAfter && File.size() > TruncateTo)
      File.resize(TruncateTo);
    return ssize_t(N);
  }

  ssize_t pwrite(int Fd, const void *Buf, size_t Count, off_t Offset) override {
    if (interrupt())
      return -1;
    ++Pwrites;
    noteCall(Count);
    std::lock_guard<std::mutex> Guard(Lock);
    if (refuseDirect(Fd, true, Buf, Count, Offset))
      return -1;
    if (WritesReturnZero)
      return 0;
    size_t N = std::min(Count, MaxPerCall);
    if (auto Err = eio(Offset, N))
      return Err;
    if (size_t(Offset) + N > SizeLimit) {
      // As the kernel does: short up to the limit, then EFBIG.
      if (size_t(Offset) >= SizeLimit) {
        errno = EFBIG;
        return -1;
      }
      N = SizeLimit - size_t(Offset);
    }
    if (size_t(Offset) + N > SpaceLimit) {
      if (size_t(Offset) >= SpaceLimit) {
        errno = ENOSPC;
        return -1;
      }
      N = SpaceLimit - size_t(Offset);
    }
    if (File.size() < size_t(Offset) + N)
      File.resize(size_t(Offset) + N);
    std::memcpy(File.data() + Offset, Buf, N);
    return ssize_t(N);
  }

  int getFlags(int Fd) override {
    int Flags = SysTy::getFlags(Fd);
    if (Flags < 0)
      return Flags;
    return (Flags & ~O_ACCMODE) | Mode | (CallerDirect ? O_DIRECT : 0) |
           ExtraFlags;
  }

  /// The descriptor is /dev/null; the file it stands for is of FileType.
  int fstat(int Fd, struct stat *St) override {
    if (int Rc = SysTy::fstat(Fd, St))
      return Rc;
    St->st_mode = (St->st_mode & ~S_IFMT) | FileType;
    if (FileSystem)
      St->st_dev = FileSystem;
    std::lock_guard<std::mutex> Guard(Lock);
    St->st_size = off_t(File.size());
    return 0;
  }

  int dup(int Fd) override {
    if (DupErrno) {
      errno = DupErrno;
      return -1;
    }
    int New = SysTy::dup(Fd);
    // A duplicate shares the caller's O_DIRECT. Descriptor numbers are
    // reused, so each new one is classified afresh.
    std::lock_guard<std::mutex> Guard(Lock);
    if (New >= 0)
      DirectFds[New] = CallerDirect;
    return New;
  }

  int reopen(int Fd, int Flags) override {
    std::lock_guard<std::mutex> Guard(Lock);
    Reopens.push_back(Flags);
    if (ReopenErrno) {
      errno = ReopenErrno;
      return -1;
    }
    int New = SysTy::dup(Fd);
    if (New >= 0)
      DirectFds[New] = Flags & O_DIRECT;
    return New;
  }

  size_t directIOAlignment(int) override { return DioAlign; }

  /// Read the file directly (for the fake fastpath).
  size_t readAt(char *Dst, size_t Count, size_t Offset) {
    std::lock_guard<std::mutex> Guard(Lock);
    if (Offset >= File.size())
      return 0;
    size_t N = std::min(Count, File.size() - Offset);
    std::memcpy(Dst, File.data() + Offset, N);
    return N;
  }
  void writeAt(const char *Src, size_t Count, size_t Offset) {
    std::lock_guard<std::mutex> Guard(Lock);
    if (File.size() < Offset + Count)
      File.resize(Offset + Count);
    std::memcpy(File.data() + Offset, Src, Count);
  }

private:
  bool interrupt() {
    static thread_local unsigned Calls = 0;
    if (!EintrEveryOther || Calls++ % 2)
      return false;
    ++Eintrs;
    errno = EINTR;
    return true;
  }
  void noteCall(size_t Count) {
    size_t Prev = LargestCall.load();
    while (Count > Prev && !LargestCall.compare_exchange_weak(Prev, Count))
      ;
  }
  /// Record the call; on an O_DIRECT fd, refuse what the kernel refuses
  /// (unaligned offset, count or memory) and everything if DirectEinval.
  bool refuseDirect(int Fd, bool Write, const void *Buf, size_t Count,
                    off_t Offset) {
    bool Direct = DirectFds.count(Fd) && DirectFds[Fd];
    Calls.push_back({Write, Direct, size_t(Offset), Count});
    if (!Direct)
      return false;
    if (DirectEinval || size_t(Offset) % DioAlign || Count % DioAlign ||
        reinterpret_cast<uintptr_t>(Buf) % DioAlign) {
      errno = EINVAL;
      return true;
    }
    return false;
  }
  /// Bytes up to EioAt first; the call that starts at EioAt fails.
  ssize_t eio(off_t Offset, size_t &N) {
    if (EioAt == SIZE_MAX || size_t(Offset) + N <= EioAt)
      return 0;
    if (size_t(Offset) < EioAt) {
      N = EioAt - size_t(Offset);
      return 0;
    }
    errno = EIO;
    return -1;
  }

  std::mutex Lock;
  std::vector<char> File;
  size_t Served = 0;
  std::map<int, bool> DirectFds;
  std::vector<CallTy> Calls;
  std::vector<int> Reopens;
};

//===----------------------------------------------------------------------===//
// Fake fastpath
//===----------------------------------------------------------------------===//

class FakeFastpathTy final : public IOFastpathTy {
public:
  explicit FakeFastpathTy(FakeSysTy &Sys) : Sys(Sys) {}

  bool Accept = true;
  std::string RefuseWhy = "fake: the file is on tmpfs";
  int ReadErrno = 0;  ///< 0: reads work.
  int WriteErrno = 0; ///< 0: writes work.
  /// Time every call takes: lets all workers reach the fastpath at once.
  std::chrono::milliseconds Delay{0};
  std::atomic<unsigned> Reads{0}, Writes{0};

  const char *name() const override { return "fake"; }
  bool accepts(int, const void *, size_t, off_t, std::string &Why,
               const IOLogTy &) override {
    if (!Accept)
      Why = RefuseWhy;
    return Accept;
  }
  Expected<size_t> read(int Fd, void *DevPtr, size_t Count, off_t Offset,
                        const IOLogTy &) override {
    ++Reads;
    std::this_thread::sleep_for(Delay);
    if (ReadErrno)
      return makeErrnoError(ReadErrno, "fake cuFileRead(fd {0})", Fd);
    return Sys.readAt(static_cast<char *>(DevPtr), Count, size_t(Offset));
  }
  Error write(int Fd, const void *DevPtr, size_t Count, off_t Offset,
              const IOLogTy &) override {
    ++Writes;
    std::this_thread::sleep_for(Delay);
    if (WriteErrno)
      return makeErrnoError(WriteErrno, "fake cuFileWrite(fd {0})", Fd);
    if (size_t(Offset) + Count > Sys.SizeLimit) {
      // Part of it written, the rest refused: the error does not say how
      // much went to the file.
      if (size_t(Offset) < Sys.SizeLimit)
        Sys.writeAt(static_cast<const char *>(DevPtr),
                    Sys.SizeLimit - size_t(Offset), size_t(Offset));
      return makeErrnoError(EFBIG, "fake cuFileWrite(fd {0})", Fd);
    }
    Sys.writeAt(static_cast<const char *>(DevPtr), Count, size_t(Offset));
    return Error::success();
  }

private:
  FakeSysTy &Sys;
};

//===----------------------------------------------------------------------===//
// Fixture
//===----------------------------------------------------------------------===//

/// Small chunks and rings: every request spans several chunks.
IOConfigTy smallConfig(int Path, unsigned Threads = 4, size_t Chunk = 4096,
                       unsigned Ring = 2) {
  IOConfigTy C;
  C.Threads = Threads;
  C.ChunkSize = Chunk;
  C.RingDepth = Ring;
  C.ForcedPath = Path;
  C.Info = false;
  return C;
}

class IOEngineTest : public ::testing::Test {
protected:
  void SetUp() override {
    Fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    ASSERT_GE(Fd, 0);
  }
  void TearDown() override {
    Engine.reset();
    ::close(Fd);
  }

  /// (Re)create the device's engine.
  IOEngineTy &engine(IOConfigTy Config, IOFastpathTy *Fastpath = nullptr,
                     bool HostAddressable = true) {
    Engine.reset();
    if (!Device ||
        Device->getLimits().HostCanAccessDeviceMemory != HostAddressable)
      Device = std::make_unique<FakeDeviceTy>(Plugin, HostAddressable);
    Engine = std::make_unique<IOEngineTy>(Device->io(), Sys, Fastpath, Config);
    return *Engine;
  }

  Expected<size_t> transfer(IORequestTy::OpTy Op, void *Buf, size_t Count,
                            off_t Offset) {
    auto R = Engine->submit(Op, Fd, Buf, Count, Offset);
    if (!R)
      return R.takeError();
    return (*R)->wait();
  }
  Expected<size_t> read(void *Buf, size_t Count, off_t Offset) {
    return transfer(IORequestTy::Read, Buf, Count, Offset);
  }
  Expected<size_t> write(void *Buf, size_t Count, off_t Offset) {
    return transfer(IORequestTy::Write, Buf, Count, Offset);
  }

  /// A file of \p Size pattern bytes.
  void makeFile(size_t Size, unsigned Seed = 1) {
    std::vector<char> F(Size);
    for (size_t I = 0; I < Size; ++I)
      F[I] = pat(I, Seed);
    Sys.setFile(std::move(F));
  }
  /// Bytes of Buf[0, N) that are not the file's pattern at Offset.
  static size_t mismatches(const char *Buf, size_t N, size_t Offset,
                           unsigned Seed = 1) {
    size_t Bad = 0;
    for (size_t I = 0; I < N; ++I)
      Bad += Buf[I] != pat(Offset + I, Seed);
    return Bad;
  }

  FakePluginTy Plugin;
  std::unique_ptr<FakeDeviceTy> Device;
  FakeSysTy Sys;
  std::unique_ptr<IOEngineTy> Engine;
  int Fd = -1;
};

int errnoOf(Error E) { return takeErrorDetails(std::move(E)).Errno; }
template <typename T> int errnoOf(Expected<T> V) {
  return V ? 0 : errnoOf(V.takeError());
}

/// Tests run once per path the engine can be forced to.
class IOEnginePathTest : public IOEngineTest,
                         public ::testing::WithParamInterface<IOPathTy> {
protected:
  int path() const { return int(GetParam()); }
};

std::string pathName(const ::testing::TestParamInfo<IOPathTy> &Info) {
  return ioPathName(Info.param);
}

//===----------------------------------------------------------------------===//
// Data and semantics, on the direct and the staged path
//===----------------------------------------------------------------------===//

TEST_P(IOEnginePathTest, ReadIsExact) {
  IOEngineTy &E = engine(smallConfig(path()));
  makeFile(100000 + 333);
  char *Buf = Device->alloc(100333);
  auto N = read(Buf, 100333, 0);
  ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
  EXPECT_EQ(*N, 100333u);
  EXPECT_EQ(mismatches(Buf, 100333, 0), 0u);
  // Interior pointer, unaligned offset.
  std::memset(Buf, 0, 100333);
  N = read(Buf + 3, 50001, 777);
  ASSERT_TRUE(bool(N));
  EXPECT_EQ(*N, 50001u);
  EXPECT_EQ(mismatches(Buf + 3, 50001, 777), 0u);
  IOStatsTy &S = E.getStats();
  EXPECT_EQ(S.BytesRead[path()].load(), 100333u + 50001u);
  EXPECT_EQ(S.Reads[path()].load(), 2u);
  for (unsigned P = 0; P < 4; ++P)
    if (int(P) != path())
      EXPECT_EQ(S.BytesRead[P].load(), 0u) << P;
}

TEST_P(IOEnginePathTest, WriteIsExactAndExtendsTheFile) {
  IOEngineTy &E = engine(smallConfig(path()));
  char *Buf = Device->alloc(70001);
  for (size_t I = 0; I < 70001; ++I)
    Buf[I] = pat(I, 5);
  auto N = write(Buf, 70001, 123);
  ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
  EXPECT_EQ(*N, 70001u);
  std::vector<char> F = Sys.file();
  ASSERT_EQ(F.size(), 70124u);
  EXPECT_EQ(mismatches(F.data() + 123, 70001, 0, 5), 0u);
  EXPECT_EQ(E.getStats().BytesWritten[path()].load(), 70001u);
  EXPECT_EQ(E.getStats().Writes[path()].load(), 1u);
}

TEST_P(IOEnginePathTest, EintrAndShortCountsAtEveryStep) {
  engine(smallConfig(path(), 3, 8192));
  makeFile(200000);
  Sys.EintrEveryOther = true;
  Sys.MaxPerCall = 1000;
  char *Buf = Device->alloc(200000);
  auto N = read(Buf, 200000, 0);
  ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
  EXPECT_EQ(*N, 200000u);
  EXPECT_EQ(mismatches(Buf, 200000, 0), 0u);
  // Write it back elsewhere through the same storm.
  N = write(Buf, 200000, 300000);
  ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
  EXPECT_EQ(*N, 200000u);
  std::vector<char> F = Sys.file();
  ASSERT_EQ(F.size(), 500000u);
  EXPECT_EQ(mismatches(F.data() + 300000, 200000, 0), 0u);
  EXPECT_GE(Sys.Eintrs.load(), Sys.Preads.load() + Sys.Pwrites.load() - 6);
  EXPECT_LE(Sys.LargestCall.load(), 8192u);
}

TEST_P(IOEnginePathTest, ReadAcrossEofIsShortAndWritesNothingPastIt) {
  engine(smallConfig(path(), 4, 4096));
  makeFile(30000);
  Sys.MaxPerCall = 3000;
  char *Buf = Device->alloc(100000);
  std::memset(Buf, 0xAB, 100000);
  auto N = read(Buf, 100000, 1000);
  ASSERT_TRUE(bool(N));
  EXPECT_EQ(*N, 29000u);
  EXPECT_EQ(mismatches(Buf, 29000, 1000), 0u);
  EXPECT_TRUE(std::all_of(Buf + 29000, Buf + 100000,
                          [](char C) { return C == char(0xAB); }));
  // At and past the end: 0, nothing written.
  N = read(Buf + 29000, 5000, 30000);
  ASSERT_TRUE(bool(N));
  EXPECT_EQ(*N, 0u);
  N = read(Buf + 29000, 5000, 1 << 30);
  ASSERT_TRUE(bool(N));
  EXPECT_EQ(*N, 0u);
  EXPECT_TRUE(std::all_of(Buf + 29000, Buf + 100000,
                          [](char C) { return C == char(0xAB); }));
}

TEST_P(IOEnginePathTest, FileTruncatedMidTransfer) {
  // One worker takes the chunks in order; after three chunks have been
  // read the file shrinks into the fourth: the count is short and nothing
  // past it is written.
  engine(smallConfig(path(), 1, 4096, 2));
  makeFile(64 * 4096);
  Sys.EintrEveryOther = true;
  Sys.TruncateAfter = 3 * 4096;
  Sys.TruncateTo = 3 * 4096 + 1000;
  char *Buf = Device->alloc(64 * 4096);
  std::memset(Buf, 0xAB, 64 * 4096);
  auto N = read(Buf, 64 * 4096, 0);
  ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
  EXPECT_EQ(*N, 3u * 4096 + 1000);
  EXPECT_EQ(mismatches(Buf, 3 * 4096 + 1000, 0), 0u);
  EXPECT_TRUE(std::all_of(Buf + 3 * 4096 + 1000, Buf + 64 * 4096,
                          [](char C) { return C == char(0xAB); }));
}

TEST_P(IOEnginePathTest, EndOfFileInsideAManyChunkRequestWithManyWorkers) {
  engine(smallConfig(path(), 8, 4096, 1));
  makeFile(10 * 4096 + 17);
  char *Buf = Device->alloc(64 * 4096);
  std::memset(Buf, 0xAB, 64 * 4096);
  auto N = read(Buf, 64 * 4096, 0);
  ASSERT_TRUE(bool(N));
  EXPECT_EQ(*N, 10u * 4096 + 17);
  EXPECT_EQ(mismatches(Buf, 10 * 4096 + 17, 0), 0u);
  EXPECT_TRUE(std::all_of(Buf + 10 * 4096 + 17, Buf + 64 * 4096,
                          [](char C) { return C == char(0xAB); }));
}

TEST_P(IOEnginePathTest, EioMidRequestFailsTheWholeRequest) {
  engine(smallConfig(path(), 4, 4096));
  makeFile(16 * 4096);
  Sys.EioAt = 5 * 4096 + 100;
  char *Buf = Device->alloc(16 * 4096);
  auto N = read(Buf, 16 * 4096, 0);
  ASSERT_FALSE(bool(N));
  ErrorDetailsTy D = takeErrorDetails(N.takeError());
  EXPECT_EQ(D.Errno, EIO);
  EXPECT_NE(D.Message.find("pread"), std::string::npos) << D.Message;
  // The engine is fine afterwards.
  Sys.EioAt = SIZE_MAX;
  N = read(Buf, 16 * 4096, 0);
  ASSERT_TRUE(bool(N));
  EXPECT_EQ(*N, 16u * 4096);
}

TEST_P(IOEnginePathTest, EioOnWrite) {
  engine(smallConfig(path(), 4, 4096));
  Sys.EioAt = 9 * 4096;
  char *Buf = Device->alloc(16 * 4096);
  EXPECT_EQ(errnoOf(write(Buf, 16 * 4096, 0)), EIO);
}

TEST_P(IOEnginePathTest, EnospcOnWrite) {
  engine(smallConfig(path(), 4, 4096));
  Sys.SpaceLimit = 7 * 4096 + 5;
  Sys.EintrEveryOther = true;
  char *Buf = Device->alloc(16 * 4096);
  auto N = write(Buf, 16 * 4096, 0);
  ASSERT_FALSE(bool(N));
  ErrorDetailsTy D = takeErrorDetails(N.takeError());
  EXPECT_EQ(D.Errno, ENOSPC);
  EXPECT_NE(D.Message.find("pwrite"), std::string::npos) << D.Message;
}

TEST_P(IOEnginePathTest, WriteReturningZeroFailsWithEio) {
  engine(smallConfig(path(), 2, 4096));
  Sys.WritesReturnZero = true;
  char *Buf = Device->alloc(3 * 4096);
  EXPECT_EQ(errnoOf(write(Buf, 3 * 4096, 0)), EIO);
}

TEST_P(IOEnginePathTest, ManyConcurrentRequests) {
  engine(smallConfig(path(), 8, 4096, 2));
  const size_t Size = 2 << 20;
  makeFile(Size);
  char *Buf = Device->alloc(Size);
  std::memset(Buf, 0, Size);
  // 300 requests of 0 to ~5 chunks at scattered places, all in flight.
  std::mt19937 Rng(42);
  struct PieceTy {
    size_t Offset, Count;
    std::unique_ptr<IORequestTy> R;
  };
  std::vector<PieceTy> Pieces;
  size_t Next = 0;
  while (Next < Size) {
    size_t Count = std::min<size_t>(Rng() % (5 * 4096 + 1), Size - Next);
    auto R =
        Engine->submit(IORequestTy::Read, Fd, Buf + Next, Count, off_t(Next));
    ASSERT_TRUE(bool(R)) << takeErrorMessage(R.takeError());
    Pieces.push_back({Next, Count, std::move(*R)});
    Next += Count;
  }
  EXPECT_GT(Pieces.size(), 150u);
  std::shuffle(Pieces.begin(), Pieces.end(), Rng);
  for (PieceTy &P : Pieces) {
    auto N = P.R->wait();
    ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
    EXPECT_EQ(*N, P.Count);
  }
  EXPECT_EQ(mismatches(Buf, Size, 0), 0u);
  EXPECT_EQ(Engine->getStats().BytesRead[path()].load(), Size);
}

TEST_P(IOEnginePathTest, RequestsReleasedAsSoonAsTheyComplete) {
  // Single-chunk requests waited and freed at once while idle workers race
  // for them: no worker may touch a request after it completed.
  engine(smallConfig(path(), 8, 4096, 1));
  makeFile(4096);
  char *Buf = Device->alloc(4096);
  for (int I = 0; I < 3000; ++I) {
    auto R = Engine->submit(I % 2 ? IORequestTy::Write : IORequestTy::Read, Fd,
                            Buf, 1 + I % 4096, 0);
    ASSERT_TRUE(bool(R));
    auto N = (*R)->wait();
    ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
    ASSERT_EQ(*N, size_t(1 + I % 4096));
  }
}

TEST_P(IOEnginePathTest, RequestsPolledWithIsDone) {
  engine(smallConfig(path(), 2, 4096));
  makeFile(40 * 4096);
  char *Buf = Device->alloc(40 * 4096);
  auto R = Engine->submit(IORequestTy::Read, Fd, Buf, 40 * 4096, 0);
  ASSERT_TRUE(bool(R));
  while (!(*R)->isDone())
    std::this_thread::yield();
  auto N = (*R)->wait();
  ASSERT_TRUE(bool(N));
  EXPECT_EQ(*N, 40u * 4096);
}

INSTANTIATE_TEST_SUITE_P(Paths, IOEnginePathTest,
                         ::testing::Values(IOPathTy::Direct, IOPathTy::Staged),
                         pathName);

//===----------------------------------------------------------------------===//
// The staged path's ring
//===----------------------------------------------------------------------===//

TEST_F(IOEngineTest, StagedRingWrapsAndHoldsRingDepthBuffersPerWorker) {
  for (unsigned Depth : {1u, 2u, 3u}) {
    engine(smallConfig(int(IOPathTy::Staged), 2, 4096, Depth));
    makeFile(100 * 4096 + 99, Depth);
    char *Buf = Device->alloc(100 * 4096 + 99);
    auto N = read(Buf, 100 * 4096 + 99, 0);
    ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
    EXPECT_EQ(*N, 100u * 4096 + 99);
    EXPECT_EQ(mismatches(Buf, 100 * 4096 + 99, 0, Depth), 0u) << Depth;
    // At most one ring per worker, never more buffers than that.
    EXPECT_LE(Device->livePinned(), 2 * Depth) << Depth;
    EXPECT_GE(Device->livePinned(), Depth) << Depth;
    Device->release(Buf);
  }
  Engine.reset();
  EXPECT_EQ(Device->livePinned(), 0u)
      << "staging buffers freed with the engine";
}

TEST_F(IOEngineTest, StagedCopyFailureFailsTheRequest) {
  engine(smallConfig(int(IOPathTy::Staged), 2, 4096));
  Device->FailCopies = true;
  makeFile(8 * 4096);
  char *Buf = Device->alloc(8 * 4096);
  auto N = read(Buf, 8 * 4096, 0);
  ASSERT_FALSE(bool(N));
  ErrorDetailsTy D = takeErrorDetails(N.takeError());
  EXPECT_EQ(D.Errno, EIO) << D.Message;
  EXPECT_NE(D.Message.find("copy failed"), std::string::npos) << D.Message;
  EXPECT_EQ(errnoOf(write(Buf, 8 * 4096, 0)), EIO);
}

//===----------------------------------------------------------------------===//
// Submission: validation, path choice, info
//===----------------------------------------------------------------------===//

TEST_F(IOEngineTest, SubmitValidatesBeforeAnyIO) {
  engine(smallConfig(-1));
  makeFile(4096);
  char *Buf = Device->alloc(4096);
  char Foreign[64];
  using Op = IORequestTy::OpTy;
  // The errno of the submission; accepted requests are waited for.
  auto Submit = [&](Op O, int F, void *B, size_t C, off_t Off) {
    auto R = Engine->submit(O, F, B, C, Off);
    if (!R)
      return errnoOf(R.takeError());
    return errnoOf((*R)->wait());
  };
  EXPECT_EQ(Submit(Op::Read, -1, Buf, 10, 0), EBADF);
  EXPECT_EQ(Submit(Op::Write, 987654, Buf, 10, 0), EBADF);
  EXPECT_EQ(Submit(Op::Read, Fd, Buf, 10, -1), EINVAL);
  // No buffer holds it: EFAULT, as Linux says, before the offset range.
  EXPECT_EQ(Submit(Op::Read, Fd, Buf, size_t(SSIZE_MAX) + 1, 0), EFAULT);
  EXPECT_EQ(Submit(Op::Read, Fd, Buf, 100, INT64_MAX - 10), EINVAL);
  EXPECT_EQ(Submit(Op::Read, Fd, nullptr, 10, 0), EFAULT);
  EXPECT_EQ(Submit(Op::Read, Fd, Foreign, 10, 0), EFAULT);
  EXPECT_EQ(Submit(Op::Read, Fd, Buf + 4096 + 64, 10, 0), EFAULT);
  Sys.Mode = O_WRONLY;
  EXPECT_EQ(Submit(Op::Read, Fd, Buf, 10, 0), EBADF);
  EXPECT_EQ(Submit(Op::Write, Fd, Buf, 10, 0), 0);
  Sys.Mode = O_RDONLY;
  EXPECT_EQ(Submit(Op::Write, Fd, Buf, 10, 0), EBADF);
  Sys.Mode = O_RDWR;
  Sys.DupErrno = EMFILE;
  EXPECT_EQ(Submit(Op::Read, Fd, Buf, 10, 0), EMFILE);
  Sys.DupErrno = 0;
  // Nothing refused reached the file; nothing was counted.
  EXPECT_EQ(Sys.Preads.load(), 0u);
  EXPECT_EQ(Engine->getStats().Reads[0].load() +
                Engine->getStats().Reads[2].load(),
            0u);
}

TEST_F(IOEngineTest, CountZeroCompletesAtOnce) {
  engine(smallConfig(-1));
  makeFile(10);
  auto R = Engine->submit(IORequestTy::Read, Fd, nullptr, 0, 0);
  ASSERT_TRUE(bool(R));
  EXPECT_TRUE((*R)->isDone());
  auto N = (*R)->wait();
  ASSERT_TRUE(bool(N));
  EXPECT_EQ(*N, 0u);
  EXPECT_EQ(Sys.Preads.load(), 0u);
}

TEST_F(IOEngineTest, AutoChoosesDirectWhenTheHostCanAddressTheBuffer) {
  IOEngineTy &E = engine(smallConfig(-1), nullptr, /*HostAddressable=*/true);
  makeFile(10000);
  char *Buf = Device->alloc(10000);
  ASSERT_TRUE(bool(read(Buf, 10000, 0)));
  EXPECT_EQ(E.getStats().BytesRead[unsigned(IOPathTy::Direct)].load(), 10000u);
  std::string Why;
  EXPECT_EQ(E.availablePaths(Why), (1u << unsigned(IOPathTy::Direct)) |
                                       (1u << unsigned(IOPathTy::Staged)));
  EXPECT_EQ(Why, "fastpath: the fake plugin has no vendor storage DMA\n");
}

TEST_F(IOEngineTest, AutoChoosesStagedForDeviceMemoryTheHostCannotAddress) {
  IOEngineTy &E = engine(smallConfig(-1), nullptr, /*HostAddressable=*/false);
  makeFile(10000);
  char *DevMem = Device->alloc(10000, AllocKindTy::Device);
  char *HostMem = Device->alloc(10000, AllocKindTy::Host);
  char *Shared = Device->alloc(10000, AllocKindTy::Shared);
  ASSERT_TRUE(bool(read(DevMem, 10000, 0)));
  ASSERT_TRUE(bool(read(HostMem, 10000, 0)));
  ASSERT_TRUE(bool(read(Shared, 10000, 0)));
  EXPECT_EQ(mismatches(DevMem, 10000, 0), 0u);
  EXPECT_EQ(E.getStats().BytesRead[unsigned(IOPathTy::Staged)].load(), 10000u);
  // Host and shared allocations are host-addressable even here.
  EXPECT_EQ(E.getStats().BytesRead[unsigned(IOPathTy::Direct)].load(), 20000u);
  std::string Why;
  EXPECT_EQ(E.availablePaths(Why), 1u << unsigned(IOPathTy::Staged));
  EXPECT_NE(Why.find("direct: device memory is not addressable by the host\n"),
            std::string::npos)
      << Why;
  // Forcing direct onto device memory is refused with ENOTSUP.
  engine(smallConfig(int(IOPathTy::Direct)), nullptr, false);
  DevMem = Device->alloc(10000, AllocKindTy::Device);
  auto N = read(DevMem, 10000, 0);
  ASSERT_FALSE(bool(N));
  ErrorDetailsTy D = takeErrorDetails(N.takeError());
  EXPECT_EQ(D.Errno, ENOTSUP);
  EXPECT_NE(D.Message.find("OMPX_IO_PATH=direct"), std::string::npos)
      << D.Message;
}

TEST_F(IOEngineTest, ForcedFastpathWithoutOneIsENOTSUP) {
  engine(smallConfig(int(IOPathTy::Fastpath)));
  char *Buf = Device->alloc(100);
  auto N = read(Buf, 100, 0);
  ASSERT_FALSE(bool(N));
  ErrorDetailsTy D = takeErrorDetails(N.takeError());
  EXPECT_EQ(D.Errno, ENOTSUP);
  EXPECT_NE(D.Message.find("no vendor storage DMA"), std::string::npos)
      << D.Message;
}

TEST_F(IOEngineTest, InfoPrintsOneLinePerTransfer) {
  IOConfigTy C = smallConfig(-1);
  C.Info = true;
  engine(C);
  makeFile(8192);
  char *Buf = Device->alloc(8192);
  ::testing::internal::CaptureStderr();
  auto N = read(Buf, 8192, 0);
  auto M = write(Buf, 100, 50);
  auto Refused = read(nullptr, 10, 0);
  std::string Err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(bool(N) && bool(M));
  llvm::consumeError(Refused.takeError());
  std::string Fd = std::to_string(this->Fd);
  EXPECT_NE(
      Err.find("ompx-io device 0: read 8192 bytes, fd " + Fd + " offset 0, "),
      std::string::npos)
      << Err;
  EXPECT_NE(Err.find(": direct path (the host can address the device buffer)"),
            std::string::npos)
      << Err;
  EXPECT_NE(
      Err.find("ompx-io device 0: write 100 bytes, fd " + Fd + " offset 50, "),
      std::string::npos)
      << Err;
  EXPECT_EQ(std::count(Err.begin(), Err.end(), '\n'), 2) << Err;
}

//===----------------------------------------------------------------------===//
// Fastpath
//===----------------------------------------------------------------------===//

TEST_F(IOEngineTest, FastpathServesWhatItAccepts) {
  FakeFastpathTy Fast(Sys);
  IOEngineTy &E = engine(smallConfig(-1, 4, 4096), &Fast);
  makeFile(50000);
  char *Buf = Device->alloc(50000);
  auto N = read(Buf, 50000, 0);
  ASSERT_TRUE(bool(N));
  EXPECT_EQ(*N, 50000u);
  EXPECT_EQ(mismatches(Buf, 50000, 0), 0u);
  EXPECT_EQ(E.getStats().BytesRead[unsigned(IOPathTy::Fastpath)].load(),
            50000u);
  EXPECT_EQ(E.getStats().Reads[unsigned(IOPathTy::Fastpath)].load(), 1u);
  EXPECT_EQ(Sys.Preads.load(), 0u);
  N = write(Buf, 50000, 50000);
  ASSERT_TRUE(bool(N));
  EXPECT_EQ(Sys.file().size(), 100000u);
  EXPECT_EQ(E.getStats().BytesWritten[unsigned(IOPathTy::Fastpath)].load(),
            50000u);
  EXPECT_EQ(E.getStats().Fallbacks.load(), 0u);
  std::string Why;
  EXPECT_EQ(E.availablePaths(Why), 7u);
  EXPECT_EQ(Why, "");
}

TEST_F(IOEngineTest, FastpathThatRefusesIsNotUsed) {
  FakeFastpathTy Fast(Sys);
  Fast.Accept = false;
  IOEngineTy &E = engine(smallConfig(-1), &Fast);
  makeFile(5000);
  char *Buf = Device->alloc(5000);
  ASSERT_TRUE(bool(read(Buf, 5000, 0)));
  EXPECT_EQ(Fast.Reads.load(), 0u);
  EXPECT_EQ(E.getStats().BytesRead[unsigned(IOPathTy::Direct)].load(), 5000u);
  // Forced, the refusal is the error.
  engine(smallConfig(int(IOPathTy::Fastpath)), &Fast);
  Buf = Device->alloc(5000);
  auto N = read(Buf, 5000, 0);
  ASSERT_FALSE(bool(N));
  ErrorDetailsTy D = takeErrorDetails(N.takeError());
  EXPECT_EQ(D.Errno, ENOTSUP);
  EXPECT_NE(D.Message.find("the file is on tmpfs"), std::string::npos)
      << D.Message;
}

class IOEngineFallbackTest : public IOEngineTest,
                             public ::testing::WithParamInterface<int> {};

TEST_P(IOEngineFallbackTest, FastpathFailureFallsBackToStagedOnce) {
  // Every worker reaches the fastpath before the first failure returns: the
  // request still falls back once, counted once, with the reason.
  FakeFastpathTy Fast(Sys);
  Fast.ReadErrno = GetParam();
  Fast.WriteErrno = GetParam();
  Fast.Delay = std::chrono::milliseconds(20);
  IOEngineTy &E = engine(smallConfig(-1, 4, 4096), &Fast);
  makeFile(40 * 4096);
  char *Buf = Device->alloc(40 * 4096);
  auto N = read(Buf, 40 * 4096, 0);
  ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
  EXPECT_EQ(*N, 40u * 4096);
  EXPECT_EQ(mismatches(Buf, 40 * 4096, 0), 0u);
  IOStatsTy &S = E.getStats();
  EXPECT_EQ(S.Reads[unsigned(IOPathTy::Fastpath)].load(), 1u);
  EXPECT_EQ(S.BytesRead[unsigned(IOPathTy::Staged)].load(), 40u * 4096);
  EXPECT_EQ(S.BytesRead[unsigned(IOPathTy::Fastpath)].load(), 0u);
  EXPECT_EQ(S.Fallbacks.load(), 1u) << "fastpath reads: " << Fast.Reads.load();
  {
    std::lock_guard<std::mutex> Guard(S.ReasonLock);
    EXPECT_NE(S.LastFallback.find("fastpath failed (fake cuFileRead"),
              std::string::npos)
        << S.LastFallback;
    EXPECT_NE(S.LastFallback.find("retried on the staged path"),
              std::string::npos)
        << S.LastFallback;
  }
  // Writes fall back too (on another file system: the first one is now
  // refused at submission).
  Sys.FileSystem = 4242;
  N = write(Buf, 40 * 4096, 40 * 4096);
  ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
  std::vector<char> F = Sys.file();
  ASSERT_EQ(F.size(), 80u * 4096);
  EXPECT_EQ(mismatches(F.data() + 40 * 4096, 40 * 4096, 0), 0u);
  EXPECT_EQ(S.Writes[unsigned(IOPathTy::Fastpath)].load(), 1u);
  EXPECT_EQ(S.Fallbacks.load(), 2u);
}

TEST_P(IOEngineFallbackTest, RefusedFileSystemGoesStagedAtOnce) {
  // A fastpath that fails for a file system is not asked again for it:
  // later requests there are staged from submission, with the reason, and
  // counted as staged requests; other file systems still get the fastpath.
  FakeFastpathTy Fast(Sys);
  Fast.ReadErrno = GetParam();
  IOConfigTy C = smallConfig(-1, 2, 4096);
  C.Info = true;
  IOEngineTy &E = engine(C, &Fast, /*HostAddressable=*/false);
  makeFile(8 * 4096);
  char *Buf = Device->alloc(8 * 4096);
  Sys.FileSystem = 77;
  ::testing::internal::CaptureStderr();
  auto N = read(Buf, 8 * 4096, 0);
  unsigned TriedFirst = Fast.Reads.load();
  auto Again = read(Buf, 8 * 4096, 0);
  std::string Err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
  ASSERT_TRUE(bool(Again)) << takeErrorMessage(Again.takeError());
  EXPECT_EQ(mismatches(Buf, 8 * 4096, 0), 0u);
  EXPECT_GE(TriedFirst, 1u);
  EXPECT_EQ(Fast.Reads.load(), TriedFirst) << "asked again";
  IOStatsTy &S = E.getStats();
  EXPECT_EQ(S.Fallbacks.load(), 1u);
  EXPECT_EQ(S.Reads[unsigned(IOPathTy::Fastpath)].load(), 1u);
  EXPECT_EQ(S.Reads[unsigned(IOPathTy::Staged)].load(), 1u);
  EXPECT_EQ(S.BytesRead[unsigned(IOPathTy::Staged)].load(), 16u * 4096);
  EXPECT_EQ(E.getRefusedFileSystems().size(), 1u);
  EXPECT_NE(Err.find("staged path (fastpath: fake refused this file system "
                     "before: fake cuFileRead(fd "),
            std::string::npos)
      << Err;

  // Another file system: the fastpath is tried again, and serves.
  Sys.FileSystem = 78;
  Fast.ReadErrno = 0;
  N = read(Buf, 8 * 4096, 0);
  ASSERT_TRUE(bool(N));
  EXPECT_EQ(S.Reads[unsigned(IOPathTy::Fastpath)].load(), 2u);
  EXPECT_EQ(S.BytesRead[unsigned(IOPathTy::Fastpath)].load(), 8u * 4096);
  // The refused one stays refused.
  Sys.FileSystem = 77;
  N = read(Buf, 8 * 4096, 0);
  ASSERT_TRUE(bool(N));
  EXPECT_EQ(S.Reads[unsigned(IOPathTy::Staged)].load(), 2u);
  EXPECT_EQ(S.Fallbacks.load(), 1u);
}

TEST_F(IOEngineTest, FastpathLogsThroughTheEnginesLog) {
  // The fastpath's lines go to the engine's log: printed with OMPX_IO_INFO
  // (IOConfigTy::Info), in the engine's format, and not without it.
  class LoggingFastpathTy final : public IOFastpathTy {
  public:
    const char *name() const override { return "logging"; }
    bool accepts(int, const void *, size_t, off_t, std::string &Why,
                 const IOLogTy &Log) override {
      Log.print("logging fastpath looked at the file");
      Why = "it only logs";
      return false;
    }
    Expected<size_t> read(int, void *, size_t, off_t,
                          const IOLogTy &) override {
      return makeErrnoError(EIO, "not reached");
    }
    Error write(int, const void *, size_t, off_t, const IOLogTy &) override {
      return makeErrnoError(EIO, "not reached");
    }
  } Fast;
  makeFile(4096);
  for (bool Info : {true, false}) {
    IOConfigTy C = smallConfig(-1);
    C.Info = Info;
    engine(C, &Fast);
    char *Buf = Device->alloc(4096);
    ::testing::internal::CaptureStderr();
    auto N = read(Buf, 4096, 0);
    std::string Err = ::testing::internal::GetCapturedStderr();
    ASSERT_TRUE(bool(N));
    EXPECT_EQ(Err.find("ompx-io device 0: logging fastpath looked at the "
                       "file\n") != std::string::npos,
              Info)
        << Err;
  }
}

TEST_P(IOEngineFallbackTest, FallbackWithOneWorkerTriesTheFastpathOnce) {
  FakeFastpathTy Fast(Sys);
  Fast.ReadErrno = GetParam();
  IOEngineTy &E = engine(smallConfig(-1, 1, 4096), &Fast);
  makeFile(10 * 4096);
  char *Buf = Device->alloc(10 * 4096);
  auto N = read(Buf, 10 * 4096, 0);
  ASSERT_TRUE(bool(N));
  EXPECT_EQ(mismatches(Buf, 10 * 4096, 0), 0u);
  EXPECT_EQ(Fast.Reads.load(), 1u);
  EXPECT_EQ(E.getStats().Fallbacks.load(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Errnos, IOEngineFallbackTest,
                         ::testing::Values(ENODEV, EREMOTEIO, ENOTSUP));

TEST_F(IOEngineTest, FastpathEioFailsTheRequestWithoutFallback) {
  FakeFastpathTy Fast(Sys);
  Fast.ReadErrno = EIO;
  Fast.WriteErrno = ENOSPC;
  IOEngineTy &E = engine(smallConfig(-1, 4, 4096), &Fast);
  makeFile(20 * 4096);
  char *Buf = Device->alloc(20 * 4096);
  auto N = read(Buf, 20 * 4096, 0);
  ASSERT_FALSE(bool(N));
  ErrorDetailsTy D = takeErrorDetails(N.takeError());
  EXPECT_EQ(D.Errno, EIO);
  EXPECT_NE(D.Message.find("fastpath: fake cuFileRead"), std::string::npos)
      << D.Message;
  EXPECT_EQ(errnoOf(write(Buf, 20 * 4096, 0)), ENOSPC);
  EXPECT_EQ(E.getStats().Fallbacks.load(), 0u);
  EXPECT_EQ(E.getStats().BytesRead[unsigned(IOPathTy::Staged)].load(), 0u);
  EXPECT_EQ(Sys.Preads.load(), 0u);
}

//===----------------------------------------------------------------------===//
// O_DIRECT for the aligned middle
//===----------------------------------------------------------------------===//

using CallTy = FakeSysTy::CallTy;

/// O_DIRECT middles in chunks of 16 KiB; everything else in chunks of 4 KiB,
/// so that staging rings grow when a request with an O_DIRECT middle comes.
IOConfigTy directConfig(int Path, IODirectPolicyTy Policy) {
  IOConfigTy C = smallConfig(Path, 4, 4096);
  C.DirectChunkSize = 16384;
  C.ODirect = Policy;
  return C;
}

/// Chunks of 16 KiB, alignment 4096: a request at offset 1000 of 70000
/// bytes is a buffered head [1000, 4096), four O_DIRECT chunks of the middle
/// [4096, 69632) and a buffered tail [69632, 71000).
class IOEngineDirectTest : public IOEnginePathTest {
protected:
  /// A pointer into a fresh allocation such that Ptr + Skew is
  /// page-aligned.
  char *bufferFor(size_t Size, size_t Skew) {
    char *Base = Device->alloc(Size + 8192);
    uintptr_t At = reinterpret_cast<uintptr_t>(Base) + Skew;
    return Base + (4096 - At % 4096) % 4096;
  }
  static std::vector<CallTy> headMiddleTail(bool Write) {
    std::vector<CallTy> C = {{Write, false, 1000, 3096},
                             {Write, false, 69632, 1368}};
    for (size_t O = 4096; O < 69632; O += 16384)
      C.push_back({Write, true, O, 16384});
    std::sort(C.begin(), C.end());
    return C;
  }
};

TEST_P(IOEngineDirectTest, UnalignedReadSplitsHeadMiddleAndTail) {
  Sys.CallerDirect = true;
  IOEngineTy &E = engine(directConfig(path(), IODirectPolicyTy::Auto));
  makeFile(100000);
  char *Buf = bufferFor(70000, 3096);
  auto N = read(Buf, 70000, 1000);
  ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
  EXPECT_EQ(*N, 70000u);
  EXPECT_EQ(mismatches(Buf, 70000, 1000), 0u);
  EXPECT_EQ(Sys.takeCalls(), headMiddleTail(false));
  // The buffered twin was reopened read-only, without O_DIRECT.
  ASSERT_EQ(Sys.reopens().size(), 1u);
  EXPECT_EQ(Sys.reopens()[0] & (O_ACCMODE | O_DIRECT), O_RDONLY);
  EXPECT_EQ(E.getStats().BytesRead[path()].load(), 70000u);
  EXPECT_EQ(E.getStats().Fallbacks.load(), 0u);
}

TEST_P(IOEngineDirectTest, UnalignedWriteSplitsHeadMiddleAndTail) {
  Sys.CallerDirect = true;
  engine(directConfig(path(), IODirectPolicyTy::Auto));
  char *Buf = bufferFor(70000, 3096);
  for (size_t I = 0; I < 70000; ++I)
    Buf[I] = pat(I, 3);
  auto N = write(Buf, 70000, 1000);
  ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
  EXPECT_EQ(*N, 70000u);
  std::vector<char> F = Sys.file();
  ASSERT_EQ(F.size(), 71000u);
  EXPECT_EQ(mismatches(F.data() + 1000, 70000, 0, 3), 0u);
  EXPECT_EQ(Sys.takeCalls(), headMiddleTail(true));
  ASSERT_EQ(Sys.reopens().size(), 1u);
  EXPECT_EQ(Sys.reopens()[0] & (O_ACCMODE | O_DIRECT), O_WRONLY);
}

TEST_P(IOEngineDirectTest, AlignedRequestUsesOnlyTheDirectFd) {
  Sys.CallerDirect = true;
  engine(directConfig(path(), IODirectPolicyTy::Auto));
  makeFile(100000);
  char *Buf = bufferFor(40960, 0);
  auto N = read(Buf, 40960, 8192);
  ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
  EXPECT_EQ(*N, 40960u);
  EXPECT_EQ(mismatches(Buf, 40960, 8192), 0u);
  std::vector<CallTy> Want = {{false, true, 8192, 16384},
                              {false, true, 24576, 16384},
                              {false, true, 40960, 8192}};
  EXPECT_EQ(Sys.takeCalls(), Want);
}

TEST_P(IOEngineDirectTest, EndOfFileInTheMiddleAndInTheTail) {
  Sys.CallerDirect = true;
  engine(directConfig(path(), IODirectPolicyTy::Auto));
  makeFile(50000);
  char *Buf = bufferFor(65536, 0);
  // Aligned count past EOF: the O_DIRECT chunk at 49152 is short (848).
  auto N = read(Buf, 65536, 0);
  ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
  EXPECT_EQ(*N, 50000u);
  EXPECT_EQ(mismatches(Buf, 50000, 0), 0u);
  // The tail [53248, 54096) lies past EOF: buffered, and reads nothing.
  Buf = bufferFor(50000, 0);
  N = read(Buf, 50000, 4096);
  ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
  EXPECT_EQ(*N, 45904u);
  EXPECT_EQ(mismatches(Buf, 45904, 4096), 0u);
  for (const CallTy &C : Sys.takeCalls())
    if (C.Direct)
      EXPECT_TRUE(C.Offset % 4096 == 0 && C.Count % 4096 == 0)
          << C.Offset << " " << C.Count;
}

TEST_P(IOEngineDirectTest, OffPolicyReopensTheDirectFdBuffered) {
  Sys.CallerDirect = true;
  engine(directConfig(path(), IODirectPolicyTy::Off));
  makeFile(100000);
  char *Buf = bufferFor(70000, 3096);
  auto N = read(Buf + 1, 70000, 1000); // Unaligned memory too.
  ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
  EXPECT_EQ(*N, 70000u);
  EXPECT_EQ(mismatches(Buf + 1, 70000, 1000), 0u);
  std::vector<CallTy> Calls = Sys.takeCalls();
  EXPECT_FALSE(Calls.empty());
  for (const CallTy &C : Calls)
    EXPECT_FALSE(C.Direct) << C.Offset;
  ASSERT_EQ(Sys.reopens().size(), 1u);
  EXPECT_EQ(Sys.reopens()[0] & O_DIRECT, 0);
}

TEST_P(IOEngineDirectTest, AutoPolicyLeavesABufferedFdAlone) {
  engine(directConfig(path(), IODirectPolicyTy::Auto));
  makeFile(100000);
  char *Buf = bufferFor(70000, 3096);
  ASSERT_TRUE(bool(read(Buf, 70000, 1000)));
  for (const CallTy &C : Sys.takeCalls())
    EXPECT_FALSE(C.Direct);
  EXPECT_TRUE(Sys.reopens().empty());
}

TEST_P(IOEngineDirectTest, OnPolicyReopensABufferedFdWithODirect) {
  Sys.Mode = O_WRONLY;
  engine(directConfig(path(), IODirectPolicyTy::On));
  char *Buf = bufferFor(70000, 3096);
  for (size_t I = 0; I < 70000; ++I)
    Buf[I] = pat(I, 4);
  auto N = write(Buf, 70000, 1000);
  ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
  std::vector<char> F = Sys.file();
  ASSERT_EQ(F.size(), 71000u);
  EXPECT_EQ(mismatches(F.data() + 1000, 70000, 0, 4), 0u);
  EXPECT_EQ(Sys.takeCalls(), headMiddleTail(true));
  ASSERT_EQ(Sys.reopens().size(), 1u);
  EXPECT_EQ(Sys.reopens()[0] & (O_ACCMODE | O_DIRECT), O_WRONLY | O_DIRECT);
}

TEST_P(IOEngineDirectTest, OnPolicyReopenEinvalFallsBackAndSaysSoOnce) {
  Sys.ReopenErrno = EINVAL;
  IOConfigTy C = directConfig(path(), IODirectPolicyTy::On);
  C.Info = true;
  engine(C);
  makeFile(100000);
  char *Buf = bufferFor(70000, 3096);
  ::testing::internal::CaptureStderr();
  auto N = read(Buf, 70000, 1000);
  std::string Err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
  EXPECT_EQ(*N, 70000u);
  EXPECT_EQ(mismatches(Buf, 70000, 1000), 0u);
  for (const CallTy &Call : Sys.takeCalls())
    EXPECT_FALSE(Call.Direct);
  EXPECT_EQ(std::count(Err.begin(), Err.end(), '\n'), 1) << Err;
  EXPECT_NE(Err.find("O_DIRECT unavailable, buffered (reopen: Invalid "
                     "argument)"),
            std::string::npos)
      << Err;
}

TEST_P(IOEngineDirectTest, EinvalOnTheDirectFdRetriesBuffered) {
  Sys.CallerDirect = true;
  Sys.DirectEinval = true;
  IOEngineTy &E = engine(directConfig(path(), IODirectPolicyTy::Auto));
  makeFile(100000);
  char *Buf = bufferFor(70000, 3096);
  auto N = read(Buf, 70000, 1000);
  ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
  EXPECT_EQ(*N, 70000u);
  EXPECT_EQ(mismatches(Buf, 70000, 1000), 0u);
  // Each middle chunk: refused on the O_DIRECT fd, then served buffered.
  std::vector<CallTy> Want = headMiddleTail(false);
  for (size_t O = 4096; O < 69632; O += 16384)
    Want.push_back({false, false, O, 16384});
  std::sort(Want.begin(), Want.end());
  EXPECT_EQ(Sys.takeCalls(), Want);
  for (size_t I = 0; I < 70000; ++I)
    Buf[I] = pat(I, 6);
  N = write(Buf, 70000, 1000);
  ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
  EXPECT_EQ(mismatches(Sys.file().data() + 1000, 70000, 0, 6), 0u);
  EXPECT_EQ(E.getStats().Fallbacks.load(), 0u);
}

TEST_F(IOEngineTest, DirectPathUsesODirectOnlyForAlignedMemory) {
  Sys.CallerDirect = true;
  engine(directConfig(int(IOPathTy::Direct), IODirectPolicyTy::Auto));
  makeFile(100000);
  char *Base = Device->alloc(80000);
  // Base + 8 + 3096 is not aligned: everything goes buffered.
  auto N = read(Base + 8, 70000, 1000);
  ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
  EXPECT_EQ(mismatches(Base + 8, 70000, 1000), 0u);
  for (const CallTy &C : Sys.takeCalls())
    EXPECT_FALSE(C.Direct) << C.Offset;
}

TEST_F(IOEngineTest, SmallerDirectAlignmentKeepsPageGeometry) {
  // 512-byte O_DIRECT blocks: boundaries stay on pages, so that buffered
  // heads and tails share no page with the O_DIRECT middle.
  Sys.CallerDirect = true;
  Sys.DioAlign = 512;
  engine(directConfig(int(IOPathTy::Staged), IODirectPolicyTy::Auto));
  makeFile(100000);
  char *Buf = Device->alloc(70000);
  auto N = read(Buf, 70000, 1000);
  ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
  EXPECT_EQ(mismatches(Buf, 70000, 1000), 0u);
  std::vector<CallTy> Want = {{false, false, 1000, 3096},
                              {false, false, 69632, 1368}};
  for (size_t O = 4096; O < 69632; O += 16384)
    Want.push_back({false, true, O, 16384});
  std::sort(Want.begin(), Want.end());
  EXPECT_EQ(Sys.takeCalls(), Want);
}

TEST_F(IOEngineTest, StagingRingsGrowForDirectChunksAndKeepServingSmallOnes) {
  // One worker: its ring serves 4 KiB chunks, then 16 KiB O_DIRECT chunks
  // (the ring is reallocated once its copies are done), then small ones
  // again from the larger buffers. Every byte must arrive.
  IOConfigTy C = directConfig(int(IOPathTy::Staged), IODirectPolicyTy::Auto);
  C.Threads = 1;
  engine(C);
  makeFile(200000);
  char *Buf = Device->alloc(200000);
  for (bool Direct : {false, true, false}) {
    Sys.CallerDirect = Direct;
    std::memset(Buf, 0, 200000);
    auto N = read(Buf, 150000, 1000);
    ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
    EXPECT_EQ(*N, 150000u);
    EXPECT_EQ(mismatches(Buf, 150000, 1000), 0u);
    size_t DirectCalls = 0;
    for (const CallTy &Call : Sys.takeCalls()) {
      DirectCalls += Call.Direct;
      EXPECT_LE(Call.Count, Call.Direct ? 16384u : 4096u);
    }
    EXPECT_EQ(DirectCalls, Direct ? 9u : 0u);
  }
}

TEST_F(IOEngineTest, RequestWithoutAnAlignedBlockIsBuffered) {
  Sys.CallerDirect = true;
  engine(directConfig(-1, IODirectPolicyTy::Auto));
  makeFile(100000);
  char *Buf = Device->alloc(4096);
  auto N = read(Buf, 3000, 5000);
  ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
  EXPECT_EQ(mismatches(Buf, 3000, 5000), 0u);
  std::vector<CallTy> Want = {{false, false, 5000, 3000}};
  EXPECT_EQ(Sys.takeCalls(), Want);
}

INSTANTIATE_TEST_SUITE_P(Paths, IOEngineDirectTest,
                         ::testing::Values(IOPathTy::Direct, IOPathTy::Staged),
                         pathName);

//===----------------------------------------------------------------------===//
// POSIX details: Linux's order of checks, files that are not files, the
// file size limit, O_APPEND with O_DIRECT
//===----------------------------------------------------------------------===//

TEST_F(IOEngineTest, DescriptorChecksFollowLinuxOrder) {
  engine(smallConfig(-1));
  makeFile(4096);
  char *Buf = Device->alloc(4096);
  using Op = IORequestTy::OpTy;
  auto Submit = [&](Op O, int F, size_t C, off_t Off) {
    auto R = Engine->submit(O, F, Buf, C, Off);
    if (!R)
      return errnoOf(R.takeError());
    return errnoOf((*R)->wait());
  };
  // As pread(2) and pwrite(2) on Linux: a negative offset first, then a
  // closed descriptor, then seekability, then the access mode, then the
  // file type; count 0 is checked all the same.
  EXPECT_EQ(Submit(Op::Read, 987654, 10, -1), EINVAL);
  for (mode_t Type : {S_IFIFO, S_IFSOCK}) {
    Sys.FileType = Type;
    for (size_t Count : {size_t(0), size_t(10)}) {
      Sys.Mode = O_RDWR;
      EXPECT_EQ(Submit(Op::Read, Fd, Count, 0), ESPIPE) << Type << Count;
      EXPECT_EQ(Submit(Op::Write, Fd, Count, 0), ESPIPE) << Type << Count;
      EXPECT_EQ(Submit(Op::Read, Fd, Count, -1), EINVAL) << Type << Count;
      Sys.Mode = O_WRONLY; // Reading the write end of a pipe.
      EXPECT_EQ(Submit(Op::Read, Fd, Count, 0), ESPIPE) << Type << Count;
      Sys.Mode = O_RDONLY; // Writing its read end.
      EXPECT_EQ(Submit(Op::Write, Fd, Count, 0), ESPIPE) << Type << Count;
    }
  }
  Sys.FileType = S_IFDIR;
  Sys.Mode = O_RDONLY;
  EXPECT_EQ(Submit(Op::Read, Fd, 0, 0), EISDIR);
  EXPECT_EQ(Submit(Op::Read, Fd, 10, 0), EISDIR);
  EXPECT_EQ(Submit(Op::Write, Fd, 0, 0), EBADF);
  Sys.FileType = S_IFREG;
  Sys.Mode = O_WRONLY;
  EXPECT_EQ(Submit(Op::Read, Fd, 0, 0), EBADF);
  Sys.Mode = O_RDWR;
  EXPECT_EQ(Submit(Op::Read, Fd, 0, 0), 0);
  // Nothing refused reached the file; nothing was counted.
  EXPECT_EQ(Sys.Preads.load() + Sys.Pwrites.load(), 0u);
  EXPECT_EQ(Engine->getStats().Reads[0].load() +
                Engine->getStats().Reads[2].load(),
            1u);
}

TEST_F(IOEngineTest, ODirectOnReopensOnlyRegularFilesAndBlockDevices) {
  engine(directConfig(-1, IODirectPolicyTy::On));
  makeFile(100000);
  char *Buf = Device->alloc(70000);
  // A character device: served buffered, never reopened (a FIFO's reopen
  // would wait for a peer forever).
  Sys.FileType = S_IFCHR;
  auto N = read(Buf, 70000, 1000);
  ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
  EXPECT_EQ(*N, 70000u);
  EXPECT_EQ(mismatches(Buf, 70000, 1000), 0u);
  EXPECT_TRUE(Sys.reopens().empty());
  Sys.FileType = S_IFIFO;
  EXPECT_EQ(errnoOf(read(Buf, 70000, 1000)), ESPIPE);
  EXPECT_EQ(errnoOf(write(Buf, 70000, 1000)), ESPIPE);
  EXPECT_TRUE(Sys.reopens().empty());
  // Block devices and regular files are.
  for (mode_t Type : {S_IFBLK, S_IFREG}) {
    Sys.FileType = Type;
    N = read(Buf, 70000, 1000);
    ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
    EXPECT_EQ(*N, 70000u);
  }
  EXPECT_EQ(Sys.reopens().size(), 2u);
}

TEST_P(IOEnginePathTest, WriteAtTheFileSizeLimitReturnsWhatItWrote) {
  IOEngineTy &E = engine(smallConfig(path(), 4, 4096));
  Sys.SizeLimit = 7 * 4096 + 5;
  Sys.EintrEveryOther = true;
  char *Buf = Device->alloc(16 * 4096);
  for (size_t I = 0; I < 16 * 4096; ++I)
    Buf[I] = pat(I, 3);
  // As pwrite(2): the bytes before the limit, with several workers the
  // contiguous prefix from the request's start.
  auto N = write(Buf, 16 * 4096, 0);
  ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
  EXPECT_EQ(*N, 7u * 4096 + 5);
  std::vector<char> F = Sys.file();
  ASSERT_EQ(F.size(), 7u * 4096 + 5);
  EXPECT_EQ(mismatches(F.data(), F.size(), 0, 3), 0u);
  EXPECT_EQ(E.getStats().BytesWritten[path()].load(), 7u * 4096 + 5);
  N = write(Buf, 2 * 4096, 7 * 4096);
  ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
  EXPECT_EQ(*N, 5u);
  // Nothing written: EFBIG.
  N = write(Buf, 3 * 4096, 7 * 4096 + 5);
  ASSERT_FALSE(bool(N));
  ErrorDetailsTy D = takeErrorDetails(N.takeError());
  EXPECT_EQ(D.Errno, EFBIG);
  EXPECT_NE(D.Message.find("pwrite"), std::string::npos) << D.Message;
  // Other errors still fail the whole request.
  Sys.SizeLimit = SIZE_MAX;
  Sys.SpaceLimit = 5 * 4096;
  EXPECT_EQ(errnoOf(write(Buf, 16 * 4096, 0)), ENOSPC);
}

TEST_F(IOEngineTest, FastpathWriteAtTheFileSizeLimitReturnsWhatItWrote) {
  FakeFastpathTy Fast(Sys);
  IOEngineTy &E = engine(smallConfig(-1, 4, 4096), &Fast);
  Sys.SizeLimit = 7 * 4096 + 5;
  char *Buf = Device->alloc(16 * 4096);
  for (size_t I = 0; I < 16 * 4096; ++I)
    Buf[I] = pat(I, 4);
  auto N = write(Buf, 16 * 4096, 0);
  ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
  EXPECT_EQ(*N, 7u * 4096 + 5);
  std::vector<char> F = Sys.file();
  ASSERT_EQ(F.size(), 7u * 4096 + 5);
  EXPECT_EQ(mismatches(F.data(), F.size(), 0, 4), 0u);
  IOStatsTy &S = E.getStats();
  EXPECT_EQ(S.BytesWritten[unsigned(IOPathTy::Fastpath)].load() +
                S.BytesWritten[unsigned(IOPathTy::Staged)].load(),
            7u * 4096 + 5);
  EXPECT_EQ(S.Fallbacks.load(), 0u);
  EXPECT_EQ(errnoOf(write(Buf, 4096, 8 * 4096)), EFBIG);
}

TEST_P(IOEngineDirectTest, AppendToAnODirectFdRetriesEinvalBuffered) {
  Sys.CallerDirect = true;
  Sys.ExtraFlags = O_APPEND;
  Sys.DirectEinval = true;
  engine(directConfig(path(), IODirectPolicyTy::Auto));
  char *Buf = bufferFor(3 * 4096 + 100, 0);
  for (size_t I = 0; I < 3 * 4096 + 100; ++I)
    Buf[I] = pat(I, 7);
  // The EINVAL of O_DIRECT is retried without it, as for any O_DIRECT fd,
  // through a reopen that appends too.
  auto N = write(Buf, 3 * 4096 + 100, 0);
  ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
  EXPECT_EQ(*N, 3u * 4096 + 100);
  EXPECT_EQ(mismatches(Sys.file().data(), 3 * 4096 + 100, 0, 7), 0u);
  ASSERT_EQ(Sys.reopens().size(), 1u);
  EXPECT_EQ(Sys.reopens()[0] & (O_ACCMODE | O_APPEND | O_DIRECT),
            O_WRONLY | O_APPEND);
  bool SawDirect = false;
  for (const CallTy &Call : Sys.takeCalls())
    SawDirect |= Call.Direct;
  EXPECT_TRUE(SawDirect);
}

//===----------------------------------------------------------------------===//
// Settings from the environment
//===----------------------------------------------------------------------===//

TEST(IOConfigTest, FromEnvDefaultsAndValidValues) {
  for (const char *V :
       {"OMPX_IO_THREADS", "OMPX_IO_CHUNK_SIZE", "OMPX_IO_DIRECT_CHUNK_SIZE",
        "OMPX_IO_RING_DEPTH", "OMPX_IO_PATH", "OMPX_IO_INFO",
        "OMPX_IO_ODIRECT"})
    unsetenv(V);
  IOConfigTy C = IOConfigTy::fromEnv();
  unsigned Cores = std::max(1u, std::thread::hardware_concurrency());
  EXPECT_EQ(C.Threads, std::min(16u, Cores));
  EXPECT_EQ(C.ChunkSize, size_t(2) << 20);
  EXPECT_EQ(C.DirectChunkSize, size_t(32) << 20);
  EXPECT_EQ(C.RingDepth, 2u);
  EXPECT_EQ(C.ForcedPath, -1);
  EXPECT_FALSE(C.Info);
  EXPECT_EQ(C.ODirect, IODirectPolicyTy::Auto);
  setenv("OMPX_IO_THREADS", "16", 1);
  setenv("OMPX_IO_CHUNK_SIZE", "64K", 1);
  setenv("OMPX_IO_DIRECT_CHUNK_SIZE", "2M", 1);
  setenv("OMPX_IO_RING_DEPTH", "5", 1);
  setenv("OMPX_IO_PATH", "Staged", 1);
  setenv("OMPX_IO_INFO", "1", 1);
  setenv("OMPX_IO_ODIRECT", "On", 1);
  C = IOConfigTy::fromEnv();
  EXPECT_EQ(C.Threads, 16u);
  EXPECT_EQ(C.ChunkSize, size_t(64) << 10);
  EXPECT_EQ(C.DirectChunkSize, size_t(2) << 20);
  EXPECT_EQ(C.RingDepth, 5u);
  EXPECT_EQ(C.ForcedPath, int(IOPathTy::Staged));
  EXPECT_TRUE(C.Info);
  EXPECT_EQ(C.ODirect, IODirectPolicyTy::On);
  setenv("OMPX_IO_ODIRECT", "off", 1);
  EXPECT_EQ(IOConfigTy::fromEnv().ODirect, IODirectPolicyTy::Off);
  for (const char *V :
       {"OMPX_IO_THREADS", "OMPX_IO_CHUNK_SIZE", "OMPX_IO_DIRECT_CHUNK_SIZE",
        "OMPX_IO_RING_DEPTH", "OMPX_IO_PATH", "OMPX_IO_INFO",
        "OMPX_IO_ODIRECT"})
    unsetenv(V);
}

TEST(IOConfigTest, InvalidValuesWarnAndUseTheDefault) {
  setenv("OMPX_IO_THREADS", "0", 1);
  setenv("OMPX_IO_CHUNK_SIZE", "1000", 1);
  setenv("OMPX_IO_RING_DEPTH", "many", 1);
  setenv("OMPX_IO_PATH", "sideways", 1);
  setenv("OMPX_IO_ODIRECT", "bogus", 1);
  ::testing::internal::CaptureStderr();
  IOConfigTy C = IOConfigTy::fromEnv();
  std::string Err = ::testing::internal::GetCapturedStderr();
  unsigned Cores = std::max(1u, std::thread::hardware_concurrency());
  EXPECT_EQ(C.Threads, std::min(16u, Cores));
  EXPECT_EQ(C.ChunkSize, size_t(2) << 20);
  EXPECT_EQ(C.RingDepth, 2u);
  EXPECT_EQ(C.ForcedPath, -1);
  EXPECT_EQ(C.ODirect, IODirectPolicyTy::Auto);
  for (const char *W :
       {"ignoring OMPX_IO_THREADS='0'", "ignoring OMPX_IO_CHUNK_SIZE='1000'",
        "ignoring OMPX_IO_RING_DEPTH='many'",
        "ignoring OMPX_IO_PATH='sideways'",
        "ignoring OMPX_IO_ODIRECT='bogus': expected one of auto, on, off; "
        "using auto"})
    EXPECT_NE(Err.find(W), std::string::npos) << W << "\n" << Err;
  for (const char *V :
       {"OMPX_IO_THREADS", "OMPX_IO_CHUNK_SIZE", "OMPX_IO_RING_DEPTH",
        "OMPX_IO_PATH", "OMPX_IO_ODIRECT"})
    unsetenv(V);
}

} // namespace

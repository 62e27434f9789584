// SPDX-License-Identifier: Apache-2.0
//
// Faults at every step of a file transfer, injected through the engine's
// seams. FaultSysTy wraps the real system calls on a real temporary file and
// fails, cuts or precedes with a truncation the Nth call of one kind (pread,
// pwrite, fcntl(F_GETFL), dup, reopen). Sweeps put one fault on each call a
// clean transfer makes, for reads and writes, on the direct and the staged
// path, with a buffered descriptor, an O_DIRECT one (emulated: the fake
// refuses unaligned I/O on it as the kernel does, while the data goes through
// the page cache) and a buffered one reopened with O_DIRECT. Every run must
// end in the exact data or an error with the errno of the fault, in bounded
// time, with no descriptor left open. The device seam (FakeDevice.h) fails
// staging allocations at first use and later, events and streams; requests
// dropped without a wait and descriptors closed right after submission are
// handled.
#include "FakeDevice.h"
#include "FilePattern.h"

#include "offloadio/io/IOEngine.h"

#include "gtest/gtest.h"
#include "llvm/ADT/ScopeExit.h"

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <unistd.h>
#include <vector>

using namespace offloadio;
using namespace offloadio::unittest;

namespace {

constexpr size_t Align = 4096;

//===----------------------------------------------------------------------===//
// Fault-injecting system calls
//===----------------------------------------------------------------------===//

/// The kinds of calls the engine makes through SysTy, counted separately.
enum class CallKindTy { Pread, Pwrite, GetFlags, Dup, Reopen, NumKinds };

/// What happens to the call a fault is armed for.
struct FaultTy {
  enum KindTy {
    Errno,     ///< Fails with -1 and errno Value.
    Short,     ///< Moves half the bytes asked for (at least one).
    ZeroWrite, ///< A write that returns 0: nothing written, no error.
    Truncate,  ///< The file shrinks to Value bytes, then the call runs.
  } Kind;
  size_t Value = 0;
};

std::string faultName(const FaultTy &F) {
  switch (F.Kind) {
  case FaultTy::Errno:
    return std::strerror(int(F.Value));
  case FaultTy::Short:
    return "short";
  case FaultTy::ZeroWrite:
    return "zero-byte write";
  case FaultTy::Truncate:
    return "truncate to " + std::to_string(F.Value);
  }
  return "?";
}

/// The production system calls with one fault armed at the Nth call of one
/// kind, and O_DIRECT emulated on the descriptors that would have it. Not a
/// shared fake (FakeSys.h): the sweeps count every call of each kind on a
/// real file to put one fault on each in turn.
class FaultSysTy final : public SysTy {
public:
  /// \p FileFd is the test's descriptor of the file (for truncation).
  explicit FaultSysTy(int FileFd) : FileFd(FileFd) {}

  /// The caller's descriptor reports O_DIRECT.
  bool CallerDirect = false;

  /// Inject \p NewFault into the \p N-th (from 1) call of \p Kind from now on;
  /// counts restart.
  void arm(CallKindTy Kind, unsigned N, FaultTy NewFault) {
    std::lock_guard<std::mutex> Guard(Lock);
    Counts = {};
    Armed = true;
    Fired = false;
    ArmedKind = Kind;
    ArmedAt = N;
    Fault = NewFault;
  }
  /// No fault; counts restart.
  void disarm() {
    std::lock_guard<std::mutex> Guard(Lock);
    Counts = {};
    Armed = false;
    Fired = false;
  }
  /// Calls of \p Kind since the last arm() or disarm().
  unsigned calls(CallKindTy Kind) const {
    std::lock_guard<std::mutex> Guard(Lock);
    return Counts[unsigned(Kind)];
  }
  /// Whether the armed fault was injected.
  bool fired() const {
    std::lock_guard<std::mutex> Guard(Lock);
    return Fired;
  }

  ssize_t pread(int Fd, void *Buf, size_t Count, off_t Offset) override {
    const FaultTy *F = next(CallKindTy::Pread);
    if (F && F->Kind == FaultTy::Errno)
      return fail(int(F->Value));
    if (F)
      Count = apply(*F, Count);
    if (refuseDirect(Fd, Buf, Count, Offset))
      return fail(EINVAL);
    return SysTy::pread(Fd, Buf, Count, Offset);
  }

  ssize_t pwrite(int Fd, const void *Buf, size_t Count, off_t Offset) override {
    const FaultTy *F = next(CallKindTy::Pwrite);
    if (F && F->Kind == FaultTy::Errno)
      return fail(int(F->Value));
    if (F && F->Kind == FaultTy::ZeroWrite)
      return 0;
    if (F)
      Count = apply(*F, Count);
    if (refuseDirect(Fd, Buf, Count, Offset))
      return fail(EINVAL);
    return SysTy::pwrite(Fd, Buf, Count, Offset);
  }

  int getFlags(int Fd) override {
    if (const FaultTy *F = next(CallKindTy::GetFlags))
      return fail(int(F->Value));
    int Flags = SysTy::getFlags(Fd);
    if (Flags >= 0 && isDirect(Fd))
      Flags |= O_DIRECT;
    return Flags;
  }

  int dup(int Fd) override {
    if (const FaultTy *F = next(CallKindTy::Dup))
      return fail(int(F->Value));
    int New = SysTy::dup(Fd);
    if (New >= 0)
      noteFd(New, isDirect(Fd));
    return New;
  }

  int reopen(int Fd, int Flags) override {
    if (const FaultTy *F = next(CallKindTy::Reopen))
      return fail(int(F->Value));
    // The file may live on tmpfs: open it buffered, remember O_DIRECT.
    int New = SysTy::reopen(Fd, Flags & ~O_DIRECT);
    if (New >= 0)
      noteFd(New, Flags & O_DIRECT);
    return New;
  }

  size_t directIOAlignment(int) override { return Align; }

private:
  static int fail(int Errno) {
    errno = Errno;
    return -1;
  }
  /// Count a call of \p Kind; the fault to inject into it, if any.
  const FaultTy *next(CallKindTy Kind) {
    std::lock_guard<std::mutex> Guard(Lock);
    unsigned N = ++Counts[unsigned(Kind)];
    if (!Armed || Fired || Kind != ArmedKind || N != ArmedAt)
      return nullptr;
    Fired = true;
    return &Fault;
  }
  /// Apply a fault that lets the call run; the count it runs with.
  size_t apply(const FaultTy &F, size_t Count) {
    if (F.Kind == FaultTy::Short)
      return std::max<size_t>(1, Count / 2);
    if (F.Kind == FaultTy::Truncate)
      EXPECT_EQ(::ftruncate(FileFd, off_t(F.Value)), 0) << std::strerror(errno);
    return Count;
  }
  bool isDirect(int Fd) {
    std::lock_guard<std::mutex> Guard(Lock);
    auto It = DirectFds.find(Fd);
    return It == DirectFds.end() ? CallerDirect : It->second;
  }
  /// Descriptor numbers are reused: each new one is classified afresh.
  void noteFd(int Fd, bool Direct) {
    std::lock_guard<std::mutex> Guard(Lock);
    DirectFds[Fd] = Direct;
  }
  /// What the kernel refuses on an O_DIRECT descriptor.
  bool refuseDirect(int Fd, const void *Buf, size_t Count, off_t Offset) {
    return isDirect(Fd) &&
           (size_t(Offset) % Align || Count % Align ||
            reinterpret_cast<uintptr_t>(Buf) % Align);
  }

  int FileFd;
  mutable std::mutex Lock;
  std::array<unsigned, unsigned(CallKindTy::NumKinds)> Counts = {};
  bool Armed = false, Fired = false;
  CallKindTy ArmedKind = CallKindTy::Pread;
  unsigned ArmedAt = 0;
  FaultTy Fault{FaultTy::Errno, 0};
  std::map<int, bool> DirectFds;
};

//===----------------------------------------------------------------------===//
// Fixture
//===----------------------------------------------------------------------===//

/// Open descriptors of the process (entries of /proc/self/fd).
size_t openFds() {
  size_t N = 0;
  if (DIR *D = ::opendir("/proc/self/fd")) {
    while (::readdir(D))
      ++N;
    ::closedir(D);
  }
  return N;
}

/// Wait for \p R, but not forever: a request that does not finish in time
/// fails the test, and the process ends (a hung worker cannot be taken back).
Expected<size_t> waitBounded(IORequestTy &R) {
  auto Deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!R.isDone()) {
    if (std::chrono::steady_clock::now() > Deadline) {
      ADD_FAILURE() << "request not done after 30 s";
      std::fflush(nullptr);
      std::abort();
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return R.wait();
}

IOConfigTy faultConfig(IOPathTy Path, unsigned Threads = 3,
                       unsigned Ring = 2) {
  IOConfigTy C;
  C.Threads = Threads;
  C.ChunkSize = 4096;
  C.DirectChunkSize = 8192;
  C.RingDepth = Ring;
  C.ForcedPath = int(Path);
  C.Info = false;
  return C;
}

/// A real file of FileSize pattern bytes in the test's temporary folder.
class IOEngineFaultTest : public ::testing::Test {
protected:
  static constexpr size_t FileSize = 64 << 10;

  void SetUp() override {
    Path = ::testing::TempDir() + "ioengine-fault-XXXXXX";
    Fd = ::mkstemp(Path.data());
    ASSERT_GE(Fd, 0) << Path << ": " << std::strerror(errno);
    restoreFile();
    Sys = std::make_unique<FaultSysTy>(Fd);
    BaselineFds = openFds();
  }
  void TearDown() override {
    Engine.reset();
    ::close(Fd);
    ::unlink(Path.c_str());
  }

  IOEngineTy &engine(IOConfigTy Config) {
    Engine.reset();
    if (!Device)
      Device = std::make_unique<FakeDeviceTy>(Plugin, true);
    Engine = std::make_unique<IOEngineTy>(Device->io(), *Sys, nullptr, Config);
    return *Engine;
  }

  void restoreFile(unsigned Seed = 1) {
    std::vector<char> Data(FileSize);
    for (size_t I = 0; I < FileSize; ++I)
      Data[I] = pat(I, Seed);
    ASSERT_EQ(::ftruncate(Fd, 0), 0);
    ASSERT_EQ(::pwrite(Fd, Data.data(), FileSize, 0), ssize_t(FileSize));
  }

  Expected<size_t> transfer(IORequestTy::OpTy Op, char *Buf, size_t Count,
                            off_t Offset) {
    auto R = Engine->submit(Op, Fd, Buf, Count, Offset);
    if (!R)
      return R.takeError();
    return waitBounded(**R);
  }

  /// Device memory of \p Size bytes whose address is congruent to \p Offset
  /// modulo the O_DIRECT alignment, so that the aligned middle of a request
  /// at \p Offset may use O_DIRECT on the direct path too.
  char *bufferFor(size_t Size, off_t Offset) {
    char *Base = Device->alloc(Size + 2 * Align);
    uintptr_t At = reinterpret_cast<uintptr_t>(Base);
    return Base + (size_t(Offset) + Align - At % Align) % Align;
  }

  std::string Path;
  int Fd = -1;
  size_t BaselineFds = 0;
  FakePluginTy Plugin;
  std::unique_ptr<FakeDeviceTy> Device;
  std::unique_ptr<FaultSysTy> Sys;
  std::unique_ptr<IOEngineTy> Engine;
};

int errnoOf(Error E) { return takeErrorDetails(std::move(E)).Errno; }

//===----------------------------------------------------------------------===//
// A fault at every step
//===----------------------------------------------------------------------===//

/// How the caller's descriptor relates to O_DIRECT.
enum class DirectModeTy {
  Buffered,     ///< No O_DIRECT anywhere.
  CallerDirect, ///< The caller's fd has O_DIRECT: buffered twin reopened.
  ReopenDirect, ///< A buffered fd, OMPX_IO_ODIRECT=on: O_DIRECT reopened.
};

using SweepParamTy = std::tuple<IOPathTy, DirectModeTy>;

class IOEngineFaultSweepTest
    : public IOEngineFaultTest,
      public ::testing::WithParamInterface<SweepParamTy> {
protected:
  IOPathTy path() const { return std::get<0>(GetParam()); }
  DirectModeTy mode() const { return std::get<1>(GetParam()); }

  void SetUp() override {
    IOEngineFaultTest::SetUp();
    IOConfigTy C = faultConfig(path());
    C.ODirect = mode() == DirectModeTy::ReopenDirect ? IODirectPolicyTy::On
                                                     : IODirectPolicyTy::Auto;
    Sys->CallerDirect = mode() == DirectModeTy::CallerDirect;
    engine(C);
    Buf = bufferFor(Count, Offset);
  }

  /// Calls of \p Kind a clean transfer makes, after checking it.
  unsigned cleanCalls(IORequestTy::OpTy Op, CallKindTy Kind) {
    Sys->disarm();
    auto N = transfer(Op, Buf, Count, Offset);
    EXPECT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
    EXPECT_TRUE(N && *N == Count);
    return Sys->calls(Kind);
  }

  // Unaligned at both ends, 10 buffered chunks or 1 + 4 + 1 with O_DIRECT.
  static constexpr off_t Offset = 1000;
  static constexpr size_t Count = 9 * 4096 + 3000;
  char *Buf = nullptr;
};

TEST_P(IOEngineFaultSweepTest, ReadWithAFaultAtEachPread) {
  const size_t End = size_t(Offset) + Count;
  const FaultTy Faults[] = {{FaultTy::Errno, EINTR},
                            {FaultTy::Short},
                            {FaultTy::Errno, EIO},
                            {FaultTy::Truncate, size_t(Offset) + Count / 2},
                            {FaultTy::Truncate, size_t(Offset) + 5000},
                            {FaultTy::Truncate, 0}};
  unsigned Steps = cleanCalls(IORequestTy::Read, CallKindTy::Pread);
  ASSERT_GE(Steps, 6u);
  for (const FaultTy &F : Faults) {
    for (unsigned At = 1; At <= Steps; ++At) {
      SCOPED_TRACE(faultName(F) + " at pread " + std::to_string(At));
      restoreFile();
      std::memset(Buf, 0xAB, Count);
      Sys->arm(CallKindTy::Pread, At, F);
      auto N = transfer(IORequestTy::Read, Buf, Count, Offset);
      EXPECT_TRUE(Sys->fired());
      switch (F.Kind) {
      case FaultTy::Errno:
        if (F.Value == EINTR) {
          ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
          EXPECT_EQ(*N, Count);
          EXPECT_EQ(mismatches(Buf, Count, Offset), 0u);
        } else {
          ASSERT_FALSE(bool(N));
          ErrorDetailsTy D = takeErrorDetails(N.takeError());
          EXPECT_EQ(D.Errno, int(F.Value)) << D.Message;
          EXPECT_NE(D.Message.find("pread(fd "), std::string::npos)
              << D.Message;
        }
        break;
      case FaultTy::Short:
        ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
        EXPECT_EQ(*N, Count);
        EXPECT_EQ(mismatches(Buf, Count, Offset), 0u);
        break;
      case FaultTy::Truncate: {
        // As a pread racing ftruncate: at least the bytes still in the file,
        // at most those asked for, and every byte the file kept exact.
        // Past that, another worker's pread that checked the size before
        // the truncation may copy the zeros Linux writes over the cut
        // page's tail: a byte there is the pattern or zero, never another.
        ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
        size_t Kept = F.Value > size_t(Offset)
                          ? std::min(F.Value, End) - size_t(Offset)
                          : 0;
        EXPECT_GE(*N, Kept);
        EXPECT_LE(*N, Count);
        EXPECT_EQ(mismatches(Buf, Kept, Offset), 0u);
        size_t Foreign = 0;
        for (size_t I = Kept; I < *N; ++I)
          Foreign += Buf[I] != pat(size_t(Offset) + I) && Buf[I] != 0;
        EXPECT_EQ(Foreign, 0u);
        break;
      }
      case FaultTy::ZeroWrite:
        break;
      }
    }
  }
  // The engine is intact, and nothing stays open.
  restoreFile();
  Sys->disarm();
  auto N = transfer(IORequestTy::Read, Buf, Count, Offset);
  ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
  EXPECT_EQ(*N, Count);
  EXPECT_EQ(mismatches(Buf, Count, Offset), 0u);
  EXPECT_EQ(openFds(), BaselineFds);
}

TEST_P(IOEngineFaultSweepTest, WriteWithAFaultAtEachPwrite) {
  const FaultTy Faults[] = {{FaultTy::Errno, EINTR},
                            {FaultTy::Short},
                            {FaultTy::Errno, EIO},
                            {FaultTy::Errno, ENOSPC},
                            {FaultTy::ZeroWrite}};
  for (size_t I = 0; I < Count; ++I)
    Buf[I] = pat(I, 7);
  unsigned Steps = cleanCalls(IORequestTy::Write, CallKindTy::Pwrite);
  ASSERT_GE(Steps, 6u);
  std::vector<char> Back(Count);
  for (const FaultTy &F : Faults) {
    for (unsigned At = 1; At <= Steps; ++At) {
      SCOPED_TRACE(faultName(F) + " at pwrite " + std::to_string(At));
      restoreFile();
      Sys->arm(CallKindTy::Pwrite, At, F);
      auto N = transfer(IORequestTy::Write, Buf, Count, Offset);
      EXPECT_TRUE(Sys->fired());
      bool Recoverable = F.Kind == FaultTy::Short ||
                         (F.Kind == FaultTy::Errno && F.Value == EINTR);
      if (Recoverable) {
        ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
        EXPECT_EQ(*N, Count);
        ASSERT_EQ(::pread(Fd, Back.data(), Count, Offset), ssize_t(Count));
        EXPECT_EQ(mismatches(Back.data(), Count, 0, 7), 0u);
        continue;
      }
      ASSERT_FALSE(bool(N));
      ErrorDetailsTy D = takeErrorDetails(N.takeError());
      // A write that moves nothing without an error is reported as EIO.
      int Want = F.Kind == FaultTy::ZeroWrite ? EIO : int(F.Value);
      EXPECT_EQ(D.Errno, Want) << D.Message;
      EXPECT_NE(D.Message.find("pwrite(fd "), std::string::npos) << D.Message;
    }
  }
  restoreFile();
  Sys->disarm();
  auto N = transfer(IORequestTy::Write, Buf, Count, Offset);
  ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
  ASSERT_EQ(::pread(Fd, Back.data(), Count, Offset), ssize_t(Count));
  EXPECT_EQ(mismatches(Back.data(), Count, 0, 7), 0u);
  EXPECT_EQ(openFds(), BaselineFds);
}

TEST_P(IOEngineFaultSweepTest, SubmissionFaults) {
  using Op = IORequestTy::OpTy;
  // fcntl(F_GETFL) failing: the descriptor is not usable.
  Sys->arm(CallKindTy::GetFlags, 1, {FaultTy::Errno, EBADF});
  EXPECT_EQ(errnoOf(transfer(Op::Read, Buf, Count, Offset).takeError()),
            EBADF);
  // dup failing (out of descriptors): its errno, nothing started.
  Sys->arm(CallKindTy::Dup, 1, {FaultTy::Errno, EMFILE});
  EXPECT_EQ(errnoOf(transfer(Op::Write, Buf, Count, Offset).takeError()),
            EMFILE);
  EXPECT_EQ(Sys->calls(CallKindTy::Pwrite), 0u);
  // reopen interrupted: retried. reopen failing: a buffered caller loses
  // only O_DIRECT; an O_DIRECT caller keeps its descriptor as is, which
  // serves aligned requests and refuses unaligned ones as pread(2) on it
  // would.
  for (int Errno : {EINTR, EMFILE, EINVAL}) {
    SCOPED_TRACE(std::strerror(Errno));
    restoreFile();
    std::memset(Buf, 0, Count);
    Sys->arm(CallKindTy::Reopen, 1, {FaultTy::Errno, size_t(Errno)});
    auto N = transfer(Op::Read, Buf, Count, Offset);
    EXPECT_EQ(Sys->fired(), mode() != DirectModeTy::Buffered);
    if (mode() == DirectModeTy::CallerDirect && Errno != EINTR) {
      EXPECT_EQ(errnoOf(N.takeError()), EINVAL);
      char *Aligned = bufferFor(4 * Align, 0);
      Sys->arm(CallKindTy::Reopen, 1, {FaultTy::Errno, size_t(Errno)});
      N = transfer(Op::Read, Aligned, 4 * Align, 2 * Align);
      ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
      EXPECT_EQ(*N, 4 * Align);
      EXPECT_EQ(mismatches(Aligned, 4 * Align, 2 * Align), 0u);
    } else {
      ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
      EXPECT_EQ(*N, Count);
      EXPECT_EQ(mismatches(Buf, Count, Offset), 0u);
    }
  }
  EXPECT_EQ(openFds(), BaselineFds);
}

std::string sweepName(const ::testing::TestParamInfo<SweepParamTy> &Info) {
  static const char *const Modes[] = {"Buffered", "CallerDirect",
                                      "ReopenDirect"};
  return std::string(ioPathName(std::get<0>(Info.param))) + "_" +
         Modes[unsigned(std::get<1>(Info.param))];
}

INSTANTIATE_TEST_SUITE_P(
    Faults, IOEngineFaultSweepTest,
    ::testing::Combine(
        ::testing::Values(IOPathTy::HostAddressable, IOPathTy::Staged),
        ::testing::Values(DirectModeTy::Buffered, DirectModeTy::CallerDirect,
                          DirectModeTy::ReopenDirect)),
    sweepName);

//===----------------------------------------------------------------------===//
// Truncation by another thread
//===----------------------------------------------------------------------===//

TEST_F(IOEngineFaultTest, FileTruncatedByAnotherThreadDuringReads) {
  // A thread shrinks and regrows the file while reads run: each read
  // returns a count no shorter than the smallest size the file had, exact
  // bytes below that size, and none hangs. Above it, Linux lets a read that
  // races truncation and regrowth see zeros where data is being rewritten
  // (plain preads of 4 KiB from several threads show it too), so a byte
  // there is the pattern or zero, never anything else.
  for (IOPathTy P : {IOPathTy::HostAddressable, IOPathTy::Staged}) {
    engine(faultConfig(P, 4));
    const size_t Small = 20000;
    char *Buf = Device->alloc(FileSize);
    std::atomic<bool> Stop{false};
    std::thread Truncator([&] {
      std::vector<char> Data(FileSize);
      for (size_t I = 0; I < FileSize; ++I)
        Data[I] = pat(I);
      while (!Stop) {
        EXPECT_EQ(::ftruncate(Fd, off_t(Small)), 0);
        std::this_thread::yield();
        EXPECT_EQ(::pwrite(Fd, Data.data() + Small, FileSize - Small,
                           off_t(Small)),
                  ssize_t(FileSize - Small));
      }
    });
    {
      // A failed ASSERT returns from here: the truncator must still stop
      // and be joined, or its std::thread ends the process.
      auto StopTruncator = llvm::make_scope_exit([&] {
        Stop = true;
        Truncator.join();
      });
      for (int Round = 0; Round < 200; ++Round) {
        auto N = transfer(IORequestTy::Read, Buf, FileSize, 0);
        ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
        EXPECT_GE(*N, Small);
        EXPECT_LE(*N, FileSize);
        ASSERT_EQ(mismatches(Buf, Small, 0), 0u) << "round " << Round;
        size_t Foreign = 0;
        for (size_t I = Small; I < *N; ++I)
          Foreign += Buf[I] != pat(I) && Buf[I] != 0;
        ASSERT_EQ(Foreign, 0u) << "round " << Round;
      }
    }
    restoreFile();
  }
}

//===----------------------------------------------------------------------===//
// Staging allocation, events and streams failing
//===----------------------------------------------------------------------===//

TEST_F(IOEngineFaultTest, StagingRingAllocationFailsAtFirstUse) {
  engine(faultConfig(IOPathTy::Staged, 2));
  char *Buf = Device->alloc(FileSize);
  Device->PinnedAllocsLeft = 0;
  for (auto Op : {IORequestTy::Read, IORequestTy::Write}) {
    auto N = transfer(Op, Buf, 10 * 4096, 0);
    ASSERT_FALSE(bool(N));
    ErrorDetailsTy D = takeErrorDetails(N.takeError());
    EXPECT_EQ(D.Errno, ENOMEM) << D.Message;
    // The backend's message names the size and the device.
    EXPECT_NE(D.Message.find("8192 bytes of host memory on device 0"),
              std::string::npos)
        << D.Message;
  }
  EXPECT_EQ(Device->livePinned(), 0u);
  // The fault clears: the same engine serves exact data.
  Device->PinnedAllocsLeft = -1;
  auto N = transfer(IORequestTy::Read, Buf, FileSize, 0);
  ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
  EXPECT_EQ(*N, FileSize);
  EXPECT_EQ(mismatches(Buf, FileSize, 0), 0u);
  Engine.reset();
  EXPECT_EQ(Device->livePinned(), 0u) << "staging buffers outlived the engine";
}

TEST_F(IOEngineFaultTest, StagingRingAllocationFailsPartway) {
  // One worker, a ring of three: the first buffer is allocated, the second
  // is refused. The request fails; the ring keeps what it has and is
  // completed by the next request once memory is back.
  engine(faultConfig(IOPathTy::Staged, 1, 3));
  char *Buf = Device->alloc(FileSize);
  Device->PinnedAllocsLeft = 1;
  auto N = transfer(IORequestTy::Read, Buf, 10 * 4096, 0);
  ASSERT_FALSE(bool(N));
  EXPECT_EQ(errnoOf(N.takeError()), ENOMEM);
  EXPECT_EQ(Device->livePinned(), 1u);
  Device->PinnedAllocsLeft = -1;
  N = transfer(IORequestTy::Read, Buf, FileSize, 0);
  ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
  EXPECT_EQ(mismatches(Buf, FileSize, 0), 0u);
  EXPECT_EQ(Device->livePinned(), 3u);
  Engine.reset();
  EXPECT_EQ(Device->livePinned(), 0u);
}

TEST_F(IOEngineFaultTest, StagingRingRegrowthFails) {
  // A ring of 4 KiB buffers must grow for a request with 8 KiB O_DIRECT
  // chunks; the new buffers are refused, and the ring keeps the old ones.
  // Then memory comes back.
  IOConfigTy C = faultConfig(IOPathTy::Staged, 1);
  engine(C);
  char *Buf = Device->alloc(FileSize);
  auto N = transfer(IORequestTy::Read, Buf, 10 * 4096, 0);
  ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
  EXPECT_EQ(Device->livePinned(), 2u);
  Sys->CallerDirect = true;
  Device->PinnedAllocsLeft = 0;
  N = transfer(IORequestTy::Read, Buf, 10 * 4096, 0);
  ASSERT_FALSE(bool(N));
  EXPECT_EQ(errnoOf(N.takeError()), ENOMEM);
  EXPECT_EQ(Device->livePinned(), 2u) << "the old buffers stay";
  Device->PinnedAllocsLeft = -1;
  std::memset(Buf, 0, FileSize);
  N = transfer(IORequestTy::Read, Buf, 10 * 4096, 0);
  ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
  EXPECT_EQ(mismatches(Buf, 10 * 4096, 0), 0u);
  Engine.reset();
  EXPECT_EQ(Device->livePinned(), 0u);
  EXPECT_EQ(openFds(), BaselineFds);
}

TEST_F(IOEngineFaultTest, EventCreationFailureFreesTheBuffer) {
  engine(faultConfig(IOPathTy::Staged, 1));
  char *Buf = Device->alloc(FileSize);
  Device->FailEvents = true;
  auto N = transfer(IORequestTy::Read, Buf, 10 * 4096, 0);
  ASSERT_FALSE(bool(N));
  ErrorDetailsTy D = takeErrorDetails(N.takeError());
  EXPECT_EQ(D.Errno, ENOMEM) << D.Message;
  EXPECT_NE(D.Message.find("event creation on device 0"), std::string::npos)
      << D.Message;
  EXPECT_EQ(Device->livePinned(), 0u) << "the slot's buffer leaked";
  Device->FailEvents = false;
  N = transfer(IORequestTy::Read, Buf, FileSize, 0);
  ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
  EXPECT_EQ(mismatches(Buf, FileSize, 0), 0u);
}

TEST_F(IOEngineFaultTest, StreamCreationFailure) {
  engine(faultConfig(IOPathTy::Staged, 2));
  char *Buf = Device->alloc(FileSize);
  Device->FailStreams = true;
  auto N = transfer(IORequestTy::Write, Buf, 10 * 4096, 0);
  ASSERT_FALSE(bool(N));
  EXPECT_EQ(errnoOf(N.takeError()), ENOMEM);
  Device->FailStreams = false;
  for (size_t I = 0; I < FileSize; ++I)
    Buf[I] = pat(I, 3);
  N = transfer(IORequestTy::Write, Buf, FileSize, 0);
  ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
  std::vector<char> Back(FileSize);
  ASSERT_EQ(::pread(Fd, Back.data(), FileSize, 0), ssize_t(FileSize));
  EXPECT_EQ(mismatches(Back.data(), FileSize, 0, 3), 0u);
}

//===----------------------------------------------------------------------===//
// Request and descriptor lifetime
//===----------------------------------------------------------------------===//

TEST_F(IOEngineFaultTest, RequestDroppedWithoutWaitFinishesFirst) {
  // Dropping a request in flight must not free it under the workers: its
  // destructor waits for them (ASan would report the use after free). Some
  // requests are dropped at once, others after a wait; then the engine goes
  // with nothing left behind.
  for (IOPathTy P : {IOPathTy::HostAddressable, IOPathTy::Staged}) {
    engine(faultConfig(P, 3, 1));
    char *Buf = Device->alloc(FileSize);
    for (int I = 0; I < 50; ++I) {
      auto R = Engine->submit(I % 2 ? IORequestTy::Read : IORequestTy::Write,
                              Fd, Buf, FileSize, 0);
      ASSERT_TRUE(bool(R));
      R->reset();
    }
    // The writes are done (their destructors waited): the file is whatever
    // they wrote. Back to the pattern.
    restoreFile();
    std::vector<std::unique_ptr<IORequestTy>> Kept;
    for (size_t Part = 0; Part < 8; ++Part) {
      auto R = Engine->submit(IORequestTy::Read, Fd, Buf + Part * 8192, 8192,
                              off_t(Part * 8192));
      ASSERT_TRUE(bool(R));
      Kept.push_back(std::move(*R));
    }
    for (size_t Part = 0; Part < 8; Part += 2) {
      auto N = waitBounded(*Kept[Part]);
      ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
      EXPECT_EQ(*N, 8192u);
    }
    Kept.clear();
    auto N = transfer(IORequestTy::Read, Buf, FileSize, 0);
    ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
    EXPECT_EQ(*N, FileSize);
    EXPECT_EQ(mismatches(Buf, FileSize, 0), 0u);
    Engine.reset();
    EXPECT_EQ(Device->livePinned(), 0u);
  }
  EXPECT_EQ(openFds(), BaselineFds);
}

TEST_F(IOEngineFaultTest, CallerClosesItsDescriptorRightAfterSubmitting) {
  // The engine works on its duplicate; a closed descriptor at submission is
  // EBADF.
  for (IOPathTy P : {IOPathTy::HostAddressable, IOPathTy::Staged}) {
    engine(faultConfig(P));
    char *Buf = Device->alloc(FileSize);
    int Own = ::open(Path.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(Own, 0);
    auto R = Engine->submit(IORequestTy::Read, Own, Buf, FileSize, 0);
    ASSERT_TRUE(bool(R));
    ASSERT_EQ(::close(Own), 0);
    auto N = waitBounded(**R);
    ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
    EXPECT_EQ(*N, FileSize);
    EXPECT_EQ(mismatches(Buf, FileSize, 0), 0u);
    auto Closed = Engine->submit(IORequestTy::Read, Own, Buf, 100, 0);
    ASSERT_FALSE(bool(Closed));
    EXPECT_EQ(errnoOf(Closed.takeError()), EBADF);
  }
  // Count once the workers are gone: nothing of the engine's may remain
  // open, and nothing a running thread opens meanwhile is counted.
  Engine.reset();
  EXPECT_EQ(openFds(), BaselineFds);
}

} // namespace

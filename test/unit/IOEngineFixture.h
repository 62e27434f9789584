// SPDX-License-Identifier: Apache-2.0
//
// The fixture of the IOEngineTy tests (IOEngine*Test.cpp, one topic each),
// which drive the engine directly: a fake device whose memory is host memory
// it tracks (so ownsPointer works) with the host backend's streams and
// events, a fake SysTy holding the file in memory and injecting EINTR, short
// counts, EIO, ENOSPC, zero-length writes and truncation, and a fake
// fastpath that works, refuses, or fails with a chosen errno. Requests run
// with small chunks and rings so that they span many chunks and rings wrap.
#ifndef OFFLOADIO_TEST_UNIT_IOENGINEFIXTURE_H
#define OFFLOADIO_TEST_UNIT_IOENGINEFIXTURE_H

#include "FakeDevice.h"

#include "offloadio/Device.h"
#include "offloadio/Plugin.h"
#include "offloadio/io/IOEngine.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <unistd.h>
#include <vector>

namespace offloadio::unittest {

/// The byte at offset \p O of a pattern file made with \p Seed.
inline char pat(size_t O, unsigned Seed = 1) {
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
inline IOConfigTy smallConfig(int Path, unsigned Threads = 4,
                              size_t Chunk = 4096, unsigned Ring = 2) {
  IOConfigTy C;
  C.Threads = Threads;
  C.ChunkSize = Chunk;
  C.RingDepth = Ring;
  C.ForcedPath = Path;
  C.Info = false;
  return C;
}
/// O_DIRECT middles in chunks of 16 KiB; everything else in chunks of 4 KiB,
/// so that staging rings grow when a request with an O_DIRECT middle comes.
inline IOConfigTy directConfig(int Path, IODirectPolicyTy Policy) {
  IOConfigTy C = smallConfig(Path, 4, 4096);
  C.DirectChunkSize = 16384;
  C.ODirect = Policy;
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
/// The errno of a failed operation, 0 if it succeeded.
inline int errnoOf(Error E) { return takeErrorDetails(std::move(E)).Errno; }
template <typename T> int errnoOf(Expected<T> V) {
  return V ? 0 : errnoOf(V.takeError());
}

/// Tests run once per path the engine can be forced to.
class IOEnginePathTest : public IOEngineTest,
                         public ::testing::WithParamInterface<IOPathTy> {
protected:
  int path() const { return int(GetParam()); }
};

/// Test names after the path.
inline std::string pathName(const ::testing::TestParamInfo<IOPathTy> &Info) {
  return ioPathName(Info.param);
}

/// One call the fake file system saw.
using CallTy = FakeSysTy::CallTy;

} // namespace offloadio::unittest

#endif // OFFLOADIO_TEST_UNIT_IOENGINEFIXTURE_H

// SPDX-License-Identifier: Apache-2.0
//
// Fakes of the syscall seam (SysTy, offloadio/io/SysCalls.h) shared by the
// unit tests: the production calls, counted, with the few faults tests
// switch on (CountingSysTy), and a file held in memory behind /dev/null
// descriptors that injects EINTR, short counts, EIO, ENOSPC, EFBIG,
// zero-length writes and truncation and emulates O_DIRECT and O_APPEND
// (MemoryFileSysTy). Both can hold calls at a gate.
#ifndef OFFLOADIO_TEST_SUPPORT_FAKESYS_H
#define OFFLOADIO_TEST_SUPPORT_FAKESYS_H

#include "offloadio/io/SysCalls.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <sys/stat.h>
#include <thread>
#include <tuple>
#include <vector>

namespace offloadio::unittest {

/// A gate that calls pass only while it is open (it starts open), so that a
/// test can hold a transfer in flight.
class SysGateTy {
public:
  void close() {
    std::lock_guard<std::mutex> Guard(Lock);
    Open = false;
  }
  void open() {
    {
      std::lock_guard<std::mutex> Guard(Lock);
      Open = true;
    }
    Changed.notify_all();
  }
  /// Wait until the gate is open.
  void pass() {
    std::unique_lock<std::mutex> Guard(Lock);
    Changed.wait(Guard, [&] { return Open; });
  }

private:
  std::mutex Lock;
  std::condition_variable Changed;
  bool Open = true;
};

/// The production system calls, counted; dup can be made to fail, and
/// preads held at a gate.
class CountingSysTy final : public SysTy {
public:
  /// preads that returned, and fstats made.
  std::atomic<unsigned> Preads{0}, Fstats{0};
  /// dup fails with this errno; 0: it works.
  std::atomic<int> DupErrno{0};

  /// preads wait from now on ...
  void closeGate() { Gate.close(); }
  /// ... until this.
  void openGate() { Gate.open(); }

  ssize_t pread(int Fd, void *Buf, size_t Count, off_t Offset) override {
    Gate.pass();
    ssize_t N = SysTy::pread(Fd, Buf, Count, Offset);
    ++Preads;
    return N;
  }
  int fstat(int Fd, struct stat *St) override {
    ++Fstats;
    return SysTy::fstat(Fd, St);
  }
  int dup(int Fd) override {
    if (int Errno = DupErrno.load()) {
      errno = Errno;
      return -1;
    }
    return SysTy::dup(Fd);
  }

private:
  SysGateTy Gate;
};

/// A file in memory behind /dev/null descriptors (fstat reports the file).
/// Descriptors the engine duplicates or reopens with O_DIRECT refuse what
/// the kernel refuses there (unaligned offset, count or memory); the data
/// goes through all the same.
class MemoryFileSysTy final : public SysTy {
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
  int FstatErrno = 0;              ///< fstat fails with this errno.
  std::atomic<unsigned> Fstats{0}; ///< fstat calls made.
  dev_t FileSystem = 0;            ///< st_dev fstat reports, if not 0.
  size_t SizeLimit = SIZE_MAX;     ///< RLIMIT_FSIZE: writes stop there, EFBIG.
  /// Writes ignore their offset and append, as pwrite on an O_APPEND
  /// descriptor does on Linux; getFlags reports O_APPEND.
  bool Append = false;
  unsigned FailWrite = 0; ///< 1-based number of the write that fails, EIO.
  /// Each write first sleeps a random while (up to 300 µs), so that workers
  /// racing for the file overtake each other.
  bool Jitter = false;

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

  /// preads and pwrites wait from now on ...
  void closeGate() { Gate.close(); }
  /// ... until this.
  void openGate() { Gate.open(); }

  ssize_t pread(int Fd, void *Buf, size_t Count, off_t Offset) override {
    Gate.pass();
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
    if (Jitter)
      jitter();
    Gate.pass();
    if (interrupt())
      return -1;
    unsigned Nth = ++Pwrites;
    noteCall(Count);
    std::lock_guard<std::mutex> Guard(Lock);
    if (refuseDirect(Fd, true, Buf, Count, Offset))
      return -1;
    if (Nth == FailWrite) {
      errno = EIO;
      return -1;
    }
    if (WritesReturnZero)
      return 0;
    if (Append)
      Offset = off_t(File.size());
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
           (Append ? O_APPEND : 0) | ExtraFlags;
  }

  /// The descriptor is /dev/null; the file it stands for is of FileType.
  int fstat(int Fd, struct stat *St) override {
    ++Fstats;
    if (FstatErrno) {
      errno = FstatErrno;
      return -1;
    }
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

  /// Read the file directly (for a fake fastpath).
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
  static void jitter() {
    thread_local std::mt19937 Rng(
        std::hash<std::thread::id>()(std::this_thread::get_id()));
    std::this_thread::sleep_for(std::chrono::microseconds(Rng() % 300));
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

  SysGateTy Gate;
  std::mutex Lock;
  std::vector<char> File;
  size_t Served = 0;
  std::map<int, bool> DirectFds;
  std::vector<CallTy> Calls;
  std::vector<int> Reopens;
};

} // namespace offloadio::unittest

#endif // OFFLOADIO_TEST_SUPPORT_FAKESYS_H

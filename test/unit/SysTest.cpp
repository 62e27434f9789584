// SPDX-License-Identifier: Apache-2.0
//
// readFully / writeFully against a fake SysTy: short counts, EINTR at every
// step, EIO and ENOSPC passed through with their errno, writes that return
// 0, end of file in the middle of a transfer, and counts above 1 GiB split
// into calls of at most 1 GiB (with a fake that never touches the buffer).
#include "offloadio/io/FullTransfer.h"
#include "offloadio/io/Sys.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <unistd.h>
#include <vector>

using namespace offloadio;

namespace {

constexpr size_t GiB = size_t(1) << 30;

/// One call the fake saw.
struct CallTy {
  const void *Buf;
  size_t Count;
  off_t Offset;
};

/// A file in memory, with hooks that decide each call's fate. Not the shared
/// MemoryFileSysTy (FakeSys.h): readFully and writeFully are checked call by
/// call, so this one keeps every call in order with its buffer, fails any
/// call a hook picks, and can pretend a file larger than memory (Phantom)
/// for counts above 1 GiB.
class FakeSysTy : public SysTy {
public:
  /// Before a call: return true (with errno set) to fail it with -1.
  std::function<bool(const CallTy &)> FailBefore;
  /// The most bytes one call moves (SIZE_MAX: all asked for).
  size_t MaxPerCall = SIZE_MAX;
  /// Writes beyond this file size fail with ENOSPC once nothing fits.
  size_t SpaceLimit = SIZE_MAX;
  /// Writes return 0 (nothing written, no error).
  bool WritesReturnZero = false;
  /// Do not touch memory: only record calls and pretend (for huge counts).
  bool Phantom = false;
  /// Size of the file when Phantom (its bytes are not kept).
  size_t PhantomSize = 0;

  std::vector<char> File;
  std::vector<CallTy> Calls; ///< Calls that reached the "kernel".
  unsigned Failed = 0;       ///< Calls failed by FailBefore.

  ssize_t pread(int, void *Buf, size_t Count, off_t Offset) override {
    CallTy C{Buf, Count, Offset};
    if (FailBefore && FailBefore(C)) {
      ++Failed;
      return -1;
    }
    Calls.push_back(C);
    size_t Size = Phantom ? PhantomSize : File.size();
    if (size_t(Offset) >= Size)
      return 0;
    size_t N = std::min({Count, MaxPerCall, Size - size_t(Offset)});
    if (!Phantom)
      std::memcpy(Buf, File.data() + Offset, N);
    return ssize_t(N);
  }

  ssize_t pwrite(int, const void *Buf, size_t Count, off_t Offset) override {
    CallTy C{Buf, Count, Offset};
    if (FailBefore && FailBefore(C)) {
      ++Failed;
      return -1;
    }
    Calls.push_back(C);
    if (WritesReturnZero)
      return 0;
    size_t N = std::min(Count, MaxPerCall);
    if (size_t(Offset) + N > SpaceLimit) {
      if (size_t(Offset) >= SpaceLimit) {
        errno = ENOSPC;
        return -1;
      }
      N = SpaceLimit - size_t(Offset);
    }
    if (!Phantom) {
      if (File.size() < size_t(Offset) + N)
        File.resize(size_t(Offset) + N);
      std::memcpy(File.data() + Offset, Buf, N);
    }
    return ssize_t(N);
  }
};

std::vector<char> pattern(size_t N, unsigned Seed = 1) {
  std::vector<char> V(N);
  for (size_t I = 0; I < N; ++I)
    V[I] = char(I * 7 + (I >> 8) * 31 + Seed);
  return V;
}

/// Every second call (starting with the first) fails with EINTR.
std::function<bool(const CallTy &)> eintrEveryOther(unsigned &Counter) {
  return [&Counter](const CallTy &) {
    if (Counter++ % 2)
      return false;
    errno = EINTR;
    return true;
  };
}

/// The errno of a failed call, consuming the error.
template <typename T> int errnoOf(Expected<T> V) {
  if (V)
    return 0;
  return takeErrorDetails(V.takeError()).Errno;
}
int errnoOf(Error E) { return takeErrorDetails(std::move(E)).Errno; }

TEST(SysTest, ReadFullyReadsEverything) {
  FakeSysTy Sys;
  Sys.File = pattern(100000);
  std::vector<char> Buf(100000);
  auto N = readFully(Sys, 3, Buf.data(), Buf.size(), 0);
  ASSERT_TRUE(bool(N));
  EXPECT_EQ(*N, 100000u);
  EXPECT_EQ(Buf, Sys.File);
  EXPECT_EQ(Sys.Calls.size(), 1u);
}

TEST(SysTest, CountZeroMakesNoCall) {
  FakeSysTy Sys;
  Sys.File = pattern(10);
  auto N = readFully(Sys, 3, nullptr, 0, 5);
  ASSERT_TRUE(bool(N));
  EXPECT_EQ(*N, 0u);
  EXPECT_FALSE(bool(writeFully(Sys, 3, nullptr, 0, 5)));
  EXPECT_TRUE(Sys.Calls.empty());
}

TEST(SysTest, ShortReadsAreContinued) {
  FakeSysTy Sys;
  Sys.File = pattern(10007);
  Sys.MaxPerCall = 7;
  std::vector<char> Buf(10000);
  auto N = readFully(Sys, 3, Buf.data(), Buf.size(), 7);
  ASSERT_TRUE(bool(N));
  EXPECT_EQ(*N, 10000u);
  EXPECT_TRUE(std::equal(Buf.begin(), Buf.end(), Sys.File.begin() + 7));
  ASSERT_EQ(Sys.Calls.size(), (10000u + 6) / 7);
  // Each call continues exactly where the previous one stopped.
  for (size_t I = 0; I < Sys.Calls.size(); ++I) {
    EXPECT_EQ(Sys.Calls[I].Offset, off_t(7 + 7 * I));
    EXPECT_EQ(Sys.Calls[I].Buf, Buf.data() + 7 * I);
    EXPECT_EQ(Sys.Calls[I].Count, 10000 - 7 * I);
  }
}

TEST(SysTest, EintrAtEveryStepIsRetried) {
  FakeSysTy Sys;
  Sys.File = pattern(5000);
  Sys.MaxPerCall = 333;
  unsigned Counter = 0;
  Sys.FailBefore = eintrEveryOther(Counter);
  std::vector<char> Buf(5000);
  auto N = readFully(Sys, 3, Buf.data(), Buf.size(), 0);
  ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
  EXPECT_EQ(*N, 5000u);
  EXPECT_EQ(Buf, Sys.File);
  // Every real call was preceded by an interrupted one.
  EXPECT_EQ(Sys.Failed, Sys.Calls.size());
  EXPECT_EQ(Sys.Calls.size(), (5000u + 332) / 333);
}

TEST(SysTest, ManyEintrInARowAreRetried) {
  FakeSysTy Sys;
  Sys.File = pattern(64);
  unsigned Left = 10000;
  Sys.FailBefore = [&](const CallTy &) {
    if (!Left)
      return false;
    --Left;
    errno = EINTR;
    return true;
  };
  std::vector<char> Buf(64);
  auto N = readFully(Sys, 3, Buf.data(), Buf.size(), 0);
  ASSERT_TRUE(bool(N));
  EXPECT_EQ(*N, 64u);
  EXPECT_EQ(Sys.Failed, 10000u);
}

TEST(SysTest, EofMidTransferStopsWithoutWritingPastIt) {
  FakeSysTy Sys;
  Sys.File = pattern(1000);
  Sys.MaxPerCall = 300;
  unsigned Counter = 0;
  Sys.FailBefore = eintrEveryOther(Counter);
  std::vector<char> Buf(5000, char(0xAB));
  auto N = readFully(Sys, 3, Buf.data(), Buf.size(), 0);
  ASSERT_TRUE(bool(N));
  EXPECT_EQ(*N, 1000u);
  EXPECT_TRUE(std::equal(Sys.File.begin(), Sys.File.end(), Buf.begin()));
  EXPECT_TRUE(std::all_of(Buf.begin() + 1000, Buf.end(),
                          [](char C) { return C == char(0xAB); }));
  // 300, 300, 300, 100, then the 0 that means end of file.
  ASSERT_EQ(Sys.Calls.size(), 5u);
  EXPECT_EQ(Sys.Calls.back().Offset, 1000);
}

TEST(SysTest, ReadAtOrPastEofReturnsZero) {
  FakeSysTy Sys;
  Sys.File = pattern(1000);
  std::vector<char> Buf(10, 'x');
  auto N = readFully(Sys, 3, Buf.data(), Buf.size(), 1000);
  ASSERT_TRUE(bool(N));
  EXPECT_EQ(*N, 0u);
  N = readFully(Sys, 3, Buf.data(), Buf.size(), 1 << 30);
  ASSERT_TRUE(bool(N));
  EXPECT_EQ(*N, 0u);
  EXPECT_EQ(Buf, std::vector<char>(10, 'x'));
}

TEST(SysTest, EioAfterAPartialReadIsAnError) {
  FakeSysTy Sys;
  Sys.File = pattern(10000);
  Sys.MaxPerCall = 4096;
  Sys.FailBefore = [](const CallTy &C) {
    if (C.Offset < 8192)
      return false;
    errno = EIO;
    return true;
  };
  std::vector<char> Buf(10000);
  auto N = readFully(Sys, 3, Buf.data(), Buf.size(), 0);
  ASSERT_FALSE(bool(N));
  ErrorDetailsTy D = takeErrorDetails(N.takeError());
  EXPECT_EQ(D.Errno, EIO);
  // The message names the call, the descriptor and where it failed.
  EXPECT_NE(D.Message.find("pread(fd 3"), std::string::npos) << D.Message;
  EXPECT_NE(D.Message.find("offset 8192"), std::string::npos) << D.Message;
  EXPECT_EQ(Sys.Calls.size(), 2u);
}

TEST(SysTest, ErrorMessagesShowTheBufferAsAPointer) {
  // The buffer holds file data, not a string: the message must print its
  // address and never read the bytes (a char * would be formatted as a C
  // string, read up to the first NUL, past the buffer).
  FakeSysTy Sys;
  Sys.FailBefore = [](const CallTy &) {
    errno = EIO;
    return true;
  };
  std::vector<char> Buf(64, 'Z');
  Buf.back() = '\0';
  Expected<size_t> N = readFully(Sys, 3, Buf.data() + 8, 16, 0);
  ASSERT_FALSE(bool(N));
  std::string Msg = takeErrorMessage(N.takeError());
  EXPECT_EQ(Msg.find("ZZZZ"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("0x"), std::string::npos) << Msg;
  Error Err = writeFully(Sys, 3, Buf.data() + 8, 16, 0);
  Msg = takeErrorMessage(std::move(Err));
  EXPECT_EQ(Msg.find("ZZZZ"), std::string::npos) << Msg;
  EXPECT_NE(Msg.find("0x"), std::string::npos) << Msg;
}

TEST(SysTest, OtherReadErrorsKeepTheirErrno) {
  for (int E : {EBADF, EFAULT, EISDIR, EAGAIN, ENXIO}) {
    FakeSysTy Sys;
    Sys.File = pattern(100);
    Sys.FailBefore = [E](const CallTy &) {
      errno = E;
      return true;
    };
    char Buf[100];
    EXPECT_EQ(errnoOf(readFully(Sys, 3, Buf, 100, 0)), E) << E;
    EXPECT_EQ(Sys.Failed, 1u) << "not retried: " << E;
  }
}

TEST(SysTest, HugeReadIsSplitIntoCallsOfAtMostOneGiB) {
  FakeSysTy Sys;
  Sys.Phantom = true;
  Sys.PhantomSize = SIZE_MAX;
  // Never dereferenced: the fake only records.
  char *Buf = reinterpret_cast<char *>(uintptr_t(1) << 40);
  size_t Count = 3 * GiB + 5;
  auto N = readFully(Sys, 3, Buf, Count, 123);
  ASSERT_TRUE(bool(N));
  EXPECT_EQ(*N, Count);
  ASSERT_EQ(Sys.Calls.size(), 4u);
  size_t Done = 0;
  for (const CallTy &C : Sys.Calls) {
    EXPECT_LE(C.Count, GiB);
    EXPECT_EQ(C.Buf, Buf + Done);
    EXPECT_EQ(C.Offset, off_t(123 + Done));
    Done += C.Count;
  }
  EXPECT_EQ(Done, Count);
  EXPECT_EQ(Sys.Calls.back().Count, 5u);
}

TEST(SysTest, HugeReadWithShortCallsAndEofAfterTwoGiB) {
  FakeSysTy Sys;
  Sys.Phantom = true;
  Sys.PhantomSize = 2 * GiB + 100; // End of file inside the third GiB.
  Sys.MaxPerCall = GiB - 4096;     // The kernel's short reads.
  unsigned Counter = 0;
  Sys.FailBefore = eintrEveryOther(Counter);
  char *Buf = reinterpret_cast<char *>(uintptr_t(1) << 40);
  auto N = readFully(Sys, 3, Buf, 3 * GiB, 0);
  ASSERT_TRUE(bool(N));
  EXPECT_EQ(*N, 2 * GiB + 100);
  for (const CallTy &C : Sys.Calls)
    EXPECT_LE(C.Count, GiB);
}

TEST(SysTest, WriteFullyWritesEverything) {
  FakeSysTy Sys;
  std::vector<char> Data = pattern(70000, 5);
  EXPECT_FALSE(bool(writeFully(Sys, 3, Data.data(), Data.size(), 10)));
  ASSERT_EQ(Sys.File.size(), 70010u);
  EXPECT_TRUE(std::equal(Data.begin(), Data.end(), Sys.File.begin() + 10));
}

TEST(SysTest, ShortWritesAndEintrAreContinued) {
  FakeSysTy Sys;
  Sys.MaxPerCall = 999;
  unsigned Counter = 0;
  Sys.FailBefore = eintrEveryOther(Counter);
  std::vector<char> Data = pattern(50000, 9);
  Error Err = writeFully(Sys, 3, Data.data(), Data.size(), 0);
  ASSERT_FALSE(bool(Err)) << takeErrorMessage(std::move(Err));
  EXPECT_EQ(Sys.File, Data);
  EXPECT_EQ(Sys.Calls.size(), (50000u + 998) / 999);
  EXPECT_EQ(Sys.Failed, Sys.Calls.size());
  for (size_t I = 0; I < Sys.Calls.size(); ++I)
    EXPECT_EQ(Sys.Calls[I].Offset, off_t(999 * I));
}

TEST(SysTest, EnospcAfterAPartialWriteIsPassedThrough) {
  FakeSysTy Sys;
  Sys.SpaceLimit = 3000;
  unsigned Counter = 0;
  Sys.FailBefore = eintrEveryOther(Counter);
  std::vector<char> Data = pattern(10000);
  Error Err = writeFully(Sys, 3, Data.data(), Data.size(), 0);
  ASSERT_TRUE(bool(Err));
  ErrorDetailsTy D = takeErrorDetails(std::move(Err));
  EXPECT_EQ(D.Errno, ENOSPC);
  EXPECT_NE(D.Message.find("pwrite(fd 3"), std::string::npos) << D.Message;
  EXPECT_NE(D.Message.find("offset 3000"), std::string::npos) << D.Message;
  // The part that fit was written; the call after it failed.
  EXPECT_EQ(Sys.File.size(), 3000u);
  EXPECT_EQ(Sys.Calls.size(), 2u);
}

TEST(SysTest, EioOnWriteIsPassedThrough) {
  FakeSysTy Sys;
  Sys.FailBefore = [](const CallTy &) {
    errno = EIO;
    return true;
  };
  char Data[100] = {};
  EXPECT_EQ(errnoOf(writeFully(Sys, 3, Data, sizeof Data, 0)), EIO);
  EXPECT_EQ(Sys.Failed, 1u);
}

TEST(SysTest, WriteReturningZeroIsAnErrorNotALoop) {
  FakeSysTy Sys;
  Sys.WritesReturnZero = true;
  char Data[100] = {};
  Error Err = writeFully(Sys, 3, Data, sizeof Data, 0);
  ASSERT_TRUE(bool(Err));
  EXPECT_EQ(errnoOf(std::move(Err)), EIO);
  EXPECT_EQ(Sys.Calls.size(), 1u);
}

TEST(SysTest, HugeWriteIsSplitIntoCallsOfAtMostOneGiB) {
  FakeSysTy Sys;
  Sys.Phantom = true;
  const char *Buf = reinterpret_cast<const char *>(uintptr_t(1) << 40);
  size_t Count = 2 * GiB + GiB / 2;
  unsigned Counter = 0;
  Sys.FailBefore = eintrEveryOther(Counter);
  EXPECT_FALSE(bool(writeFully(Sys, 3, Buf, Count, 4096)));
  ASSERT_EQ(Sys.Calls.size(), 3u);
  size_t Done = 0;
  for (const CallTy &C : Sys.Calls) {
    EXPECT_LE(C.Count, GiB);
    EXPECT_EQ(C.Buf, Buf + Done);
    EXPECT_EQ(C.Offset, off_t(4096 + Done));
    Done += C.Count;
  }
  EXPECT_EQ(Done, Count);
}

TEST(SysTest, RealSyscallsOnAPipeAndDevNull) {
  // The production SysTy: pread on a pipe is ESPIPE, passed through;
  // /dev/zero reads fully; /dev/null swallows writes.
  SysTy Sys;
  int Fds[2];
  ASSERT_EQ(::pipe(Fds), 0);
  char Buf[64];
  EXPECT_EQ(errnoOf(readFully(Sys, Fds[0], Buf, sizeof Buf, 0)), ESPIPE);
  ::close(Fds[0]);
  ::close(Fds[1]);
  int Zero = ::open("/dev/zero", O_RDONLY);
  ASSERT_GE(Zero, 0);
  std::memset(Buf, 1, sizeof Buf);
  auto N = readFully(Sys, Zero, Buf, sizeof Buf, 0);
  ASSERT_TRUE(bool(N));
  EXPECT_EQ(*N, sizeof Buf);
  EXPECT_EQ(Buf[63], 0);
  EXPECT_EQ(Sys.getFlags(Zero) & O_ACCMODE, O_RDONLY);
  ::close(Zero);
  EXPECT_LT(Sys.getFlags(Zero), 0);
  int Null = ::open("/dev/null", O_WRONLY);
  EXPECT_FALSE(bool(writeFully(Sys, Null, Buf, sizeof Buf, 0)));
  int Dup = Sys.dup(Null);
  EXPECT_GE(Dup, 0);
  EXPECT_NE(Dup, Null);
  EXPECT_EQ(Sys.close(Dup), 0);
  ::close(Null);
}

// The loop itself (FullTransfer.h), as libompx_io's initial device uses it:
// what moved before a failure, the failed call's count, and a write that
// moved nothing told from a write that failed with EIO.
TEST(SysTest, FullTransferReportsTheFailedCall) {
  FakeSysTy Sys;
  Sys.File.assign(1000, 'x');
  Sys.MaxPerCall = 300;
  Sys.FailBefore = [](const CallTy &C) {
    errno = EIO;
    return C.Offset >= 600;
  };
  std::vector<char> Buf(1000);
  FullTransferTy R = preadFully(Sys, 3, Buf.data(), Buf.size(), 0);
  EXPECT_EQ(R.Done, 600u);
  EXPECT_EQ(R.Errno, EIO);
  EXPECT_EQ(R.Asked, 400u);
  EXPECT_FALSE(R.WroteNothing);

  FakeSysTy Zero;
  Zero.WritesReturnZero = true;
  FullTransferTy W = pwriteFully(Zero, 3, Buf.data(), 10, 5);
  EXPECT_EQ(W.Done, 0u);
  EXPECT_EQ(W.Errno, EIO);
  EXPECT_EQ(W.Asked, 10u);
  EXPECT_TRUE(W.WroteNothing);

  FakeSysTy Eof;
  Eof.File.assign(100, 'y');
  FullTransferTy E = preadFully(Eof, 3, Buf.data(), Buf.size(), 0);
  EXPECT_EQ(E.Done, 100u);
  EXPECT_EQ(E.Errno, 0);
}

TEST(SysTest, FullTransferAsksAtMostOneGiBPerCall) {
  FakeSysTy Sys;
  Sys.Phantom = true;
  Sys.PhantomSize = 3 * GiB + 5;
  char Byte;
  FullTransferTy R = preadFully(Sys, 3, &Byte, 3 * GiB + 5, 0);
  EXPECT_EQ(R.Done, 3 * GiB + 5);
  ASSERT_EQ(Sys.Calls.size(), 4u);
  for (const CallTy &C : Sys.Calls)
    EXPECT_LE(C.Count, GiB);
  Sys.Calls.clear();
  FullTransferTy W = pwriteFully(Sys, 3, &Byte, 2 * GiB, 0);
  EXPECT_EQ(W.Done, 2 * GiB);
  EXPECT_EQ(Sys.Calls.size(), 2u);
}

} // namespace

// SPDX-License-Identifier: Apache-2.0
//
// TransferCheck.h, the checks every device makes before a transfer: each
// step against real descriptors, the order between steps (each case breaks
// two rules and expects the earlier one), the kernel asked once per
// descriptor, and the host buffer's step.
#include "FakeSys.h"

#include "offloadio/io/TransferCheck.h"

#include "gtest/gtest.h"

#include <cerrno>
#include <climits>
#include <cstdint>
#include <fcntl.h>
#include <string>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace offloadio;
using offloadio::unittest::CountingSysTy;

namespace {

/// Descriptors of every kind, closed at the end.
class TransferCheckTest : public ::testing::Test {
protected:
  void SetUp() override {
    char Name[] = "/tmp/transfercheck-XXXXXX";
    File = ::mkstemp(Name);
    Path = Name;
    ReadOnly = ::open(Name, O_RDONLY);
    WriteOnly = ::open(Name, O_WRONLY);
    Dir = ::open("/tmp", O_RDONLY | O_DIRECTORY);
    PathOnly = ::open(Name, O_PATH);
    ASSERT_EQ(::pipe(Pipe), 0);
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, Sock), 0);
    Event = ::eventfd(0, 0);
    Closed = ::dup(File);
    ::close(Closed);
  }
  void TearDown() override {
    for (int Fd : {File, ReadOnly, WriteOnly, Dir, PathOnly, Pipe[0], Pipe[1],
                   Sock[0], Sock[1], Event})
      ::close(Fd);
    ::unlink(Path.c_str());
  }
  /// The errno of every check for \p Fd, with a buffer step that answers
  /// \p BufferErrno.
  int check(int Fd, bool IsWrite, size_t Count, off_t Offset,
            int BufferErrno = 0) {
    DescriptorFactsTy F = inspectDescriptor(Sys, Fd);
    return checkTransfer(Sys, F, IsWrite, Count, Offset, 7, [&] {
             return TransferVerdictTy{BufferErrno,
                                      BufferErrno ? "buffer" : ""};
           }).Errno;
  }

  CountingSysTy Sys;
  std::string Path;
  int File = -1, ReadOnly = -1, WriteOnly = -1, Dir = -1, PathOnly = -1,
      Event = -1, Closed = -1;
  int Pipe[2] = {-1, -1}, Sock[2] = {-1, -1};
};

TEST_F(TransferCheckTest, EachStepAlone) {
  EXPECT_EQ(check(File, false, 64, 0), 0);
  EXPECT_EQ(check(File, true, 64, 0), 0);
  EXPECT_EQ(check(File, false, 64, -1), EINVAL);
  EXPECT_EQ(check(Closed, false, 64, 0), EBADF);
  EXPECT_EQ(check(PathOnly, false, 64, 0), EBADF);
  EXPECT_EQ(check(Pipe[0], false, 64, 0), ESPIPE);
  EXPECT_EQ(check(Sock[0], true, 64, 0), ESPIPE);
  EXPECT_EQ(check(Event, false, 8, 0), ESPIPE);
  EXPECT_EQ(check(Event, true, 8, 0), ESPIPE);
  EXPECT_EQ(check(WriteOnly, false, 64, 0), EBADF);
  EXPECT_EQ(check(ReadOnly, true, 64, 0), EBADF);
  EXPECT_EQ(check(File, false, 64, 0, EFAULT), EFAULT);
  EXPECT_EQ(check(File, false, 64, INT64_MAX - 10), EINVAL);
  EXPECT_EQ(check(File, false, size_t(SSIZE_MAX) + 1, 0), EINVAL);
  EXPECT_EQ(check(Dir, false, 64, 0), EISDIR);
  EXPECT_EQ(check(Dir, true, 64, 0), EBADF);
  EXPECT_EQ(check(File, false, 0, 0), 0);
}

TEST_F(TransferCheckTest, EarlierStepsWin) {
  // Offset before the descriptor; the descriptor before seekability;
  // seekability before the access mode; the access mode before the buffer;
  // the buffer before the offset range; the offset range before the
  // directory.
  EXPECT_EQ(check(Closed, false, 64, -1), EINVAL);
  EXPECT_EQ(check(Closed, false, size_t(SSIZE_MAX) + 1, 0, EFAULT), EBADF);
  EXPECT_EQ(check(Pipe[1], false, 64, 0), ESPIPE); // Write end, read.
  EXPECT_EQ(check(Pipe[0], true, 64, 0), ESPIPE);  // Read end, written.
  EXPECT_EQ(check(Event, false, size_t(SSIZE_MAX) + 1, 0, EFAULT), ESPIPE);
  EXPECT_EQ(check(WriteOnly, false, 64, 0, EFAULT), EBADF);
  EXPECT_EQ(check(File, false, 64, INT64_MAX - 10, EFAULT), EFAULT);
  EXPECT_EQ(check(Dir, false, 64, INT64_MAX - 10), EINVAL);
  EXPECT_EQ(check(Dir, false, 64, 0, EFAULT), EFAULT);
}

TEST_F(TransferCheckTest, MessagesNameTheDeviceAndDescriptor) {
  DescriptorFactsTy F = inspectDescriptor(Sys, Closed);
  TransferVerdictTy V = checkDescriptorUse(F, false, 0, 7);
  EXPECT_EQ(V.Why, "read on device 7: fd " + std::to_string(Closed) +
                       " is not open");
  F = inspectDescriptor(Sys, Event);
  V = checkDescriptorUse(F, true, 0, 7);
  EXPECT_EQ(V.Why, "write on device 7: fd " + std::to_string(Event) +
                       " has no file offset (pwrite fails with ESPIPE)");
}

TEST_F(TransferCheckTest, TheKernelIsAskedOncePerDescriptor) {
  DescriptorFactsTy F = inspectDescriptor(Sys, Event);
  DescriptorFactsTy G = inspectDescriptor(Sys, File);
  EXPECT_EQ(Sys.Fstats.load(), 2u);
  EXPECT_EQ(Sys.Preads.load(), 1u); // The eventfd's zero-length probe alone.
  for (int I = 0; I < 100; ++I) {
    EXPECT_EQ(checkDescriptorUse(F, false, I, 0).Errno, ESPIPE);
    EXPECT_EQ(checkTransferRange(Sys, G, false, 64, I, 0).Errno, 0);
  }
  EXPECT_EQ(Sys.Fstats.load(), 2u);
  EXPECT_EQ(Sys.Preads.load(), 1u);
}

TEST(TransferCheckHostBufferTest, NullHugeAndWrappingRangesAreEfault) {
  char Buf[16];
  EXPECT_EQ(checkHostBuffer(false, Buf, 16, 0).Errno, 0);
  EXPECT_EQ(checkHostBuffer(false, nullptr, 0, 0).Errno, 0);
  EXPECT_EQ(checkHostBuffer(false, nullptr, 1, 0).Errno, EFAULT);
  EXPECT_EQ(checkHostBuffer(true, Buf, size_t(SSIZE_MAX) + 1, 0).Errno, EFAULT);
  EXPECT_EQ(checkHostBuffer(true, reinterpret_cast<void *>(UINTPTR_MAX - 8),
                            16, 0)
                .Errno,
            EFAULT);
}

} // namespace

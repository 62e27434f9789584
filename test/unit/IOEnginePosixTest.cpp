// SPDX-License-Identifier: Apache-2.0
//
// IOEngineTy and POSIX details (IOEngineFixture.h): Linux's order of
// descriptor checks, files that are not regular files, and the file size
// limit (RLIMIT_FSIZE) on every path.
#include "IOEngineFixture.h"

#include "gtest/gtest.h"

using namespace offloadio;
using namespace offloadio::unittest;

namespace {

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

INSTANTIATE_TEST_SUITE_P(Paths, IOEnginePathTest,
                         ::testing::Values(IOPathTy::HostAddressable,
                                           IOPathTy::Staged),
                         pathName);

} // namespace

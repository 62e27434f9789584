// SPDX-License-Identifier: Apache-2.0
//
// IOEngineTy with O_DIRECT for the aligned middle of a request
// (IOEngineFixture.h): the buffered head and tail, the policies that
// reopen a descriptor with or without O_DIRECT, EINVAL retried buffered,
// and the staging rings' geometry for direct chunks.
#include "IOEngineFixture.h"

#include "gtest/gtest.h"

using namespace offloadio;
using namespace offloadio::unittest;

namespace {

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
  engine(directConfig(int(IOPathTy::HostAddressable), IODirectPolicyTy::Auto));
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
                         ::testing::Values(IOPathTy::HostAddressable,
                                           IOPathTy::Staged),
                         pathName);

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

} // namespace

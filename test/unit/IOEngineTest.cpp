// SPDX-License-Identifier: Apache-2.0
//
// IOEngineTy driven directly (IOEngineFixture.h): data and semantics on the
// direct and the staged path (EINTR, short counts, end of file, EIO,
// ENOSPC, truncation, many requests at once), the staged path's ring, and
// submission: validation, the choice of path, and the info line.
#include "IOEngineFixture.h"

#include "offloadio/MessagePrefix.h"

#include "gtest/gtest.h"

#include <random>

using namespace offloadio;
using namespace offloadio::unittest;

namespace {

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
                         ::testing::Values(IOPathTy::HostAddressable,
                                           IOPathTy::Staged),
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
  EXPECT_EQ(E.getStats().BytesRead[unsigned(IOPathTy::HostAddressable)].load(),
            10000u);
  std::string Why;
  EXPECT_EQ(E.availablePaths(Why), (1u << unsigned(IOPathTy::HostAddressable)) |
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
  EXPECT_EQ(E.getStats().BytesRead[unsigned(IOPathTy::HostAddressable)].load(),
            20000u);
  std::string Why;
  EXPECT_EQ(E.availablePaths(Why), 1u << unsigned(IOPathTy::Staged));
  EXPECT_NE(Why.find("direct: device memory is not addressable by the host\n"),
            std::string::npos)
      << Why;
  // Forcing direct onto device memory is refused with ENOTSUP.
  engine(smallConfig(int(IOPathTy::HostAddressable)), nullptr, false);
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
  EXPECT_NE(Err.find(linePrefix("fake", 0) + ": read 8192 bytes, fd " + Fd +
                     " offset 0, "),
            std::string::npos)
      << Err;
  EXPECT_NE(Err.find(": direct path (the host can address the device buffer)"),
            std::string::npos)
      << Err;
  EXPECT_NE(Err.find(linePrefix("fake", 0) + ": write 100 bytes, fd " + Fd +
                     " offset 50, "),
            std::string::npos)
      << Err;
  EXPECT_EQ(std::count(Err.begin(), Err.end(), '\n'), 2) << Err;
}

} // namespace

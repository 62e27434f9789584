// SPDX-License-Identifier: Apache-2.0
//
// IOEngineTy with a fastpath (IOEngineFixture.h): what it accepts it
// serves; a refusal goes to the staged path; a failure with ENODEV,
// EREMOTEIO or ENOTSUP falls back to the staged path once, EIO fails the
// request.
#include "IOEngineFixture.h"

#include "offloadio/MessagePrefix.h"

#include "gtest/gtest.h"

using namespace offloadio;
using namespace offloadio::unittest;

namespace {

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
  EXPECT_EQ(E.getStats().BytesRead[unsigned(IOPathTy::HostAddressable)].load(),
            5000u);
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
    EXPECT_EQ(Err.find(linePrefix("fake", 0) +
                       ": logging fastpath looked at the file\n") !=
                  std::string::npos,
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

TEST_F(IOEngineTest, FastpathChoiceAsksNoFstatPerBatchOperation) {
  // The path choice reuses what the checks learnt of the descriptor: the
  // kernel is asked about it a fixed number of times, however many
  // operations name it.
  FakeFastpathTy Fast(Sys);
  IOEngineTy &E = engine(smallConfig(-1, 4, 4096), &Fast);
  constexpr size_t Ops = 200, Size = 1024;
  makeFile(2 * Ops * Size);
  char *Buf = Device->alloc(Ops * Size);
  std::vector<IOBatchOpTy> Batch;
  for (size_t I = 0; I < Ops; ++I)
    Batch.push_back({IORequestTy::Read, Fd, Buf + I * Size, Size,
                     off_t(2 * I * Size)});
  auto B = E.createBatch();
  ASSERT_TRUE(bool(B)) << takeErrorMessage(B.takeError());
  unsigned Before = Sys.Fstats.load();
  E.startBatch(**B, Batch);
  EXPECT_LE(Sys.Fstats.load() - Before, 4u);
  for (const IOBatchResultTy &R : (*B)->wait())
    EXPECT_EQ(R.Bytes, Size) << R.Message;
  EXPECT_EQ(E.getStats().Reads[unsigned(IOPathTy::Fastpath)].load(), Ops);
  for (size_t I = 0; I < Ops; ++I)
    ASSERT_EQ(mismatches(Buf + I * Size, Size, off_t(2 * I * Size)), 0u)
        << "operation " << I;
}

} // namespace

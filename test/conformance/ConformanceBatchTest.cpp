// SPDX-License-Identifier: Apache-2.0
//
// Conformance: the batch extensions (__tgt_rtl_ompx_io_batch_*,
// offloadio/ExtensionABI.h), reached through the plugin's extension table as
// libompx_io's ompx_io_batch_submit reaches them:
// the same contract on every plugin, whatever path its engine takes.
#include "ConformanceFixture.h"

#include "offloadio/ExtensionLookup.h"
#include "ompx_io.h"

#include "gtest/gtest.h"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <dlfcn.h>
#include <unistd.h>

namespace offloadio::conformance {

namespace {

/// The batch entry points of \p P, from its extension table; null when
/// missing.
struct BatchFnsTy {
  offloadio_extension_table Table;
  decltype(Table.IOBatchCreate) Create = nullptr;
  decltype(Table.IOBatchStart) Start = nullptr;
  decltype(Table.IOBatchTest) Test = nullptr;
  decltype(Table.IOBatchWait) Wait = nullptr;
  decltype(Table.IOBatchMessage) Message = nullptr;
  decltype(Table.IOBatchRelease) Release = nullptr;
  explicit BatchFnsTy(void *H) {
    if (offloadio_extensions_of(H, &Table))
      return;
    Create = Table.IOBatchCreate;
    Start = Table.IOBatchStart;
    Test = Table.IOBatchTest;
    Wait = Table.IOBatchWait;
    Message = Table.IOBatchMessage;
    Release = Table.IOBatchRelease;
  }
  bool complete() const {
    return Create && Start && Test && Wait && Message && Release;
  }
};

} // namespace

TEST_P(DeviceConformance, BatchReadsGatheredAndSingleWithPerOperationErrors) {
  BatchFnsTy B(P->Handle);
  ASSERT_TRUE(B.complete()) << "a __tgt_rtl_ompx_io_batch_* entry is missing "
                               "from the extension table";
  char Path[] = "/tmp/conformance-batch-XXXXXX";
  int Fd = ::mkstemp(Path);
  ASSERT_GE(Fd, 0);
  ::unlink(Path);
  constexpr size_t FileSize = 100000;
  std::vector<char> File(FileSize);
  for (size_t I = 0; I < FileSize; ++I)
    File[I] = char(I * 13 + 5);
  ASSERT_EQ(::pwrite(Fd, File.data(), FileSize, 0), ssize_t(FileSize));
  char *Buf = static_cast<char *>(alloc(FileSize + 8192));
  ASSERT_NE(Buf, nullptr);

  // 40 touching reads of 1000 bytes, a read of the rest, one across end of
  // file, one with a bad descriptor.
  std::vector<ompx_io_op_t> Ops;
  for (int K = 0; K < 40; ++K)
    Ops.push_back({OMPX_IO_OP_READ, Fd, Buf + K * 1000, 1000, off_t(K * 1000),
                   0, 0, 0});
  Ops.push_back({OMPX_IO_OP_READ, Fd, Buf + 40000, FileSize - 40000, 40000, 0,
                 0, 0});
  Ops.push_back({OMPX_IO_OP_READ, Fd, Buf + FileSize, 4096,
                 off_t(FileSize - 10), 0, 0, 0});
  Ops.push_back({OMPX_IO_OP_READ, -1, Buf + FileSize + 4096, 10, 0, 0, 0, 0});
  void *Share = nullptr;
  ASSERT_EQ(B.Create(Dev, &Share), 0);
  ASSERT_NE(Share, nullptr);
  ASSERT_EQ(B.Start(Dev, Share, Ops.data(), Ops.size()), 0);
  ASSERT_EQ(B.Wait(Share, Ops.data(), Ops.size()), 0);
  EXPECT_EQ(B.Test(Share), 1);
  for (int K = 0; K < 40; ++K)
    EXPECT_EQ(Ops[K].result, 1000) << K;
  EXPECT_EQ(Ops[40].result, ssize_t(FileSize - 40000));
  EXPECT_EQ(Ops[41].result, 10);
  EXPECT_EQ(Ops[42].result, -1);
  EXPECT_EQ(Ops[42].error, EBADF);
  char Text[256];
  EXPECT_GT(B.Message(Share, 42, Text, sizeof(Text)), 0u);
  EXPECT_NE(std::string(Text).find("fd -1"), std::string::npos) << Text;
  EXPECT_EQ(B.Message(Share, 0, Text, sizeof(Text)), 0u);
  B.Release(Share);

  std::vector<char> Back(FileSize + 10);
  ASSERT_EQ(P->data_retrieve(Dev, Back.data(), Buf, FileSize + 10),
            OFFLOAD_SUCCESS);
  EXPECT_EQ(std::memcmp(Back.data(), File.data(), FileSize), 0);
  EXPECT_EQ(std::memcmp(Back.data() + FileSize, File.data() + FileSize - 10,
                        10),
            0);
  ::close(Fd);
}

TEST_P(DeviceConformance, BatchWritesAndReleaseUnstarted) {
  BatchFnsTy B(P->Handle);
  ASSERT_TRUE(B.complete());
  // A share released without being started gives its request back.
  void *Unstarted = nullptr;
  ASSERT_EQ(B.Create(Dev, &Unstarted), 0);
  B.Release(Unstarted);

  char Path[] = "/tmp/conformance-batch-XXXXXX";
  int Fd = ::mkstemp(Path);
  ASSERT_GE(Fd, 0);
  ::unlink(Path);
  constexpr size_t Size = 30000;
  std::vector<char> Src(Size);
  for (size_t I = 0; I < Size; ++I)
    Src[I] = char(I * 3 + 1);
  char *Buf = static_cast<char *>(alloc(Size));
  ASSERT_NE(Buf, nullptr);
  ASSERT_EQ(P->data_submit(Dev, Buf, Src.data(), Size), OFFLOAD_SUCCESS);
  // Thirty touching writes of 1000 bytes, submitted last to first.
  std::vector<ompx_io_op_t> Ops;
  for (int K = 29; K >= 0; --K)
    Ops.push_back({OMPX_IO_OP_WRITE, Fd, Buf + K * 1000, 1000,
                   off_t(K * 1000), 0, 0, 0});
  void *Share = nullptr;
  ASSERT_EQ(B.Create(Dev, &Share), 0);
  ASSERT_EQ(B.Start(Dev, Share, Ops.data(), Ops.size()), 0);
  ASSERT_EQ(B.Wait(Share, Ops.data(), Ops.size()), 0);
  B.Release(Share);
  for (size_t K = 0; K < Ops.size(); ++K)
    EXPECT_EQ(Ops[K].result, 1000) << K;
  std::vector<char> Back(Size);
  ASSERT_EQ(::pread(Fd, Back.data(), Size, 0), ssize_t(Size));
  EXPECT_EQ(Back, Src);
  ::close(Fd);
}

} // namespace offloadio::conformance

// SPDX-License-Identifier: Apache-2.0
//
// The staged path within the pinned budget (issue 27): valid settings may
// make a transfer slower, never make it fail. Staging buffers are as large
// as the transfer (not OMPX_IO_CHUNK_SIZE times OMPX_IO_RING_DEPTH), the
// buffers that idle workers keep go back to whoever needs the memory, and a
// budget smaller than one chunk moves the chunk in pieces. Runs the engine
// on the fake device of FakeDevice.h, with a real file and a plugin whose
// OFFLOADIO_PINNED_MAX is small.
#include "FakeDevice.h"
#include "ScopedEnv.h"

#include "offloadio/io/IOEngine.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

using namespace offloadio;
using namespace offloadio::unittest;

namespace {

char pat(size_t O, unsigned Seed) {
  return char(O * 7 + (O >> 8) * 31 + (O >> 16) * 131 + Seed * 61);
}

class IOStagingBudgetTest : public ::testing::Test {
protected:
  void SetUp() override {
    char Path[] = "/tmp/offloadio-staging-budget-XXXXXX";
    Fd = ::mkstemp(Path);
    ASSERT_GE(Fd, 0);
    ::unlink(Path);
  }
  void TearDown() override {
    Engine.reset();
    Device.reset();
    Plugin.reset();
    ::close(Fd);
  }

  /// A plugin whose pinned budget is \p PinnedMax, and the staged engine of
  /// its device.
  void start(const char *PinnedMax, IOConfigTy Config) {
    {
      test::ScopedEnvTy Env({"OFFLOADIO_PINNED_MAX"});
      ::setenv("OFFLOADIO_PINNED_MAX", PinnedMax, 1);
      Plugin = std::make_unique<FakePluginTy>();
    }
    Device = std::make_unique<FakeDeviceTy>(*Plugin, /*HostAddressable=*/false);
    Config.ForcedPath = int(IOPathTy::Staged);
    Engine = std::make_unique<IOEngineTy>(Device->io(), Sys, nullptr, Config);
  }
  PinnedBudgetStatsTy budget() { return Plugin->getPinnedBudget().getStats(); }

  /// Submit a transfer and wait for it; the bytes moved, all of \p Count
  /// or the test fails.
  size_t move(IORequestTy::OpTy Op, char *Buf, size_t Count, off_t Offset) {
    auto R = Engine->submit(Op, Fd, Buf, Count, Offset);
    EXPECT_TRUE(bool(R)) << (R ? "" : takeErrorMessage(R.takeError()));
    auto N = R ? (*R)->wait() : Expected<size_t>(size_t(0));
    EXPECT_TRUE(bool(N)) << (N ? "" : takeErrorMessage(N.takeError()));
    size_t Moved = N ? *N : 0;
    EXPECT_EQ(Moved, Count);
    return Moved;
  }
  /// Write \p Count pattern bytes (seed \p Seed) at \p Offset through the
  /// engine and read them back; every byte must arrive both ways.
  void roundTrip(size_t Count, off_t Offset, unsigned Seed) {
    char *Buf = Device->alloc(Count);
    for (size_t I = 0; I < Count; ++I)
      Buf[I] = pat(I, Seed);
    move(IORequestTy::Write, Buf, Count, Offset);
    std::vector<char> File(Count);
    ASSERT_EQ(::pread(Fd, File.data(), Count, Offset), ssize_t(Count));
    EXPECT_EQ(std::memcmp(File.data(), Buf, Count), 0) << "written";
    std::memset(Buf, 0, Count);
    move(IORequestTy::Read, Buf, Count, Offset);
    EXPECT_EQ(std::memcmp(File.data(), Buf, Count), 0) << "read";
    Device->release(Buf);
  }

  SysTy Sys;
  std::unique_ptr<FakePluginTy> Plugin;
  std::unique_ptr<FakeDeviceTy> Device;
  std::unique_ptr<IOEngineTy> Engine;
  int Fd = -1;
};

IOConfigTy config(unsigned Threads, size_t Chunk, unsigned Depth) {
  IOConfigTy C;
  C.Threads = Threads;
  C.ChunkSize = Chunk;
  C.RingDepth = Depth;
  return C;
}

TEST_F(IOStagingBudgetTest, HugeChunksAndDeepRingsPinOnlyWhatTransfersNeed) {
  // OMPX_IO_CHUNK_SIZE=1G OMPX_IO_RING_DEPTH=64 with a budget that holds
  // neither one chunk nor the depth: a 16 MiB read pins 16 MiB, a 5 MiB
  // write then finds room, and a read that needs more than the idle
  // workers keep takes their buffers.
  start("48M", config(64, 1 << 30, 64));
  std::vector<char> Data(16 << 20);
  for (size_t I = 0; I < Data.size(); ++I)
    Data[I] = pat(I, 1);
  ASSERT_EQ(::pwrite(Fd, Data.data(), Data.size(), 0), ssize_t(Data.size()));
  char *Buf = Device->alloc(16 << 20);
  move(IORequestTy::Read, Buf, 16 << 20, 0);
  EXPECT_EQ(std::memcmp(Buf, Data.data(), Data.size()), 0);
  Device->release(Buf);
  EXPECT_EQ(budget().Peak, (16u << 20) + 4096) << "sized to the transfer";
  roundTrip(5 << 20, 16 << 20, 2);
  roundTrip(40 << 20, 21 << 20, 3);
  EXPECT_LE(budget().Peak, 48u << 20);
  EXPECT_EQ(budget().Refusals, 0u) << "idle buffers went back first";
}

TEST_F(IOStagingBudgetTest, ABudgetBelowOneChunkMovesEveryByteInPieces) {
  // 1 MiB, the smallest OFFLOADIO_PINNED_MAX, below one 2 MiB chunk: every
  // worker's ring takes what it can and moves its chunks in pieces.
  start("1M", config(4, 2 << 20, 2));
  roundTrip((8 << 20) + 12345, 1000, 4);
  roundTrip(3 << 20, 0, 5);
  EXPECT_LE(budget().Peak, 1u << 20);
}

TEST_F(IOStagingBudgetTest, ManyWorkersShareASmallBudget) {
  // 64 KiB chunks over 16 workers with rings of four: they cannot all have
  // their depth, and each makes do with what it has.
  start("1M", config(16, 64 << 10, 4));
  for (unsigned Seed = 6; Seed < 9; ++Seed)
    roundTrip((6 << 20) + Seed, off_t(Seed * 4096), Seed);
  EXPECT_LE(budget().Peak, 1u << 20);
}

} // namespace

// SPDX-License-Identifier: Apache-2.0
//
// O_DIRECT reads at the end of file (issue 27): a read that crosses it
// returns the short count and leaves every byte of the program's buffer
// past that count as it was, as pread(2) does, on the direct and the staged
// path, through an O_DIRECT descriptor and through a buffered one reopened
// with O_DIRECT. The fake file system behaves as Linux's: an O_DIRECT read
// that meets the end of a regular file zeroes the buffer from there to the
// end of the read (the blocks past it are a hole) while it returns the
// short count; a block device stops at its end and writes nothing past it.
// The direct path learns the file size once per request (fstat), again only
// for chunks past the size seen, and reads a grown file whole.
#include "FakeDevice.h"

#include "offloadio/io/IOEngine.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

using namespace offloadio;
using namespace offloadio::unittest;

namespace {

constexpr size_t Block = 4096;
constexpr char Marker = char(0xAB);

char pat(size_t O) { return char(O * 7 + (O >> 8) * 31 + (O >> 16) * 131); }

/// A file in memory behind /dev/null descriptors; O_DIRECT ones as Linux's.
/// /dev/null has no O_DIRECT: O_NONBLOCK, which any descriptor takes and
/// its duplicates share, marks the descriptors that stand for it. Not the
/// shared MemoryFileSysTy (FakeSys.h): what this test checks is how Linux's
/// O_DIRECT reads end at the end of a file (the hole past it reads as
/// zeros, a block device stops), on descriptors the test opens itself.
class EofSysTy final : public SysTy {
public:
  bool BlockDevice = false;      ///< The file is a block device.
  bool FailDirectFstat = false;  ///< fstat of an O_DIRECT descriptor fails.
  unsigned GrowAfterPreads = 0;  ///< After this many preads ...
  size_t GrowTo = 0;             ///< ... the file grows to this size.
  std::atomic<unsigned> DirectFstats{0}, DirectReads{0};

  /// A descriptor of the file, with O_DIRECT if \p Direct.
  static int open(bool Direct) {
    return ::open("/dev/null", O_RDONLY | O_CLOEXEC | (Direct ? O_NONBLOCK : 0));
  }
  static bool isDirect(int Fd) { return ::fcntl(Fd, F_GETFL) & O_NONBLOCK; }

  void setFile(size_t Size) {
    std::lock_guard<std::mutex> Guard(Lock);
    File.resize(Size);
    for (size_t I = 0; I < Size; ++I)
      File[I] = pat(I);
  }

  ssize_t pread(int Fd, void *Buf, size_t Count, off_t Offset) override {
    bool Direct = isDirect(Fd);
    if (Direct && (size_t(Offset) % Block || Count % Block ||
                   reinterpret_cast<uintptr_t>(Buf) % Block)) {
      errno = EINVAL;
      return -1;
    }
    std::lock_guard<std::mutex> Guard(Lock);
    size_t N = size_t(Offset) < File.size()
                   ? std::min(Count, File.size() - size_t(Offset))
                   : 0;
    std::memcpy(Buf, File.data() + std::min(size_t(Offset), File.size()), N);
    // The kernel's O_DIRECT read of a regular file: the blocks past the
    // end of file are a hole, and holes read as zeros.
    if (Direct && !BlockDevice && N < Count)
      std::memset(static_cast<char *>(Buf) + N, 0, Count - N);
    DirectReads += Direct;
    if (++Preads == GrowAfterPreads) {
      size_t Old = File.size();
      File.resize(GrowTo);
      for (size_t I = Old; I < GrowTo; ++I)
        File[I] = pat(I);
    }
    return ssize_t(N);
  }
  int getFlags(int Fd) override {
    int Flags = SysTy::getFlags(Fd);
    if (Flags < 0)
      return Flags;
    return (Flags & ~O_NONBLOCK) | (Flags & O_NONBLOCK ? O_DIRECT : 0);
  }
  int fstat(int Fd, struct stat *St) override {
    if (int Rc = SysTy::fstat(Fd, St))
      return Rc;
    if (isDirect(Fd)) {
      ++DirectFstats;
      if (FailDirectFstat) {
        errno = EIO;
        return -1;
      }
    }
    St->st_mode = (St->st_mode & ~S_IFMT) | (BlockDevice ? S_IFBLK : S_IFREG);
    std::lock_guard<std::mutex> Guard(Lock);
    St->st_size = BlockDevice ? 0 : off_t(File.size());
    return 0;
  }
  int reopen(int, int Flags) override { return open(Flags & O_DIRECT); }
  size_t directIOAlignment(int) override { return Block; }

private:
  std::mutex Lock;
  std::vector<char> File;
  unsigned Preads = 0;
};

/// Test names after the path.
std::string pathName(const ::testing::TestParamInfo<IOPathTy> &Info) {
  return ioPathName(Info.param);
}

class IODirectEofTest : public ::testing::TestWithParam<IOPathTy> {
protected:
  void SetUp() override {
    Device = std::make_unique<FakeDeviceTy>(Plugin, /*HostAddressable=*/true);
  }
  void TearDown() override {
    Engine.reset();
    ::close(Fd);
  }

  /// O_DIRECT middles in chunks of \p DirectChunk, through the caller's
  /// O_DIRECT descriptor (Auto) or a buffered one reopened (On).
  IOEngineTy &engine(size_t DirectChunk = 16384, unsigned Threads = 3,
                     bool CallerDirect = false) {
    Engine.reset();
    if (Fd >= 0)
      ::close(Fd);
    Fd = EofSysTy::open(CallerDirect);
    EXPECT_GE(Fd, 0);
    IOConfigTy C;
    C.Threads = Threads;
    C.ChunkSize = 4096;
    C.DirectChunkSize = DirectChunk;
    C.RingDepth = 2;
    C.ForcedPath = int(GetParam());
    C.ODirect = CallerDirect ? IODirectPolicyTy::Auto : IODirectPolicyTy::On;
    Engine = std::make_unique<IOEngineTy>(Device->io(), Sys, nullptr, C);
    return *Engine;
  }

  /// A page-aligned buffer of \p Size bytes, all Marker.
  char *markedBuffer(size_t Size) {
    char *Base = Device->alloc(Size + Block);
    char *Buf = Base + (Block - reinterpret_cast<uintptr_t>(Base) % Block) % Block;
    std::memset(Buf, Marker, Size);
    return Buf;
  }

  /// Read \p Count bytes at \p Offset of a file of \p FileSize into
  /// \p Buf + \p Skew, all Marker before, and check the count and every
  /// byte of the buffer, \p Room bytes in all.
  void check(char *Buf, size_t Room, size_t Skew, size_t Count, size_t Offset,
             size_t FileSize) {
    std::memset(Buf, Marker, Room);
    auto R = Engine->submit(IORequestTy::Read, Fd, Buf + Skew, Count,
                            off_t(Offset));
    ASSERT_TRUE(bool(R)) << takeErrorMessage(R.takeError());
    auto N = (*R)->wait();
    ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
    size_t Want = Offset < FileSize ? std::min(Count, FileSize - Offset) : 0;
    EXPECT_EQ(*N, Want) << Count << " bytes at " << Offset;
    size_t Wrong = 0, First = SIZE_MAX;
    for (size_t I = 0; I < Room; ++I) {
      bool Read = I >= Skew && I < Skew + Want;
      bool Bad = Read ? Buf[I] != pat(Offset + I - Skew) : Buf[I] != Marker;
      Wrong += Bad;
      if (Bad && First == SIZE_MAX)
        First = I;
    }
    EXPECT_EQ(Wrong, 0u) << Count << " bytes at " << Offset << " into +"
                         << Skew << ": first wrong byte at " << First;
  }

  FakePluginTy Plugin;
  std::unique_ptr<FakeDeviceTy> Device;
  EofSysTy Sys;
  std::unique_ptr<IOEngineTy> Engine;
  int Fd = -1;
};

TEST_P(IODirectEofTest, ReadsAcrossTheEndLeaveTheRestAlone) {
  constexpr size_t FileSize = 300007, Room = 1 << 20;
  Sys.setFile(FileSize);
  for (bool CallerDirect : {false, true}) {
    engine(16384, 3, CallerDirect);
    char *Buf = markedBuffer(Room);
    check(Buf, Room, 0, Room, 0, FileSize);
    check(Buf, Room, 0, 256 << 10, 128 << 10, FileSize);
    check(Buf, Room, 0, 64 << 10, 70 * Block, FileSize);
    check(Buf, Room, 1000 % Block, Room - Block, 1000, FileSize);
    check(Buf, Room, 0, 8 * Block, FileSize / Block * Block, FileSize);
    check(Buf, Room, 0, Room, FileSize, FileSize);
    check(Buf, Room, 0, 4 * Block, 100 * Block, FileSize);
    EXPECT_GT(Sys.DirectReads.load(), 0u) << "O_DIRECT was used";
  }
}

TEST_P(IODirectEofTest, RandomReadsMatchPread) {
  // Model: pread(2), which writes the bytes it returns and nothing else.
  std::mt19937 Rng(27);
  constexpr size_t Room = 256 << 10;
  for (int Round = 0; Round < 4; ++Round) {
    size_t FileSize = 1 + Rng() % (200 << 10);
    if (Round == 1)
      FileSize = 40 * Block; // An end of file on a block boundary.
    Sys.setFile(FileSize);
    engine(size_t(4 + Rng() % 13) * Block, 1 + Rng() % 4, Round % 2);
    char *Buf = markedBuffer(Room);
    for (int I = 0; I < 40; ++I) {
      size_t Offset = Rng() % 2 ? Rng() % (FileSize + 3 * Block)
                                : FileSize / Block * Block - Block * (Rng() % 4);
      Offset = std::min(Offset, FileSize + 3 * Block);
      size_t Skew = (Offset % Block + (Rng() % 8 == 0 ? 1 : 0)) % Block;
      size_t Count = 1 + Rng() % (Room - Skew - 1);
      check(Buf, Room, Skew, Count, Offset, FileSize);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Paths, IODirectEofTest,
                         ::testing::Values(IOPathTy::HostAddressable,
                                           IOPathTy::Staged),
                         pathName);

/// The direct path's own checks: how it learns the end of file.
using IODirectEofLimitTest = IODirectEofTest;

TEST_P(IODirectEofLimitTest, TheSizeIsLearnedOncePerRequest) {
  Sys.setFile(1 << 20);
  engine(16384, 1);
  char *Buf = markedBuffer(512 << 10);
  // 32 O_DIRECT chunks below the end of file: one fstat, not one a chunk.
  check(Buf, 512 << 10, 0, 512 << 10, 0, 1 << 20);
  EXPECT_EQ(Sys.DirectFstats.load(), 1u);
  EXPECT_EQ(Sys.DirectReads.load(), 32u);
}

TEST_P(IODirectEofLimitTest, AFileThatGrowsDuringTheReadIsReadWhole) {
  // The file grows after the first pread: the chunks past the size first
  // seen look again, and read the new bytes with O_DIRECT.
  constexpr size_t Room = 256 << 10;
  Sys.setFile(64 << 10);
  Sys.GrowAfterPreads = 1;
  Sys.GrowTo = Room;
  engine(16384, 1);
  char *Buf = markedBuffer(Room);
  check(Buf, Room, 0, Room, 0, Room);
  EXPECT_EQ(Sys.DirectReads.load(), Room / 16384);
  EXPECT_EQ(Sys.DirectFstats.load(), 2u);
}

TEST_P(IODirectEofLimitTest, BlockDevicesGoODirectAndNoSizeGoesBuffered) {
  // A block device's fstat size is 0, and its O_DIRECT reads stop at its
  // end without writing past it: no limit, every middle chunk O_DIRECT.
  // Without a size (fstat fails) nothing is read with O_DIRECT.
  for (bool BlockDevice : {true, false}) {
    Sys.BlockDevice = BlockDevice;
    Sys.FailDirectFstat = !BlockDevice;
    Sys.DirectReads = 0;
    Sys.setFile(100000);
    engine();
    char *Buf = markedBuffer(256 << 10);
    check(Buf, 256 << 10, 0, 256 << 10, 0, 100000);
    EXPECT_EQ(Sys.DirectReads.load(), BlockDevice ? 16u : 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(Direct, IODirectEofLimitTest,
                         ::testing::Values(IOPathTy::HostAddressable),
                         pathName);

} // namespace

// SPDX-License-Identifier: Apache-2.0
//
// Device memory that the program allocated outside OpenMP (a framework's
// allocator), as the vendor's pointer query describes it: the engine
// transfers into memory of this device up to the end of the vendor's
// allocation, refuses past it with EFAULT, and refuses memory of another
// device or context, memory the vendor does not know and a failed query
// with EFAULT and a message that says which.
#include "IOEngineFixture.h"

using namespace offloadio;
using namespace offloadio::unittest;

namespace {

class IOForeignMemoryTest : public IOEnginePathTest {
protected:
  /// Memory of the test's own allocator, which the fake vendor reports as
  /// \p Owner's.
  char *foreign(size_t Size, ForeignMemoryTy::OwnerTy Owner,
                std::string OwnerName = "") {
    Memory.assign(Size, 0);
    Device->ForeignQuery =
        [this, Owner, OwnerName](const void *Ptr) -> Expected<ForeignMemoryTy> {
      ++Queries;
      ForeignMemoryTy M;
      const char *P = static_cast<const char *>(Ptr);
      if (P < Memory.data() || P >= Memory.data() + Memory.size())
        return M;
      M.Owner = Owner;
      M.Base = Memory.data();
      M.Size = Memory.size();
      M.OwnerName = OwnerName;
      return M;
    };
    return Memory.data();
  }
  /// The errno and message of a refused read of \p Count bytes into \p Buf.
  std::pair<int, std::string> refusedRead(void *Buf, size_t Count) {
    auto N = read(Buf, Count, 0);
    if (N)
      return {0, "read " + std::to_string(*N) + " bytes"};
    ErrorDetailsTy D = takeErrorDetails(N.takeError());
    return {D.Errno, D.Message};
  }

  std::vector<char> Memory;
  unsigned Queries = 0;
};

TEST_P(IOForeignMemoryTest, MemoryOfThisDeviceIsReadAndWrittenInItsBounds) {
  IOEngineTy &E = engine(smallConfig(path()));
  makeFile(40000);
  char *Buf = foreign(30000, ForeignMemoryTy::OwnerTy::ThisDevice);
  auto N = read(Buf, 30000, 0);
  ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
  EXPECT_EQ(*N, 30000u);
  EXPECT_EQ(mismatches(Buf, 30000, 0), 0u);
  // An interior pointer, to the allocation's last byte.
  std::memset(Buf, 0, 30000);
  N = read(Buf + 1000, 29000, 5);
  ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
  EXPECT_EQ(mismatches(Buf + 1000, 29000, 5), 0u);
  // Written back from it, at an offset.
  N = write(Buf + 1000, 29000, 40000);
  ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
  EXPECT_EQ(*N, 29000u);
  EXPECT_GE(Queries, 3u);
  EXPECT_EQ(E.getStats().BytesWritten[path()].load(), 29000u);
}

TEST_P(IOForeignMemoryTest, PastTheEndOfTheVendorsAllocationIsEfault) {
  engine(smallConfig(path()));
  makeFile(40000);
  char *Buf = foreign(30000, ForeignMemoryTy::OwnerTy::ThisDevice);
  auto [Errno, Why] = refusedRead(Buf + 100, 29901);
  EXPECT_EQ(Errno, EFAULT) << Why;
  EXPECT_NE(Why.find("has only 29900 bytes left in its allocation"),
            std::string::npos)
      << Why;
  // Nothing was read into it.
  EXPECT_EQ(std::count(Memory.begin(), Memory.end(), 0), 30000);
}

TEST_P(IOForeignMemoryTest, MemoryOfAnotherDeviceOrContextIsRefused) {
  engine(smallConfig(path()));
  makeFile(4096);
  char *Buf =
      foreign(4096, ForeignMemoryTy::OwnerTy::Elsewhere, "CUDA device 1");
  auto [Errno, Why] = refusedRead(Buf, 4096);
  EXPECT_EQ(Errno, EFAULT) << Why;
  EXPECT_NE(Why.find("is memory of CUDA device 1, not of this device"),
            std::string::npos)
      << Why;
  EXPECT_NE(Why.find("on device 0"), std::string::npos) << Why;
  EXPECT_EQ(std::count(Memory.begin(), Memory.end(), 0), 4096);
}

TEST_P(IOForeignMemoryTest, MemoryTheVendorDoesNotKnowIsRefused) {
  engine(smallConfig(path()));
  makeFile(4096);
  foreign(4096, ForeignMemoryTy::OwnerTy::ThisDevice);
  std::vector<char> Other(4096);
  auto [Errno, Why] = refusedRead(Other.data(), 4096);
  EXPECT_EQ(Errno, EFAULT) << Why;
  EXPECT_NE(Why.find("is not memory of this device"), std::string::npos)
      << Why;
}

TEST_P(IOForeignMemoryTest, AFailedPointerQueryIsEfaultWithItsMessage) {
  engine(smallConfig(path()));
  makeFile(4096);
  std::vector<char> Buf(4096);
  Device->ForeignQuery = [](const void *) -> Expected<ForeignMemoryTy> {
    return makeError(ErrorCode::BackendError,
                     "cuPointerGetAttributes failed with CUresult 201");
  };
  auto [Errno, Why] = refusedRead(Buf.data(), 4096);
  EXPECT_EQ(Errno, EFAULT) << Why;
  EXPECT_NE(Why.find("cuPointerGetAttributes failed with CUresult 201"),
            std::string::npos)
      << Why;
}

TEST_P(IOForeignMemoryTest, OpenMPAllocationsAreNotAskedAbout) {
  engine(smallConfig(path()));
  makeFile(4096);
  foreign(4096, ForeignMemoryTy::OwnerTy::ThisDevice);
  char *Buf = Device->alloc(4096);
  auto N = read(Buf, 4096, 0);
  ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
  EXPECT_EQ(Queries, 0u);
  // Past the end of an OpenMP allocation the registry answers: still
  // EFAULT, without asking the vendor.
  EXPECT_EQ(refusedRead(Buf, 4097).first, EFAULT);
  EXPECT_EQ(Queries, 0u);
  Device->release(Buf);
}

} // namespace

INSTANTIATE_TEST_SUITE_P(Paths, IOForeignMemoryTest,
                         ::testing::Values(IOPathTy::HostAddressable,
                                           IOPathTy::Staged),
                         pathName);

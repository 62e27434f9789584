// SPDX-License-Identifier: Apache-2.0
//
// Data integrity of the file engine (issue 13): writes to an O_APPEND
// descriptor land whole and in order, one request after another, on every
// path; a free of memory with a transfer in flight waits for it; a request
// holds its buffer busy only until its last byte landed; the buffer checks
// see the size the program asked for and no freed memory (a device whose
// backend fills the shared registry, with the small-allocation cache on,
// against a model).
#include "FakeDevice.h"
#include "FakeFastpath.h"
#include "FakeSys.h"

#include "offloadio/Device.h"
#include "offloadio/io/IOEngine.h"

#include "gtest/gtest.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <random>
#include <thread>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace offloadio;
using namespace offloadio::unittest;

namespace {

char pat(size_t O, unsigned Seed) {
  return char(O * 7 + (O >> 8) * 31 + (O >> 16) * 131 + Seed * 61);
}

IOConfigTy config(int Path, unsigned Threads = 6) {
  IOConfigTy C;
  C.Threads = Threads;
  C.ChunkSize = 4096;
  C.RingDepth = 2;
  C.ForcedPath = Path;
  return C;
}

int errnoOf(Error E) { return takeErrorDetails(std::move(E)).Errno; }

class IODataIntegrityTest : public ::testing::Test {
protected:
  void SetUp() override {
    Fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    ASSERT_GE(Fd, 0);
    Device = std::make_unique<FakeDeviceTy>(Plugin, /*HostAddressable=*/true);
    // Workers racing for the file overtake each other.
    Sys.Jitter = true;
  }
  void TearDown() override {
    Engine.reset();
    ::close(Fd);
  }
  IOEngineTy &engine(IOConfigTy C, IOFastpathTy *Fastpath = nullptr) {
    Engine.reset();
    Engine = std::make_unique<IOEngineTy>(Device->io(), Sys, Fastpath, C);
    return *Engine;
  }
  /// A device buffer of \p Size pattern bytes.
  char *buffer(size_t Size, unsigned Seed) {
    char *B = Device->alloc(Size);
    for (size_t I = 0; I < Size; ++I)
      B[I] = pat(I, Seed);
    return B;
  }

  FakePluginTy Plugin;
  std::unique_ptr<FakeDeviceTy> Device;
  MemoryFileSysTy Sys;
  std::unique_ptr<IOEngineTy> Engine;
  int Fd = -1;
};

class IODataPathTest : public IODataIntegrityTest,
                       public ::testing::WithParamInterface<IOPathTy> {};

std::string pathName(const ::testing::TestParamInfo<IOPathTy> &Info) {
  return ioPathName(Info.param);
}

//===----------------------------------------------------------------------===//
// O_APPEND
//===----------------------------------------------------------------------===//

TEST_P(IODataPathTest, AppendsLandWholeAndInSubmissionOrder) {
  IOEngineTy &E = engine(config(int(GetParam())));
  Sys.Append = true;
  const size_t Sizes[] = {20 * 4096 + 3, 7 * 4096, 4096 - 1, 13 * 4096 + 77};
  std::vector<char *> Bufs;
  for (unsigned B = 0; B < 4; ++B)
    Bufs.push_back(buffer(Sizes[B], B));
  std::vector<char> Expect;
  std::vector<std::unique_ptr<IORequestTy>> Requests;
  for (unsigned Round = 0; Round < 5; ++Round)
    for (unsigned B = 0; B < 4; ++B) {
      auto R = E.submit(IORequestTy::Write, Fd, Bufs[B], Sizes[B], 999);
      ASSERT_TRUE(bool(R)) << takeErrorMessage(R.takeError());
      Requests.push_back(std::move(*R));
      Expect.insert(Expect.end(), Bufs[B], Bufs[B] + Sizes[B]);
    }
  for (size_t I = 0; I < Requests.size(); ++I) {
    auto N = Requests[I]->wait();
    ASSERT_TRUE(bool(N)) << takeErrorMessage(N.takeError());
    EXPECT_EQ(*N, Sizes[I % 4]);
  }
  std::vector<char> File = Sys.file();
  ASSERT_EQ(File.size(), Expect.size());
  EXPECT_TRUE(File == Expect) << "appended bytes out of order";
}

TEST_P(IODataPathTest, AppendGoesNoFurtherThanItsFirstFailedChunk) {
  IOEngineTy &E = engine(config(int(GetParam())));
  Sys.Append = true;
  Sys.FailWrite = 3;
  size_t Size = 10 * 4096;
  char *Buf = buffer(Size, 3);
  auto R = E.submit(IORequestTy::Write, Fd, Buf, Size, 0);
  ASSERT_TRUE(bool(R));
  auto N = (*R)->wait();
  ASSERT_FALSE(bool(N));
  EXPECT_EQ(errnoOf(N.takeError()), EIO);
  // Chunks 0 and 1 landed, in order; nothing after the failed one.
  std::vector<char> File = Sys.file();
  ASSERT_EQ(File.size(), 2 * 4096u);
  EXPECT_EQ(std::memcmp(File.data(), Buf, File.size()), 0);
}

INSTANTIATE_TEST_SUITE_P(Paths, IODataPathTest,
                         ::testing::Values(IOPathTy::HostAddressable,
                                           IOPathTy::Staged),
                         pathName);

TEST_F(IODataIntegrityTest, FastpathIsNotUsedForAppends) {
  FakeFastpathTy Fastpath(Sys);
  Sys.Append = true;
  char *Buf = buffer(8 * 4096, 1);
  {
    IOEngineTy &E = engine(config(-1), &Fastpath);
    auto R = E.submit(IORequestTy::Write, Fd, Buf, 8 * 4096, 0);
    ASSERT_TRUE(bool(R));
    ASSERT_TRUE(bool((*R)->wait()));
    EXPECT_EQ(E.getStats().Writes[unsigned(IOPathTy::Fastpath)].load(), 0u);
    EXPECT_EQ(E.getStats().Writes[unsigned(IOPathTy::HostAddressable)].load(),
              1u);
  }
  IOEngineTy &Forced = engine(config(int(IOPathTy::Fastpath)), &Fastpath);
  auto R = Forced.submit(IORequestTy::Write, Fd, Buf, 8 * 4096, 0);
  ASSERT_FALSE(bool(R));
  EXPECT_EQ(errnoOf(R.takeError()), ENOTSUP);
  // Reads of the same descriptor may still use it.
  Sys.setFile(std::vector<char>(8 * 4096, 'r'));
  auto Read = Forced.submit(IORequestTy::Read, Fd, Buf, 8 * 4096, 0);
  ASSERT_TRUE(bool(Read));
  EXPECT_TRUE(bool((*Read)->wait()));
}

//===----------------------------------------------------------------------===//
// Freeing memory with transfers in flight
//===----------------------------------------------------------------------===//

TEST_P(IODataPathTest, FreeWaitsForTransfersInFlight) {
  for (auto Op : {IORequestTy::Read, IORequestTy::Write}) {
    IOEngineTy &E = engine(config(int(GetParam()), 2));
    size_t Size = 16 * 4096;
    Sys.setFile(std::vector<char>(Size, 'f'));
    char *Buf = buffer(Size, 5);
    Sys.closeGate();
    auto R = E.submit(Op, Fd, Buf, Size, 0);
    ASSERT_TRUE(bool(R));
    std::atomic<bool> Freed{false};
    std::thread Free([&] {
      EXPECT_FALSE(bool(Device->dataDelete(Buf, AllocKindTy::Device)));
      Freed = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_FALSE(Freed.load()) << "free returned with the transfer in flight";
    EXPECT_FALSE((*R)->isDone());
    Sys.openGate();
    Free.join();
    // The request completed before the memory went.
    EXPECT_TRUE((*R)->isDone());
    auto N = (*R)->wait();
    ASSERT_TRUE(bool(N));
    EXPECT_EQ(*N, Size);
    EXPECT_EQ(Device->getIOBusyMemory().busyRanges(), 0u);
  }
}

TEST_F(IODataIntegrityTest, CompletedRequestHoldsItsBufferNoLonger) {
  IOEngineTy &E = engine(config(int(IOPathTy::HostAddressable)));
  Sys.setFile(std::vector<char>(8 * 4096, 'f'));
  char *Buf = buffer(8 * 4096, 1);
  auto R = E.submit(IORequestTy::Read, Fd, Buf, 8 * 4096, 0);
  ASSERT_TRUE(bool(R));
  while (!(*R)->isDone())
    std::this_thread::yield();
  // Not waited for, yet the free does not wait (a program that frees
  // before it waits must not hang).
  EXPECT_EQ(Device->getIOBusyMemory().busyRanges(), 0u);
  EXPECT_FALSE(bool(Device->dataDelete(Buf, AllocKindTy::Device)));
  auto N = (*R)->wait();
  ASSERT_TRUE(bool(N));
  EXPECT_EQ(*N, 8 * 4096u);
}

TEST_F(IODataIntegrityTest, RefusedSubmissionsHoldNothing) {
  IOEngineTy &E = engine(config(int(IOPathTy::HostAddressable)));
  char Stack[64];
  auto R = E.submit(IORequestTy::Read, Fd, Stack, sizeof Stack, 0);
  ASSERT_FALSE(bool(R));
  EXPECT_EQ(errnoOf(R.takeError()), EFAULT);
  IOConfigTy C = config(int(IOPathTy::HostAddressable));
  C.MaxRequests = 1;
  IOEngineTy &Capped = engine(C);
  char *Buf = buffer(4096, 1);
  Sys.setFile(std::vector<char>(4096, 'f'));
  Sys.closeGate();
  auto First = Capped.submit(IORequestTy::Read, Fd, Buf, 4096, 0);
  ASSERT_TRUE(bool(First));
  auto Second = Capped.submit(IORequestTy::Read, Fd, Buf, 4096, 0);
  ASSERT_FALSE(bool(Second));
  EXPECT_EQ(errnoOf(Second.takeError()), EAGAIN);
  EXPECT_EQ(Device->getIOBusyMemory().busyRanges(), 1u);
  Sys.openGate();
  EXPECT_TRUE(bool((*First)->wait()));
  EXPECT_EQ(Device->getIOBusyMemory().busyRanges(), 0u);
}

//===----------------------------------------------------------------------===//
// Buffer checks: the size asked for, no freed memory
//===----------------------------------------------------------------------===//

/// A device whose backend makes only the vendor calls, as the host, CUDA
/// and AMDGPU backends do: the framework's registry answers findAllocation.
class RegistryDeviceTy final : public ImagelessDeviceTy {
public:
  explicit RegistryDeviceTy(GenericPluginTy &Plugin)
      : ImagelessDeviceTy(Plugin, 0) {}
  ~RegistryDeviceTy() override { llvm::consumeError(freeLeakedMemory()); }

protected:
  Error initImpl(DeviceLimitsTy &L) override {
    L.HostCanAccessDeviceMemory = true;
    return Error::success();
  }
  Error deinitImpl() override { return Error::success(); }
  Expected<void *> allocateImpl(size_t Size, AllocKindTy Kind) override {
    void *Ptr = std::aligned_alloc(64, (Size + 63) & ~size_t(63));
    if (!Ptr)
      return makeError(ErrorCode::OutOfResources,
                       "aligned_alloc of {0} bytes of {1} memory failed", Size,
                       allocKindName(Kind));
    return Ptr;
  }
  Error freeImpl(void *Ptr, size_t, AllocKindTy) override {
    std::free(Ptr);
    return Error::success();
  }
  Expected<std::unique_ptr<StreamTy>> createStreamImpl() override {
    return std::make_unique<host::HostStreamTy>();
  }
  Expected<std::unique_ptr<EventTy>> createEventImpl() override {
    return std::make_unique<host::HostEventTy>();
  }
  Error initDeviceInfoImpl(__tgt_device_info &) override {
    return Error::success();
  }
  void printInfoImpl(llvm::raw_ostream &) override {}
};

TEST(IOBufferChecksTest, SizeAskedForAndNoFreedMemoryAgainstModel) {
  FakePluginTy Plugin;
  ASSERT_FALSE(bool(Plugin.init()));
  RegistryDeviceTy Device(Plugin);
  ASSERT_FALSE(bool(Device.init())); // The small-allocation cache: 8 KiB.
  std::mt19937_64 Rng(13);
  std::map<uintptr_t, size_t> Live; // Model: what the program holds.
  std::vector<uintptr_t> Probes;    // Every address handed out so far.

  auto Expected = [&](uintptr_t Addr) -> size_t {
    auto It = Live.upper_bound(Addr);
    if (It == Live.begin())
      return 0;
    --It;
    return Addr < It->first + It->second ? It->first + It->second - Addr : 0;
  };
  auto Check = [&](uintptr_t Addr, int Op) {
    size_t Room = Expected(Addr);
    const void *Ptr = reinterpret_cast<const void *>(Addr);
    ASSERT_EQ(Device.findAllocation(Ptr).has_value(), Room != 0)
        << "op " << Op << " offset " << (Addr & 63);
    if (Room)
      ASSERT_EQ(Device.bytesAvailableFrom(Ptr), Room) << "op " << Op;
  };

  for (int Op = 0; Op < 5000; ++Op) {
    if (Rng() % 100 < 55 || Live.empty()) {
      size_t Size = 1 + Rng() % (Rng() % 4 ? 8192 : 20000);
      auto P = Device.dataAlloc(int64_t(Size), nullptr, AllocKindTy::Device);
      ASSERT_TRUE(bool(P));
      auto Addr = reinterpret_cast<uintptr_t>(*P);
      Live[Addr] = Size;
      Probes.push_back(Addr);
    } else {
      auto It = Live.begin();
      std::advance(It, Rng() % Live.size());
      ASSERT_FALSE(bool(Device.dataDelete(reinterpret_cast<void *>(It->first),
                                          AllocKindTy::Device)));
      Live.erase(It);
    }
    // Starts, interiors, the byte at the size asked for, and past it, of
    // blocks live and freed.
    for (int K = 0; K < 8; ++K) {
      uintptr_t Base = Probes[Rng() % Probes.size()];
      size_t Off = Rng() % 4 == 0 ? 0 : Rng() % 9000;
      auto Live0 = Live.find(Base);
      if (Live0 != Live.end() && Rng() % 2)
        Off = Live0->second - Rng() % 2; // The last byte, or one past it.
      Check(Base + Off, Op);
    }
  }
  for (auto &[Addr, Size] : Live)
    EXPECT_FALSE(bool(
        Device.dataDelete(reinterpret_cast<void *>(Addr), AllocKindTy::Device)));
  EXPECT_FALSE(bool(Device.deinit()));
}

} // namespace

// SPDX-License-Identifier: Apache-2.0
//
// The process's file workers shared by several engines (IOWorkerPool.h):
// random reads and writes spread over four fake devices, checked against a
// model of the file; the number of oio-io threads and their growth with the
// engines attached; engines leaving the pool while the others keep it busy.
#include "FakeDevice.h"

#include "offloadio/io/IOEngine.h"
#include "offloadio/io/IOWorkerPool.h"
#include "offloadio/io/Sys.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

using namespace offloadio;
using namespace offloadio::unittest;

namespace {

/// Threads of this process whose name starts with \p Prefix.
unsigned threadsNamed(const std::string &Prefix) {
  unsigned N = 0;
  DIR *Dir = ::opendir("/proc/self/task");
  if (!Dir)
    return 0;
  while (dirent *E = ::readdir(Dir)) {
    if (E->d_name[0] == '.')
      continue;
    std::ifstream Comm(std::string("/proc/self/task/") + E->d_name + "/comm");
    std::string Name;
    std::getline(Comm, Name);
    N += Name.compare(0, Prefix.size(), Prefix) == 0;
  }
  ::closedir(Dir);
  return N;
}

IOConfigTy smallConfig(unsigned Threads) {
  IOConfigTy C;
  C.Threads = Threads;
  C.ChunkSize = 4096;
  C.RingDepth = 2;
  C.Info = false;
  return C;
}

class IOWorkerPoolTest : public ::testing::Test {
protected:
  static constexpr unsigned NumDevices = 4, Threads = 3;
  static constexpr size_t FileSize = 1 << 20;

  void SetUp() override {
    char Name[] = "/tmp/oio-pool-XXXXXX";
    Fd = ::mkstemp(Name);
    ASSERT_GE(Fd, 0);
    ::unlink(Name);
    ASSERT_EQ(::ftruncate(Fd, FileSize), 0);
    Model.assign(FileSize, 0);
    // Staged (host cannot address the memory) and direct devices alike.
    for (unsigned D = 0; D < NumDevices; ++D)
      Devices.push_back(std::make_unique<FakeDeviceTy>(Plugin, D % 2 == 0));
    for (unsigned D = 0; D < NumDevices; ++D)
      Engines.push_back(std::make_unique<IOEngineTy>(
          Devices[D]->io(), Sys, nullptr, smallConfig(Threads), Pool));
  }
  void TearDown() override {
    Engines.clear();
    ::close(Fd);
  }

  FakePluginTy Plugin;
  SysTy Sys;
  IOWorkerPoolTy Pool{Threads};
  std::vector<std::unique_ptr<FakeDeviceTy>> Devices;
  std::vector<std::unique_ptr<IOEngineTy>> Engines;
  std::vector<char> Model;
  int Fd = -1;
};

TEST_F(IOWorkerPoolTest, RandomTransfersOnFourDevicesMatchTheModel) {
  std::mt19937_64 Rng(17);
  std::vector<char *> Buffers;
  for (auto &D : Devices)
    Buffers.push_back(D->alloc(64 << 10));
  for (unsigned Round = 0; Round < 40; ++Round) {
    // A batch of requests on random devices, in disjoint file ranges so
    // that their order does not matter; then wait for all of them.
    std::vector<std::unique_ptr<IORequestTy>> Pending;
    std::vector<std::pair<unsigned, std::pair<size_t, size_t>>> Reads;
    size_t Offset = Rng() % 4096;
    for (unsigned D = 0; D < NumDevices && Offset < FileSize; ++D) {
      unsigned Dev = unsigned(Rng() % NumDevices);
      size_t Count = std::min<size_t>(1 + Rng() % (60 << 10), FileSize - Offset);
      bool Write = Rng() % 2;
      // One request per device buffer and round.
      if (std::any_of(Reads.begin(), Reads.end(),
                      [&](auto &R) { return R.first == Dev; }))
        continue;
      char *Buf = Buffers[Dev];
      if (Write) {
        for (size_t I = 0; I < Count; ++I)
          Buf[I] = char(Rng());
        std::copy(Buf, Buf + Count, Model.begin() + Offset);
      }
      auto R = Engines[Dev]->submit(Write ? IORequestTy::Write
                                          : IORequestTy::Read,
                                    Fd, Buf, Count, off_t(Offset));
      ASSERT_TRUE(bool(R)) << llvm::toString(R.takeError());
      Pending.push_back(std::move(*R));
      Reads.push_back({Dev, {Write ? SIZE_MAX : Offset, Count}});
      Offset += Count + Rng() % 4096;
    }
    for (auto &R : Pending) {
      auto N = R->wait();
      ASSERT_TRUE(bool(N)) << llvm::toString(N.takeError());
    }
    for (auto &[Dev, Range] : Reads)
      if (Range.first != SIZE_MAX)
        ASSERT_TRUE(std::equal(Buffers[Dev], Buffers[Dev] + Range.second,
                               Model.begin() + Range.first))
            << "round " << Round << ", device " << Dev << ", offset "
            << Range.first;
  }
  // One pool for all four engines.
  EXPECT_TRUE(Pool.started());
  EXPECT_EQ(threadsNamed("oio-io-"), Threads);
  for (unsigned D = 0; D < NumDevices; ++D)
    Devices[D]->release(Buffers[D]);
}

TEST_F(IOWorkerPoolTest, AnEngineLeavesWhileTheOthersKeepTheWorkersBusy) {
  char *Buf0 = Devices[0]->alloc(FileSize);
  char *Buf1 = Devices[1]->alloc(FileSize);
  for (size_t I = 0; I < FileSize; ++I)
    Buf1[I] = char(I * 13);
  ASSERT_EQ(::pwrite(Fd, Buf1, FileSize, 0), ssize_t(FileSize));
  auto Long = Engines[1]->submit(IORequestTy::Read, Fd, Buf1, FileSize, 0);
  ASSERT_TRUE(bool(Long)) << llvm::toString(Long.takeError());
  auto Short = Engines[0]->submit(IORequestTy::Read, Fd, Buf0, 4096, 0);
  ASSERT_TRUE(bool(Short)) << llvm::toString(Short.takeError());
  ASSERT_TRUE(bool((*Short)->wait()));
  Short->reset();
  Devices[0]->release(Buf0);
  // Engine 0 goes while engine 1's request may still be served.
  Engines[0].reset();
  auto N = (*Long)->wait();
  ASSERT_TRUE(bool(N)) << llvm::toString(N.takeError());
  EXPECT_EQ(*N, FileSize);
  for (size_t I = 0; I < FileSize; ++I)
    ASSERT_EQ(Buf1[I], char(I * 13)) << "at " << I;
  Long->reset();
  Devices[1]->release(Buf1);
}

TEST_F(IOWorkerPoolTest, WorkersStartOnlyWithTheFirstTransfer) {
  EXPECT_FALSE(Pool.started());
  EXPECT_EQ(Pool.getNumStarted(), 0u);
  // A cap no larger than the share: four engines keep Threads workers.
  EXPECT_EQ(Pool.threadsFor(NumDevices), Threads);
  EXPECT_EQ(threadsNamed("oio-io-"), 0u);
}

TEST(IOWorkerPoolSizeTest, AtLeastOneWorker) {
  IOWorkerPoolTy Pool(0);
  EXPECT_EQ(Pool.getThreadsPerEngine(), 1u);
  EXPECT_EQ(Pool.threadsFor(0), 1u);
  EXPECT_EQ(Pool.threadsFor(3), 1u);
}

TEST(IOWorkerPoolSizeTest, GrowsWithTheEnginesUpToTheCap) {
  IOWorkerPoolTy Pool(2, 5);
  EXPECT_EQ(Pool.threadsFor(1), 2u);
  EXPECT_EQ(Pool.threadsFor(2), 4u);
  EXPECT_EQ(Pool.threadsFor(3), 5u);
  FakePluginTy Plugin;
  SysTy Sys;
  std::vector<std::unique_ptr<FakeDeviceTy>> Devices;
  std::vector<std::unique_ptr<IOEngineTy>> Engines;
  auto AddEngine = [&] {
    Devices.push_back(std::make_unique<FakeDeviceTy>(Plugin, true));
    Engines.push_back(std::make_unique<IOEngineTy>(
        Devices.back()->io(), Sys, nullptr, smallConfig(2), Pool));
  };
  // Engines attached before the first transfer start nothing.
  AddEngine();
  EXPECT_EQ(Pool.getNumStarted(), 0u);
  Pool.start();
  EXPECT_EQ(Pool.getNumStarted(), 2u);
  AddEngine();
  EXPECT_EQ(Pool.getNumStarted(), 4u);
  AddEngine();
  AddEngine();
  EXPECT_EQ(Pool.getNumStarted(), 5u);
  EXPECT_EQ(threadsNamed("oio-io-"), 5u);
  // Engines that go leave the workers to the others.
  Engines.pop_back();
  EXPECT_EQ(Pool.getNumStarted(), 5u);
  Engines.clear();
}

} // namespace

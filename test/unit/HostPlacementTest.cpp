// SPDX-License-Identifier: Apache-2.0
//
// Host threads placed near their device (ThreadAffinity.h): a thread moves
// to a device's CPUs once and back to its own mask for a device without a
// placement, failures end a device's placement with one info line, and
// the file workers serving a fake device that a fake sysfs puts on node 1
// (node 0: CPU 0, node 1: CPU 1) run on CPU 1 while they read for it, and
// on the whole mask for a device without a PCI address.
#include "FakeDevice.h"
#include "FakeSysfs.h"

#include "offloadio/HostTopology.h"
#include "offloadio/ThreadAffinity.h"
#include "offloadio/io/IOEngine.h"
#include "offloadio/io/IOWorkerPool.h"

#include "gtest/gtest.h"

#include <fcntl.h>
#include <fstream>
#include <mutex>
#include <set>
#include <unistd.h>

using namespace offloadio;
using namespace offloadio::unittest;

namespace {

/// Records the affinity calls; set calls fail with SetErrno when nonzero.
class RecordingAffinityTy final : public AffinitySysTy {
public:
  int getThreadAffinity(CpuSetTy &Cpus) override {
    ++Gets;
    Cpus = Own;
    return 0;
  }
  int setThreadAffinity(const CpuSetTy &Cpus) override {
    std::lock_guard<std::mutex> Guard(Lock);
    Sets.push_back(Cpus.str());
    return SetErrno;
  }
  std::vector<std::string> takeSets() {
    std::lock_guard<std::mutex> Guard(Lock);
    return std::move(Sets);
  }

  CpuSetTy Own{{0, 1, 2, 3}};
  int SetErrno = 0;
  std::atomic<unsigned> Gets{0};

private:
  std::mutex Lock;
  std::vector<std::string> Sets;
};

CpuPlacementTy placedOn(int Node, std::vector<unsigned> Cpus) {
  CpuPlacementTy P;
  P.Node = Node;
  P.Cpus = CpuSetTy(std::move(Cpus));
  return P;
}

TEST(ThreadPlacementTest, MovesOnlyWhenTheCpusChange) {
  RecordingAffinityTy Sys;
  DevicePlacementTy A, B, None;
  A.set(placedOn(1, {2, 3}), nullptr, 0);
  B.set(placedOn(0, {0, 1}), nullptr, 1);
  None.set(CpuPlacementTy::none("not a PCI device"), nullptr, 2);
  ThreadPlacementTy Thread(Sys);
  // Nothing to undo before the first move.
  Thread.enter(&None);
  Thread.enter(nullptr);
  EXPECT_TRUE(Sys.takeSets().empty());
  EXPECT_EQ(Sys.Gets, 0u);
  Thread.enter(&A);
  Thread.enter(&A);
  EXPECT_EQ(Sys.takeSets(), std::vector<std::string>{"2-3"});
  EXPECT_EQ(Sys.Gets, 1u);
  Thread.enter(&B);
  Thread.enter(&None);
  Thread.enter(nullptr);
  Thread.enter(&A);
  EXPECT_EQ(Sys.takeSets(), (std::vector<std::string>{"0-1", "0-3", "2-3"}));
  // The thread's own mask was read once, before its first move.
  EXPECT_EQ(Sys.Gets, 1u);
}

TEST(ThreadPlacementTest, AFailureIsReportedOnceAndEndsThePlacement) {
  RecordingAffinityTy Sys;
  Sys.SetErrno = EPERM;
  InfoTy Info("fake", 0, ~0u);
  DevicePlacementTy A;
  A.set(placedOn(1, {1}), &Info, 3);
  ThreadPlacementTy First(Sys), Second(Sys);
  ::testing::internal::CaptureStderr();
  First.enter(&A);
  Second.enter(&A);
  First.enter(&A);
  std::string Err = ::testing::internal::GetCapturedStderr();
  // One call: the placement stopped with it.
  EXPECT_EQ(Sys.takeSets(), std::vector<std::string>{"1"});
  EXPECT_TRUE(A.stopped());
  EXPECT_EQ(A.cpus(), nullptr);
  EXPECT_NE(Err.find("host threads no longer placed near the device (node "
                     "1, CPUs 1): sched_setaffinity(1) failed: " +
                     std::string(std::strerror(EPERM))),
            std::string::npos)
      << Err;
  EXPECT_EQ(Err.find("no longer placed"), Err.rfind("no longer placed"))
      << Err;
  // The line names the device.
  EXPECT_NE(Err.find("3"), std::string::npos) << Err;
}

/// The calling thread's CPUs as the kernel shows them
/// (/proc/thread-self/status), independently of the code under test.
std::string cpusAllowedList() {
  std::ifstream Status("/proc/thread-self/status");
  std::string Line;
  while (std::getline(Status, Line))
    if (Line.rfind("Cpus_allowed_list:", 0) == 0)
      return llvm::StringRef(Line).drop_front(18).trim().str();
  return "?";
}

/// Records the CPUs of each thread that reads.
class CpuRecordingSysTy final : public SysTy {
public:
  ssize_t pread(int Fd, void *Buf, size_t Count, off_t Offset) override {
    record();
    return SysTy::pread(Fd, Buf, Count, Offset);
  }
  ssize_t preadv(int Fd, const struct iovec *Iov, int IovCount,
                 off_t Offset) override {
    record();
    return SysTy::preadv(Fd, Iov, IovCount, Offset);
  }
  std::set<std::string> take() {
    std::lock_guard<std::mutex> Guard(Lock);
    return std::move(Seen);
  }

private:
  void record() {
    std::string Cpus = cpusAllowedList();
    std::lock_guard<std::mutex> Guard(Lock);
    Seen.insert(Cpus);
  }
  std::mutex Lock;
  std::set<std::string> Seen;
};

/// A fake device that says it is the PCI device at \p Address ("": none).
class PCIFakeDeviceTy final : public FakeDeviceTy {
public:
  PCIFakeDeviceTy(GenericPluginTy &Plugin, std::string Address)
      : FakeDeviceTy(Plugin, /*HostAddressable=*/false),
        Address(std::move(Address)) {}

protected:
  Expected<std::string> getPCIAddressImpl() override { return Address; }

private:
  std::string Address;
};

class WorkerPlacementTest : public ::testing::Test {
protected:
  void SetUp() override {
    CpuSetTy Mask;
    ASSERT_EQ(AffinitySysTy().getThreadAffinity(Mask), 0);
    if (!Mask.contains(0) || !Mask.contains(1))
      GTEST_SKIP() << "needs CPUs 0 and 1 in the mask, has " << Mask.str();
    ProcessCpus = Mask.str();
    Sysfs.node(0, "0");
    Sysfs.node(1, "1");
    Sysfs.device("0000:3b:00.0", "1", "1");
    Plugin.setHostTopology(HostTopologyTy(Sysfs.root()));
    Near = std::make_unique<PCIFakeDeviceTy>(Plugin, "3B:00.0");
    Far = std::make_unique<PCIFakeDeviceTy>(Plugin, "");
    ASSERT_FALSE(bool(Near->init()));
    ASSERT_FALSE(bool(Far->init()));
    char Name[] = "/tmp/oio-place-XXXXXX";
    Fd = ::mkstemp(Name);
    ASSERT_GE(Fd, 0);
    ::unlink(Name);
    ASSERT_EQ(::ftruncate(Fd, 1 << 20), 0);
  }
  void TearDown() override {
    if (Fd >= 0)
      ::close(Fd);
    if (Near)
      EXPECT_FALSE(bool(Near->deinit()));
    if (Far)
      EXPECT_FALSE(bool(Far->deinit()));
  }

  /// Read 256 KiB into \p Device through \p Engine, in 4 KiB chunks.
  void readInto(FakeDeviceTy &Device, IOEngineTy &Engine) {
    char *Buf = Device.alloc(256 << 10);
    auto R = Engine.submit(IORequestTy::Read, Fd, Buf, 256 << 10, 0);
    ASSERT_TRUE(bool(R)) << llvm::toString(R.takeError());
    auto N = (*R)->wait();
    ASSERT_TRUE(bool(N)) << llvm::toString(N.takeError());
    EXPECT_EQ(*N, size_t(256 << 10));
    R->reset();
    Device.release(Buf);
  }

  static IOConfigTy config() {
    IOConfigTy C;
    C.Threads = 1;
    C.ChunkSize = 4096;
    C.RingDepth = 2;
    C.Info = false;
    return C;
  }

  FakeSysfsTy Sysfs;
  FakePluginTy Plugin;
  std::unique_ptr<PCIFakeDeviceTy> Near, Far;
  std::string ProcessCpus;
  int Fd = -1;
};

TEST_F(WorkerPlacementTest, TheDeviceOnNodeOneGetsCpuOne) {
  EXPECT_EQ(Near->getHostPlacement().get().describe(), "node 1, CPUs 1");
  EXPECT_EQ(Far->getHostPlacement().get().describe(),
            "none: the fake plugin's devices are not PCI devices");
  std::string Printed;
  llvm::raw_string_ostream OS(Printed);
  Near->printInfo(OS);
  EXPECT_NE(OS.str().find("Host placement:"), std::string::npos);
  EXPECT_NE(OS.str().find("node 1, CPUs 1\n"), std::string::npos) << Printed;
}

TEST_F(WorkerPlacementTest, OneWorkerMovesBetweenTheDevicesCpus) {
  CpuRecordingSysTy Sys;
  // One worker serves both engines: it moves to CPU 1 and back.
  IOWorkerPoolTy Pool(1, 1);
  IOEngineTy NearEngine(Near->io(), Sys, nullptr, config(), Pool);
  IOEngineTy FarEngine(Far->io(), Sys, nullptr, config(), Pool);
  for (int Round = 0; Round < 2; ++Round) {
    readInto(*Near, NearEngine);
    EXPECT_EQ(Sys.take(), std::set<std::string>{"1"}) << "round " << Round;
    readInto(*Far, FarEngine);
    EXPECT_EQ(Sys.take(), std::set<std::string>{ProcessCpus})
        << "round " << Round;
  }
  // The test's own thread stays where it was.
  EXPECT_EQ(cpusAllowedList(), ProcessCpus);
}

TEST_F(WorkerPlacementTest, PlacementOffLeavesTheWorkersAlone) {
  ::setenv("OFFLOADIO_NUMA_PLACEMENT", "off", 1);
  FakePluginTy OffPlugin;
  ::unsetenv("OFFLOADIO_NUMA_PLACEMENT");
  OffPlugin.setHostTopology(HostTopologyTy(Sysfs.root()));
  PCIFakeDeviceTy Device(OffPlugin, "0000:3b:00.0");
  ASSERT_FALSE(bool(Device.init()));
  EXPECT_EQ(Device.getHostPlacement().get().describe(),
            "none: OFFLOADIO_NUMA_PLACEMENT is off");
  CpuRecordingSysTy Sys;
  IOWorkerPoolTy Pool(1, 1);
  {
    IOEngineTy Engine(Device.io(), Sys, nullptr, config(), Pool);
    readInto(Device, Engine);
  }
  EXPECT_EQ(Sys.take(), std::set<std::string>{ProcessCpus});
  EXPECT_FALSE(bool(Device.deinit()));
}

TEST_F(WorkerPlacementTest, AFailedMoveLeavesTheTransfersWhole) {
  RecordingAffinityTy Affinity;
  Affinity.SetErrno = EINVAL;
  CpuRecordingSysTy Sys;
  IOWorkerPoolTy Pool(1, 1, &Affinity);
  IOEngineTy Engine(Near->io(), Sys, nullptr, config(), Pool);
  for (int Round = 0; Round < 3; ++Round)
    readInto(*Near, Engine);
  EXPECT_EQ(Affinity.takeSets(), std::vector<std::string>{"1"});
  EXPECT_TRUE(Near->getHostPlacement().stopped());
  EXPECT_EQ(Sys.take(), std::set<std::string>{ProcessCpus});
}

} // namespace

// SPDX-License-Identifier: Apache-2.0
//
// The fixture of the IOEngineTy tests (IOEngine*Test.cpp, one topic each),
// which drive the engine directly: a fake device whose memory is host memory
// it tracks (so findAllocation works) with the host backend's streams and
// events, the file in memory of FakeSys.h (which injects EINTR, short
// counts, EIO, ENOSPC, zero-length writes and truncation), and the fake
// fastpath of FakeFastpath.h. Requests run with small chunks and rings so
// that they span many chunks and rings wrap.
#ifndef OFFLOADIO_TEST_UNIT_IOENGINEFIXTURE_H
#define OFFLOADIO_TEST_UNIT_IOENGINEFIXTURE_H

#include "FakeDevice.h"
#include "FakeFastpath.h"
#include "FakeSys.h"
#include "FilePattern.h"

#include "offloadio/Device.h"
#include "offloadio/Plugin.h"
#include "offloadio/io/IOEngine.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace offloadio::unittest {

/// Small chunks and rings: every request spans several chunks.
inline IOConfigTy smallConfig(int Path, unsigned Threads = 4,
                              size_t Chunk = 4096, unsigned Ring = 2) {
  IOConfigTy C;
  C.Threads = Threads;
  C.ChunkSize = Chunk;
  C.RingDepth = Ring;
  C.ForcedPath = Path;
  C.Info = false;
  return C;
}

/// O_DIRECT middles in chunks of 16 KiB; everything else in chunks of 4 KiB,
/// so that staging rings grow when a request with an O_DIRECT middle comes.
inline IOConfigTy directConfig(int Path, IODirectPolicyTy Policy) {
  IOConfigTy C = smallConfig(Path, 4, 4096);
  C.DirectChunkSize = 16384;
  C.ODirect = Policy;
  return C;
}

/// The fake device, the file in memory behind a /dev/null descriptor (Fd),
/// and the engine that engine() makes.
class IOEngineTest : public ::testing::Test {
protected:
  void SetUp() override {
    Fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    ASSERT_GE(Fd, 0);
  }
  void TearDown() override {
    Engine.reset();
    ::close(Fd);
  }

  /// (Re)create the device's engine.
  IOEngineTy &engine(IOConfigTy Config, IOFastpathTy *Fastpath = nullptr,
                     bool HostAddressable = true) {
    Engine.reset();
    if (!Device ||
        Device->getLimits().HostCanAccessDeviceMemory != HostAddressable)
      Device = std::make_unique<FakeDeviceTy>(Plugin, HostAddressable);
    Engine = std::make_unique<IOEngineTy>(Device->io(), Sys, Fastpath, Config);
    return *Engine;
  }

  Expected<size_t> transfer(IORequestTy::OpTy Op, void *Buf, size_t Count,
                            off_t Offset) {
    auto R = Engine->submit(Op, Fd, Buf, Count, Offset);
    if (!R)
      return R.takeError();
    return (*R)->wait();
  }
  Expected<size_t> read(void *Buf, size_t Count, off_t Offset) {
    return transfer(IORequestTy::Read, Buf, Count, Offset);
  }
  Expected<size_t> write(void *Buf, size_t Count, off_t Offset) {
    return transfer(IORequestTy::Write, Buf, Count, Offset);
  }

  /// A file of \p Size pattern bytes.
  void makeFile(size_t Size, unsigned Seed = 1) {
    std::vector<char> F(Size);
    for (size_t I = 0; I < Size; ++I)
      F[I] = pat(I, Seed);
    Sys.setFile(std::move(F));
  }

  FakePluginTy Plugin;
  std::unique_ptr<FakeDeviceTy> Device;
  MemoryFileSysTy Sys;
  std::unique_ptr<IOEngineTy> Engine;
  int Fd = -1;
};

/// The errno of a failed operation, 0 if it succeeded.
inline int errnoOf(Error E) { return takeErrorDetails(std::move(E)).Errno; }
template <typename T> int errnoOf(Expected<T> V) {
  return V ? 0 : errnoOf(V.takeError());
}

/// Tests run once per path the engine can be forced to.
class IOEnginePathTest : public IOEngineTest,
                         public ::testing::WithParamInterface<IOPathTy> {
protected:
  int path() const { return int(GetParam()); }
};

/// Test names after the path.
inline std::string pathName(const ::testing::TestParamInfo<IOPathTy> &Info) {
  return ioPathName(Info.param);
}

/// One call the fake file system saw.
using CallTy = MemoryFileSysTy::CallTy;

} // namespace offloadio::unittest

#endif // OFFLOADIO_TEST_UNIT_IOENGINEFIXTURE_H

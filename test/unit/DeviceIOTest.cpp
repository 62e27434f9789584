// SPDX-License-Identifier: Apache-2.0
//
// DeviceIOTy, the file service the plugin installs in each device: its
// engine is built on first use, once, and again after stop(); a free of the
// device's memory waits through the service for the transfers that use it,
// and a device without a service frees at once.
#include "FakeDevice.h"

#include "offloadio/io/IOEngine.h"

#include "gtest/gtest.h"

#include <atomic>
#include <chrono>
#include <thread>

using namespace offloadio;
using namespace offloadio::unittest;

namespace {

TEST(DeviceIOTest, EngineIsBuiltOnceAndAgainAfterStop) {
  FakePluginTy Plugin;
  FakeDeviceTy Device(Plugin, /*HostAddressable=*/true);
  ASSERT_FALSE(bool(Device.init()));
  DeviceIOTy IO(Device, Plugin.getSys(),
                [&](const IOConfigTy &Config) -> IOWorkerPoolTy & {
                  return Plugin.getIOWorkers(Config);
                });
  auto First = IO.getEngine();
  ASSERT_TRUE(bool(First)) << llvm::toString(First.takeError());
  auto Again = IO.getEngine();
  ASSERT_TRUE(bool(Again)) << llvm::toString(Again.takeError());
  EXPECT_EQ(&*First, &*Again);
  IO.stop();
  auto After = IO.getEngine();
  ASSERT_TRUE(bool(After)) << llvm::toString(After.takeError());
  IO.stop();
  EXPECT_FALSE(bool(Device.deinit()));
}

TEST(DeviceIOTest, FreeWaitsThroughTheServiceForMemoryInUse) {
  FakePluginTy Plugin;
  FakeDeviceTy Device(Plugin, /*HostAddressable=*/true);
  ASSERT_FALSE(bool(Device.init()));
  char *Buf = Device.alloc(4096);
  std::atomic<bool> Started{false}, Freed{false};
  std::thread Free;
  {
    IOBusyMarkTy Mark(Device.getIOBusyMemory(), Buf + 100, 10);
    Free = std::thread([&] {
      Started = true;
      Device.release(Buf);
      Freed = true;
    });
    while (!Started)
      std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_FALSE(Freed.load()) << "the free did not wait for the marking";
  }
  Free.join();
  EXPECT_TRUE(Freed.load());
  EXPECT_FALSE(bool(Device.deinit()));
}

TEST(DeviceIOTest, DeviceWithoutServiceFreesAtOnce) {
  FakePluginTy Plugin;
  FakeDeviceTy Device(Plugin, /*HostAddressable=*/true);
  ASSERT_FALSE(bool(Device.init()));
  Device.setIOService(nullptr);
  char *Buf = Device.alloc(4096);
  IOBusyMarkTy Mark(Device.getIOBusyMemory(), Buf, 4096);
  Device.release(Buf);
  EXPECT_FALSE(bool(Device.deinit()));
}

} // namespace

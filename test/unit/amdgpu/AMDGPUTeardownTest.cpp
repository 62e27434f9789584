// SPDX-License-Identifier: Apache-2.0
//
// The amdgpu plugin on the HSA emulation after hsa_shut_down took the
// runtime down (the plugin's hsa_init was the only one): every call then
// answers HSA_STATUS_ERROR_NOT_INITIALIZED, as ROCr's do. A normal call
// fails with ErrorCode::DriverShutDown and says the runtime was shut down;
// the plugin's flush and each device's deinit print nothing and succeed.
#include "HSAEmuFixture.h"
#include "offloadio/Plugin.h"

#include "gtest/gtest.h"

#include <hsa/hsa.h>

#include <cstdlib>
#include <string>
#include <vector>

using namespace offloadio;

namespace {

// The emulation reads its settings at the first hsa_init of the process.
[[maybe_unused]] const bool EnvSet =
    (offloadio::test::setEmuEnv("abort"), true);

TEST(AMDGPUTeardownTest, AfterHsaShutDown) {
  std::unique_ptr<GenericPluginTy> Plugin = createPlugin();
  ASSERT_FALSE(bool(Plugin->init()));
  ASSERT_EQ(Plugin->getNumDevices(), 2);
  std::vector<GenericDeviceTy *> Devices;
  for (int32_t Id : {0, 1}) {
    Error Err = Plugin->initDevice(Id);
    ASSERT_FALSE(bool(Err)) << takeErrorMessage(std::move(Err));
    auto Device = Plugin->getDevice(Id);
    ASSERT_TRUE(bool(Device)) << takeErrorMessage(Device.takeError());
    Devices.push_back(&*Device);
  }
  GenericDeviceTy &Device = *Devices[0];

  // Work of every kind: device memory, a block the memory manager keeps,
  // staged copies in both directions, streams used.
  auto Big = Device.dataAlloc(1 << 20, nullptr, AllocKindTy::Device);
  ASSERT_TRUE(bool(Big)) << takeErrorMessage(Big.takeError());
  auto Small = Device.dataAlloc(256, nullptr, AllocKindTy::Device);
  ASSERT_TRUE(bool(Small)) << takeErrorMessage(Small.takeError());
  ASSERT_FALSE(bool(Device.dataDelete(*Small, AllocKindTy::Device)));
  std::vector<char> Host(256 << 10, 'x'), Back(Host.size());
  ASSERT_FALSE(bool(
      Device.dataSubmit(*Big, Host.data(), int64_t(Host.size()), nullptr)));
  ASSERT_FALSE(bool(
      Device.dataRetrieve(Back.data(), *Big, int64_t(Back.size()), nullptr)));
  ASSERT_EQ(Back, Host);

  // The runtime goes, as when the program (or another library) calls
  // hsa_shut_down before its exit.
  ASSERT_EQ(hsa_shut_down(), HSA_STATUS_SUCCESS);

  // A normal call fails, saying why.
  auto Refused = Device.dataAlloc(1 << 20, nullptr, AllocKindTy::Device);
  ASSERT_FALSE(bool(Refused));
  ErrorDetailsTy D = takeErrorDetails(Refused.takeError());
  EXPECT_EQ(D.Code, ErrorCode::DriverShutDown);
  EXPECT_NE(D.Message.find("HSA_STATUS_ERROR_NOT_INITIALIZED"),
            std::string::npos)
      << D.Message;
  EXPECT_NE(D.Message.find("the HSA runtime was shut down"),
            std::string::npos)
      << D.Message;
  EXPECT_EQ(errnoFor(D), ENODEV);
  Error Copy =
      Device.dataSubmit(*Big, Host.data(), int64_t(Host.size()), nullptr);
  ASSERT_TRUE(bool(Copy));
  std::string Message = takeErrorMessage(std::move(Copy));
  EXPECT_NE(Message.find("shut down"), std::string::npos) << Message;

  // Teardown is quiet and successful: libomptarget's deinit_plugin (the
  // plugin's flush), then each device's deinit.
  testing::internal::CaptureStderr();
  Error Flushed = Plugin->flush();
  Error Deinit0 = Devices[0]->deinit();
  Error Deinit1 = Devices[1]->deinit();
  std::string Printed = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(bool(Flushed)) << takeErrorMessage(std::move(Flushed));
  EXPECT_FALSE(bool(Deinit0)) << takeErrorMessage(std::move(Deinit0));
  EXPECT_FALSE(bool(Deinit1)) << takeErrorMessage(std::move(Deinit1));
  EXPECT_EQ(Printed, "");
  // As in a process, the plugin is never destroyed (CApi.cpp, which keeps
  // it in a static as this does, so that it is not a leak): the devices'
  // destructors would free memory through the plugin's HSA context, which
  // the plugin destroys before them.
  static GenericPluginTy *Kept = Plugin.release();
  (void)Kept;
}

} // namespace

// SPDX-License-Identifier: Apache-2.0
//
// InfoTy: the lines that mirror the stock plugins' print under the
// LIBOMPTARGET_INFO mask, with the stock prefix and nothing of ours;
// offload-io's own lines print under the OFFLOADIO_INFO mask, with ours;
// set_info_flag (setStockFlags) changes the stock mask alone; errors print
// whatever the masks say.
#include "offloadio/Info.h"
#include "offloadio/MessagePrefix.h"

#include "gtest/gtest.h"

#include <string>

using namespace offloadio;

namespace {

/// What \p Fn writes to stderr.
template <typename FnTy> std::string stderrOf(FnTy Fn) {
  ::testing::internal::CaptureStderr();
  Fn();
  return ::testing::internal::GetCapturedStderr();
}

/// The stock launch line, as GenericKernelTy::launch prints it.
void printLaunch(const InfoTy &Info, int32_t DeviceId) {
  Info.printStock(InfoPluginKernel, DeviceId,
                  "Launching kernel {0} with {1} blocks and {2} threads in {3} "
                  "mode",
                  "__omp_offloading_fd00_1_main_l8", uint64_t(1), 1u,
                  "Generic");
}

TEST(InfoTest, StockLinesFollowTheStockMaskWithTheStockText) {
  InfoTy Info("x86_64", InfoPluginKernel, 0);
  EXPECT_TRUE(Info.stockEnabled(InfoPluginKernel));
  EXPECT_FALSE(Info.stockEnabled(InfoDataTransfer));
  EXPECT_FALSE(Info.any());
  EXPECT_EQ(stderrOf([&] { printLaunch(Info, 2); }),
            "\"PluginInterface\" device 2 info: Launching kernel "
            "__omp_offloading_fd00_1_main_l8 with 1 blocks and 1 threads in "
            "Generic mode\n");
  // Another stock bit, and every own line: nothing.
  EXPECT_EQ(stderrOf([&] {
              Info.printStock(InfoDataTransfer, 0, "Copying data");
              Info.print(InfoPluginKernel, 0, "launch kernel k");
              Info.print(~0u, -1, "{0} devices", 4);
            }),
            "");
}

TEST(InfoTest, OwnLinesFollowTheOwnMaskWithOurPrefix) {
  InfoTy Info("x86_64", 0, InfoDataTransfer);
  EXPECT_TRUE(Info.any());
  EXPECT_TRUE(Info.enabled(InfoDataTransfer));
  EXPECT_FALSE(Info.enabled(InfoPluginKernel));
  EXPECT_FALSE(Info.stockEnabled(~0u));
  EXPECT_EQ(
      stderrOf([&] { Info.print(InfoDataTransfer, 0, "submit {0} bytes", 8); }),
      linePrefix("x86_64", 0) + ": submit 8 bytes\n");
  // Any bit asks for the plugin-wide lines.
  EXPECT_EQ(stderrOf([&] { Info.print(~0u, -1, "{0} devices", 4); }),
            linePrefix("x86_64") + ": 4 devices\n");
  EXPECT_EQ(stderrOf([&] {
              printLaunch(Info, 0);
              Info.print(InfoPluginKernel, 0, "launch kernel k");
            }),
            "");
}

TEST(InfoTest, SetInfoFlagChangesTheStockMaskOnly) {
  InfoTy Info("amdgpu", ~0u, 0);
  Info.setStockFlags(0);
  EXPECT_EQ(stderrOf([&] { printLaunch(Info, 0); }), "");
  Info.setStockFlags(InfoPluginKernel);
  EXPECT_NE(stderrOf([&] { printLaunch(Info, 0); }), "");
  EXPECT_FALSE(Info.any());
  EXPECT_EQ(stderrOf([&] { Info.print(~0u, 0, "own"); }), "");

  InfoTy Own("amdgpu", 0, ~0u);
  Own.setStockFlags(0);
  EXPECT_TRUE(Own.enabled(InfoPluginKernel));
}

TEST(InfoTest, ErrorsPrintWhateverTheMasks) {
  InfoTy Info("cuda", 0, 0);
  EXPECT_EQ(stderrOf([&] { Info.error(1, "boom"); }),
            linePrefix("cuda", 1) + ": error: boom\n");
}

} // namespace

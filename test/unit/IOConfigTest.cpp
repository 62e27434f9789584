// SPDX-License-Identifier: Apache-2.0
//
// IOConfigTy::fromEnv: the file engine's settings from the environment,
// their defaults, and invalid values that warn and keep the default.
#include "offloadio/io/IOConfig.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <thread>

using namespace offloadio;

namespace {

TEST(IOConfigTest, FromEnvDefaultsAndValidValues) {
  for (const char *V :
       {"OMPX_IO_THREADS", "OMPX_IO_CHUNK_SIZE", "OMPX_IO_DIRECT_CHUNK_SIZE",
        "OMPX_IO_RING_DEPTH", "OMPX_IO_PATH", "OMPX_IO_INFO",
        "OMPX_IO_ODIRECT"})
    unsetenv(V);
  IOConfigTy C = IOConfigTy::fromEnv();
  unsigned Cores = std::max(1u, std::thread::hardware_concurrency());
  EXPECT_EQ(C.Threads, std::min(16u, Cores));
  EXPECT_EQ(C.ChunkSize, size_t(2) << 20);
  EXPECT_EQ(C.DirectChunkSize, size_t(32) << 20);
  EXPECT_EQ(C.RingDepth, 2u);
  EXPECT_EQ(C.ForcedPath, -1);
  EXPECT_FALSE(C.Info);
  EXPECT_EQ(C.ODirect, IODirectPolicyTy::Auto);
  setenv("OMPX_IO_THREADS", "16", 1);
  setenv("OMPX_IO_CHUNK_SIZE", "64K", 1);
  setenv("OMPX_IO_DIRECT_CHUNK_SIZE", "2M", 1);
  setenv("OMPX_IO_RING_DEPTH", "5", 1);
  setenv("OMPX_IO_PATH", "Staged", 1);
  setenv("OMPX_IO_INFO", "1", 1);
  setenv("OMPX_IO_ODIRECT", "On", 1);
  C = IOConfigTy::fromEnv();
  EXPECT_EQ(C.Threads, 16u);
  EXPECT_EQ(C.ChunkSize, size_t(64) << 10);
  EXPECT_EQ(C.DirectChunkSize, size_t(2) << 20);
  EXPECT_EQ(C.RingDepth, 5u);
  EXPECT_EQ(C.ForcedPath, int(IOPathTy::Staged));
  EXPECT_TRUE(C.Info);
  EXPECT_EQ(C.ODirect, IODirectPolicyTy::On);
  setenv("OMPX_IO_ODIRECT", "off", 1);
  EXPECT_EQ(IOConfigTy::fromEnv().ODirect, IODirectPolicyTy::Off);
  for (const char *V :
       {"OMPX_IO_THREADS", "OMPX_IO_CHUNK_SIZE", "OMPX_IO_DIRECT_CHUNK_SIZE",
        "OMPX_IO_RING_DEPTH", "OMPX_IO_PATH", "OMPX_IO_INFO",
        "OMPX_IO_ODIRECT"})
    unsetenv(V);
}

TEST(IOConfigTest, InvalidValuesWarnAndUseTheDefault) {
  setenv("OMPX_IO_THREADS", "0", 1);
  setenv("OMPX_IO_CHUNK_SIZE", "1000", 1);
  setenv("OMPX_IO_RING_DEPTH", "many", 1);
  setenv("OMPX_IO_PATH", "sideways", 1);
  setenv("OMPX_IO_ODIRECT", "bogus", 1);
  ::testing::internal::CaptureStderr();
  IOConfigTy C = IOConfigTy::fromEnv();
  std::string Err = ::testing::internal::GetCapturedStderr();
  unsigned Cores = std::max(1u, std::thread::hardware_concurrency());
  EXPECT_EQ(C.Threads, std::min(16u, Cores));
  EXPECT_EQ(C.ChunkSize, size_t(2) << 20);
  EXPECT_EQ(C.RingDepth, 2u);
  EXPECT_EQ(C.ForcedPath, -1);
  EXPECT_EQ(C.ODirect, IODirectPolicyTy::Auto);
  for (const char *W :
       {"ignoring OMPX_IO_THREADS='0'", "ignoring OMPX_IO_CHUNK_SIZE='1000'",
        "ignoring OMPX_IO_RING_DEPTH='many'",
        "ignoring OMPX_IO_PATH='sideways'",
        "ignoring OMPX_IO_ODIRECT='bogus': expected one of auto, on, off; "
        "using auto"})
    EXPECT_NE(Err.find(W), std::string::npos) << W << "\n" << Err;
  for (const char *V :
       {"OMPX_IO_THREADS", "OMPX_IO_CHUNK_SIZE", "OMPX_IO_RING_DEPTH",
        "OMPX_IO_PATH", "OMPX_IO_ODIRECT"})
    unsetenv(V);
}

} // namespace

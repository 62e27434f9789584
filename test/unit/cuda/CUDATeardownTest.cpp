// SPDX-License-Identifier: Apache-2.0
//
// The CUDA plugin after the driver has shut down, against a fake driver
// table: once the fake is down every call answers CUDA_ERROR_DEINITIALIZED
// (4), as the real driver does at a Python interpreter's exit, and so do
// cuGetErrorName and cuGetErrorString. The result is named all the same,
// maps to ErrorCode::DriverShutDown with a message that says the driver was
// shut down, and a teardown of sixteen streams (TeardownTy, as the
// framework's drain) asks the dead driver once and succeeds quietly.
#include "CUDAApi.h"
#include "CUDAHostRegistry.h"
#include "CUDAStream.h"

#include "offloadio/Teardown.h"

#include "gtest/gtest.h"

#include <memory>
#include <vector>

using namespace offloadio;
using namespace offloadio::cuda;

namespace {

/// The fake driver's state, reached from the table's plain functions.
struct FakeDriverTy {
  bool Down = false;
  unsigned CallsWhileDown = 0;
  uintptr_t NextStream = 0x100;
};

FakeDriverTy *Driver = nullptr;

/// The answer of every call once the driver is down, counted.
bool refused(CUresult &Result) {
  if (!Driver->Down)
    return false;
  ++Driver->CallsWhileDown;
  Result = CUDA_ERROR_DEINITIALIZED;
  return true;
}

CUresult fakeGetErrorName(CUresult, const char **Name) {
  CUresult Result = CUDA_SUCCESS;
  if (refused(Result))
    return Result;
  *Name = "FAKE_NAME";
  return CUDA_SUCCESS;
}
CUresult fakeGetErrorString(CUresult, const char **Text) {
  CUresult Result = CUDA_SUCCESS;
  if (refused(Result))
    return Result;
  *Text = "fake description";
  return CUDA_SUCCESS;
}
CUresult fakeCtxSetCurrent(CUcontext) {
  CUresult Result = CUDA_SUCCESS;
  refused(Result);
  return Result;
}
CUresult fakeStreamCreate(CUstream *Stream, unsigned) {
  CUresult Result = CUDA_SUCCESS;
  if (refused(Result))
    return Result;
  *Stream = reinterpret_cast<CUstream>(Driver->NextStream++);
  return CUDA_SUCCESS;
}
CUresult fakeStreamDestroy(CUstream) {
  CUresult Result = CUDA_SUCCESS;
  refused(Result);
  return Result;
}
CUresult fakeStreamQuery(CUstream) {
  CUresult Result = CUDA_SUCCESS;
  refused(Result);
  return Result;
}
CUresult fakeStreamSynchronize(CUstream) {
  CUresult Result = CUDA_SUCCESS;
  refused(Result);
  return Result;
}

class CUDATeardownTest : public ::testing::Test {
protected:
  void SetUp() override {
    Driver = &State;
    Api.cuGetErrorName = fakeGetErrorName;
    Api.cuGetErrorString = fakeGetErrorString;
    Api.cuCtxSetCurrent = fakeCtxSetCurrent;
    Api.cuStreamCreate = fakeStreamCreate;
    Api.cuStreamDestroy = fakeStreamDestroy;
    Api.cuStreamQuery = fakeStreamQuery;
    Api.cuStreamSynchronize = fakeStreamSynchronize;
  }
  void TearDown() override { Driver = nullptr; }

  std::unique_ptr<CUDAStreamTy> makeStream() {
    auto Stream = CUDAStreamTy::create(Api, Registry, Context, /*DeviceId=*/0,
                                       CUDAStreamOptionsTy());
    EXPECT_TRUE(bool(Stream)) << takeErrorMessage(Stream.takeError());
    return Stream ? std::move(*Stream) : nullptr;
  }

  FakeDriverTy State;
  CUDAApiTy Api;
  CUDAHostRegistryTy Registry{Api, 4096};
  CUcontext Context = reinterpret_cast<CUcontext>(0xc0);
};

TEST_F(CUDATeardownTest, ResultsAreNamedWhenTheDriverCannot) {
  State.Down = true;
  EXPECT_EQ(Api.errorName(CUDA_ERROR_DEINITIALIZED), "CUDA_ERROR_DEINITIALIZED");
  EXPECT_EQ(Api.errorString(CUDA_ERROR_DEINITIALIZED), "driver shutting down");
  EXPECT_EQ(Api.errorName(CUDA_ERROR_OUT_OF_MEMORY), "CUDA_ERROR_OUT_OF_MEMORY");
  // A result the plugin does not know keeps its number.
  EXPECT_EQ(Api.errorName(CUresult(9999)), "CUresult 9999");
  EXPECT_EQ(Api.errorString(CUresult(9999)), "unknown error");
  // The driver's own names come first while it answers.
  State.Down = false;
  EXPECT_EQ(Api.errorName(CUDA_ERROR_DEINITIALIZED), "FAKE_NAME");
  EXPECT_EQ(Api.errorString(CUDA_ERROR_DEINITIALIZED), "fake description");
}

TEST_F(CUDATeardownTest, DeinitializedIsDriverShutDown) {
  State.Down = true;
  ErrorDetailsTy D = takeErrorDetails(
      checkCU(Api, CUDA_ERROR_DEINITIALIZED, "cuCtxSetCurrent",
              "context {0} of device {1}", "0xc0", 0));
  EXPECT_EQ(D.Code, ErrorCode::DriverShutDown);
  EXPECT_EQ(D.Message,
            "cuCtxSetCurrent failed with CUDA_ERROR_DEINITIALIZED (driver "
            "shutting down: the CUDA driver was shut down, as at the "
            "process's exit): context 0xc0 of device 0");
  // Every other failure stays a BackendError, worded as before.
  D = takeErrorDetails(checkCU(Api, CUDA_ERROR_INVALID_VALUE, "cuMemAlloc",
                               "{0} bytes on device {1}", 16, 0));
  EXPECT_EQ(D.Code, ErrorCode::BackendError);
  EXPECT_EQ(D.Message, "cuMemAlloc failed with CUDA_ERROR_INVALID_VALUE "
                       "(invalid argument): 16 bytes on device 0");
}

TEST_F(CUDATeardownTest, SynchronizeAfterShutdownFailsSayingSo) {
  auto Stream = makeStream();
  ASSERT_TRUE(Stream);
  ASSERT_FALSE(bool(Stream->synchronize()));
  State.Down = true;
  ErrorDetailsTy D = takeErrorDetails(Stream->synchronize());
  EXPECT_EQ(D.Code, ErrorCode::DriverShutDown);
  EXPECT_NE(D.Message.find("cuCtxSetCurrent failed with "
                           "CUDA_ERROR_DEINITIALIZED"),
            std::string::npos)
      << D.Message;
  EXPECT_NE(D.Message.find("the CUDA driver was shut down"),
            std::string::npos)
      << D.Message;
  EXPECT_EQ(errnoFor(D), ENODEV);
}

TEST_F(CUDATeardownTest, TeardownOfSixteenStreamsAsksOnce) {
  std::vector<std::unique_ptr<CUDAStreamTy>> Streams;
  for (int I = 0; I < 16; ++I) {
    Streams.push_back(makeStream());
    ASSERT_TRUE(Streams.back());
  }
  State.Down = true;
  testing::internal::CaptureStderr();
  TeardownTy Teardown;
  for (auto &Stream : Streams) {
    Teardown.run([&] { return Stream->synchronize(); });
    Teardown.run([&] { return Stream->flushDeviceOutput(); });
  }
  Error Err = Teardown.finish();
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_FALSE(bool(Err)) << takeErrorMessage(std::move(Err));
  // cuCtxSetCurrent of the first stream, and the names of its result
  // (cuGetErrorName, cuGetErrorString), which failed too.
  EXPECT_EQ(State.CallsWhileDown, 3u);
}

} // namespace

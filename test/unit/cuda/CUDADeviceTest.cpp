// SPDX-License-Identifier: Apache-2.0
//
// A CUDA device of the plugin against a fake driver table (no GPU or
// driver needed, only cuda.h): two fake devices, each with its primary
// context, and allocations the fake knows as cuPointerGetAttributes
// describes them.
//
// Memory allocated outside OpenMP (queryForeignMemory): device or managed
// memory of the device in its primary context, or mapped through the
// virtual memory API (no context), is this device's, bounded by the
// driver's range; memory of the other device, or of this device in
// another context, is another's, named; host memory and pointers the
// driver does not know are unknown; any other failure is an error naming
// the call, the pointer and the device.
//
// Teardown after the driver has shut down (CUDA_ERROR_DEINITIALIZED, as at
// a Python interpreter's exit): the device's deinit prints nothing,
// succeeds, and asks the dead driver nothing after its first such answer,
// whichever deinit call gets it (cuCtxSetCurrent, cuMemFree of memory the
// program leaked, cuDevicePrimaryCtxRelease).
#include "CUDAApi.h"
#include "CUDADevice.h"
#include "CUDAHostRegistry.h"

#include "offloadio/Plugin.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

using namespace offloadio;
using namespace offloadio::cuda;

namespace {

/// One allocation as the fake driver describes it.
struct FakeAllocationTy {
  CUdeviceptr Start = 0;
  size_t Size = 0;
  unsigned MemoryType = CU_MEMORYTYPE_DEVICE;
  unsigned IsManaged = 0;
  int Ordinal = 0;
  CUcontext Context = nullptr;
};

/// The fake driver's state, reached from the table's plain functions.
struct FakeDriverTy {
  /// Every call answers CUDA_ERROR_DEINITIALIZED.
  bool Down = false;
  /// The driver shuts down at the first call of this name.
  std::string DownAt;
  /// Calls made while down, by name.
  std::map<std::string, unsigned> CallsWhileDown;
  /// What cuPointerGetAttributes answers besides its attributes.
  CUresult PointerQueryResult = CUDA_SUCCESS;
  std::vector<FakeAllocationTy> Allocations;
  uintptr_t NextHandle = 0x1000;
  CUdeviceptr NextDevicePtr = 0x7f0000000000;
  unsigned PrimaryRetains = 0;
  unsigned PrimaryReleases = 0;
  unsigned Frees = 0;
};

FakeDriverTy *Driver = nullptr;

/// Whether call \p Name is refused as the dead driver refuses it.
bool refused(const char *Name) {
  if (!Driver->DownAt.empty() && Driver->DownAt == Name)
    Driver->Down = true;
  if (!Driver->Down)
    return false;
  ++Driver->CallsWhileDown[Name];
  return true;
}

CUcontext primaryContext(CUdevice Device) {
  return reinterpret_cast<CUcontext>(uintptr_t(0xc0 + Device));
}

#define FAKE_REFUSED(Name)                                                     \
  if (refused(Name))                                                           \
  return CUDA_ERROR_DEINITIALIZED

CUresult fakePrimaryCtxRetain(CUcontext *Context, CUdevice Device) {
  FAKE_REFUSED("cuDevicePrimaryCtxRetain");
  ++Driver->PrimaryRetains;
  *Context = primaryContext(Device);
  return CUDA_SUCCESS;
}
CUresult fakePrimaryCtxRelease(CUdevice) {
  FAKE_REFUSED("cuDevicePrimaryCtxRelease");
  ++Driver->PrimaryReleases;
  return CUDA_SUCCESS;
}
CUresult fakeCtxSetCurrent(CUcontext) {
  FAKE_REFUSED("cuCtxSetCurrent");
  return CUDA_SUCCESS;
}
CUresult fakeDeviceGetName(char *Name, int Len, CUdevice) {
  FAKE_REFUSED("cuDeviceGetName");
  std::strncpy(Name, "Fake GPU", size_t(Len));
  return CUDA_SUCCESS;
}
CUresult fakeDeviceTotalMem(size_t *Bytes, CUdevice) {
  FAKE_REFUSED("cuDeviceTotalMem");
  *Bytes = size_t(80) << 30;
  return CUDA_SUCCESS;
}
CUresult fakeDeviceGetAttribute(int *Value, CUdevice_attribute Attr,
                                CUdevice) {
  FAKE_REFUSED("cuDeviceGetAttribute");
  switch (Attr) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    *Value = 9;
    break;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    *Value = 132;
    break;
  case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
    *Value = 32;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
    *Value = 1024;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
    *Value = 0x7fffffff;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
    *Value = 48 << 10;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR:
    *Value = 2048;
    break;
  default:
    *Value = 0;
  }
  return CUDA_SUCCESS;
}
CUresult fakeDeviceGetPCIBusId(char *Bus, int Len, CUdevice Device) {
  FAKE_REFUSED("cuDeviceGetPCIBusId");
  std::snprintf(Bus, size_t(Len), "0000:%02x:00.0", 0x10 + Device);
  return CUDA_SUCCESS;
}
CUresult fakeStreamCreate(CUstream *Stream, unsigned) {
  FAKE_REFUSED("cuStreamCreate");
  *Stream = reinterpret_cast<CUstream>(Driver->NextHandle++);
  return CUDA_SUCCESS;
}
CUresult fakeStreamDestroy(CUstream) {
  FAKE_REFUSED("cuStreamDestroy");
  return CUDA_SUCCESS;
}
CUresult fakeStreamQuery(CUstream) {
  FAKE_REFUSED("cuStreamQuery");
  return CUDA_SUCCESS;
}
CUresult fakeStreamSynchronize(CUstream) {
  FAKE_REFUSED("cuStreamSynchronize");
  return CUDA_SUCCESS;
}
CUresult fakeEventCreate(CUevent *Event, unsigned) {
  FAKE_REFUSED("cuEventCreate");
  *Event = reinterpret_cast<CUevent>(Driver->NextHandle++);
  return CUDA_SUCCESS;
}
CUresult fakeEventDestroy(CUevent) {
  FAKE_REFUSED("cuEventDestroy");
  return CUDA_SUCCESS;
}
CUresult fakeMemAlloc(CUdeviceptr *Ptr, size_t Size) {
  FAKE_REFUSED("cuMemAlloc");
  *Ptr = Driver->NextDevicePtr;
  Driver->NextDevicePtr += (Size + 0xffff) & ~size_t(0xffff);
  return CUDA_SUCCESS;
}
CUresult fakeMemFree(CUdeviceptr) {
  FAKE_REFUSED("cuMemFree");
  ++Driver->Frees;
  return CUDA_SUCCESS;
}
CUresult fakePointerGetAttributes(unsigned N, CUpointer_attribute *Attrs,
                                  void **Data, CUdeviceptr Ptr) {
  FAKE_REFUSED("cuPointerGetAttributes");
  if (Driver->PointerQueryResult != CUDA_SUCCESS)
    return Driver->PointerQueryResult;
  // A pointer the driver does not know: every attribute at zero.
  FakeAllocationTy None;
  None.MemoryType = 0;
  None.Ordinal = 0;
  const FakeAllocationTy *A = &None;
  for (const FakeAllocationTy &Candidate : Driver->Allocations)
    if (Ptr >= Candidate.Start && Ptr < Candidate.Start + Candidate.Size)
      A = &Candidate;
  for (unsigned I = 0; I < N; ++I) {
    switch (Attrs[I]) {
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
      *static_cast<unsigned *>(Data[I]) = A->MemoryType;
      break;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
      // The driver writes a one-byte boolean.
      *static_cast<bool *>(Data[I]) = A->IsManaged != 0;
      break;
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
      *static_cast<int *>(Data[I]) = A->Ordinal;
      break;
    case CU_POINTER_ATTRIBUTE_CONTEXT:
      *static_cast<CUcontext *>(Data[I]) = A->Context;
      break;
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
      *static_cast<CUdeviceptr *>(Data[I]) = A->Start;
      break;
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
      *static_cast<size_t *>(Data[I]) = A->Size;
      break;
    default:
      return CUDA_ERROR_INVALID_VALUE;
    }
  }
  return CUDA_SUCCESS;
}

#undef FAKE_REFUSED

/// A plugin of two CUDA devices that the tests create themselves.
class TwoDevicePluginTy final : public GenericPluginTy {
public:
  TwoDevicePluginTy() : GenericPluginTy("cuda") {}

protected:
  Expected<int32_t> initImpl() override { return 2; }
  Expected<std::unique_ptr<GenericDeviceTy>> createDeviceImpl(int32_t) override {
    return makeError(ErrorCode::Unsupported, "the tests create the devices");
  }
  bool isImageCompatibleImpl(const __tgt_device_image &,
                             llvm::StringRef) override {
    return false;
  }
  Expected<void *> pinHostMemoryImpl(void *HstPtr, size_t) override {
    return HstPtr;
  }
  Error unpinHostMemoryImpl(void *, void *, size_t) override {
    return Error::success();
  }
};

class CUDADeviceTest : public ::testing::Test {
protected:
  void SetUp() override {
    Driver = &State;
    Api.cuDevicePrimaryCtxRetain = fakePrimaryCtxRetain;
    Api.cuDevicePrimaryCtxRelease = fakePrimaryCtxRelease;
    Api.cuCtxSetCurrent = fakeCtxSetCurrent;
    Api.cuDeviceGetName = fakeDeviceGetName;
    Api.cuDeviceTotalMem = fakeDeviceTotalMem;
    Api.cuDeviceGetAttribute = fakeDeviceGetAttribute;
    Api.cuDeviceGetPCIBusId = fakeDeviceGetPCIBusId;
    Api.cuStreamCreate = fakeStreamCreate;
    Api.cuStreamDestroy = fakeStreamDestroy;
    Api.cuStreamQuery = fakeStreamQuery;
    Api.cuStreamSynchronize = fakeStreamSynchronize;
    Api.cuEventCreate = fakeEventCreate;
    Api.cuEventDestroy = fakeEventDestroy;
    Api.cuMemAlloc = fakeMemAlloc;
    Api.cuMemFree = fakeMemFree;
    Api.cuPointerGetAttributes = fakePointerGetAttributes;
    ASSERT_FALSE(bool(Plugin.init()));
    Device = std::make_unique<CUDADeviceTy>(Plugin, 0, Api, Registry,
                                            CUdevice(0));
    Error Err = Device->init();
    ASSERT_FALSE(bool(Err)) << takeErrorMessage(std::move(Err));
  }
  void TearDown() override {
    // Whatever the test left: the driver comes back for the device's
    // destruction.
    State.Down = false;
    State.DownAt.clear();
    Device.reset();
    Driver = nullptr;
  }

  /// An allocation of \p Size bytes the fake driver knows, \p Offset
  /// bytes into an address range of its own.
  CUdeviceptr allocation(size_t Size, int Ordinal, CUcontext Context,
                         unsigned MemoryType = CU_MEMORYTYPE_DEVICE,
                         bool IsManaged = false) {
    FakeAllocationTy A;
    A.Start = State.NextDevicePtr;
    State.NextDevicePtr += (Size + 0xffff) & ~size_t(0xffff);
    A.Size = Size;
    A.MemoryType = MemoryType;
    A.IsManaged = IsManaged;
    A.Ordinal = Ordinal;
    A.Context = Context;
    State.Allocations.push_back(A);
    return A.Start;
  }
  ForeignMemoryTy query(CUdeviceptr Ptr) {
    auto M = Device->queryForeignMemory(reinterpret_cast<void *>(Ptr));
    EXPECT_TRUE(bool(M)) << takeErrorMessage(M.takeError());
    return M ? *M : ForeignMemoryTy();
  }

  FakeDriverTy State;
  CUDAApiTy Api;
  CUDAHostRegistryTy Registry{Api, 4096};
  TwoDevicePluginTy Plugin;
  std::unique_ptr<CUDADeviceTy> Device;
};

//===----------------------------------------------------------------------===//
// Memory allocated outside OpenMP
//===----------------------------------------------------------------------===//

TEST_F(CUDADeviceTest, DeviceMemoryOfItsPrimaryContextIsThisDevices) {
  CUdeviceptr Ptr = allocation(3 << 20, 0, primaryContext(0));
  ForeignMemoryTy M = query(Ptr + 4096);
  EXPECT_EQ(M.Owner, ForeignMemoryTy::OwnerTy::ThisDevice);
  EXPECT_EQ(M.Base, reinterpret_cast<const void *>(Ptr));
  EXPECT_EQ(M.Size, size_t(3) << 20);
  EXPECT_EQ(M.bytesFrom(reinterpret_cast<void *>(Ptr + 4096)),
            (size_t(3) << 20) - 4096);
}

TEST_F(CUDADeviceTest, ManagedMemoryOfThisDeviceIsThisDevices) {
  CUdeviceptr Ptr =
      allocation(8192, 0, primaryContext(0), CU_MEMORYTYPE_DEVICE, true);
  ForeignMemoryTy M = query(Ptr);
  EXPECT_EQ(M.Owner, ForeignMemoryTy::OwnerTy::ThisDevice);
  EXPECT_EQ(M.Size, 8192u);
}

TEST_F(CUDADeviceTest, VirtualMemoryMappingsWithoutAContextAreThisDevices) {
  // cuMemCreate + cuMemMap (PyTorch's expandable segments): the driver
  // names no context.
  CUdeviceptr Ptr = allocation(20 << 20, 0, nullptr);
  ForeignMemoryTy M = query(Ptr + (10 << 20));
  EXPECT_EQ(M.Owner, ForeignMemoryTy::OwnerTy::ThisDevice);
  EXPECT_EQ(M.Base, reinterpret_cast<const void *>(Ptr));
}

TEST_F(CUDADeviceTest, MemoryOfTheOtherDeviceNamesItAndItsPluginDevice) {
  CUdeviceptr Ptr = allocation(4096, 1, primaryContext(1));
  ForeignMemoryTy M = query(Ptr);
  EXPECT_EQ(M.Owner, ForeignMemoryTy::OwnerTy::Elsewhere);
  EXPECT_EQ(M.OwnerName, "CUDA device 1 (device 1 of the cuda plugin)");
  // A device the plugin does not serve is named by its ordinal alone.
  Ptr = allocation(4096, 5, nullptr);
  M = query(Ptr);
  EXPECT_EQ(M.Owner, ForeignMemoryTy::OwnerTy::Elsewhere);
  EXPECT_EQ(M.OwnerName, "CUDA device 5");
}

TEST_F(CUDADeviceTest, MemoryOfThisDeviceInAnotherContextIsRefused) {
  CUdeviceptr Ptr =
      allocation(4096, 0, reinterpret_cast<CUcontext>(uintptr_t(0xbad0)));
  ForeignMemoryTy M = query(Ptr);
  EXPECT_EQ(M.Owner, ForeignMemoryTy::OwnerTy::Elsewhere);
  EXPECT_EQ(M.OwnerName, "CUDA device 0 in another context");
}

TEST_F(CUDADeviceTest, HostAndUnknownPointersAreUnknown) {
  CUdeviceptr Host =
      allocation(4096, 0, primaryContext(0), CU_MEMORYTYPE_HOST);
  EXPECT_EQ(query(Host).Owner, ForeignMemoryTy::OwnerTy::Unknown);
  std::vector<char> Plain(64);
  EXPECT_EQ(query(reinterpret_cast<CUdeviceptr>(Plain.data())).Owner,
            ForeignMemoryTy::OwnerTy::Unknown);
  // Drivers that refuse a pointer they do not know instead.
  State.PointerQueryResult = CUDA_ERROR_INVALID_VALUE;
  EXPECT_EQ(query(reinterpret_cast<CUdeviceptr>(Plain.data())).Owner,
            ForeignMemoryTy::OwnerTy::Unknown);
}

TEST_F(CUDADeviceTest, AFailedQueryNamesTheCallPointerAndDevice) {
  CUdeviceptr Ptr = allocation(4096, 0, primaryContext(0));
  State.PointerQueryResult = CUDA_ERROR_INVALID_CONTEXT;
  auto M = Device->queryForeignMemory(reinterpret_cast<void *>(Ptr));
  ASSERT_FALSE(bool(M));
  ErrorDetailsTy D = takeErrorDetails(M.takeError());
  EXPECT_EQ(D.Code, ErrorCode::BackendError);
  EXPECT_NE(D.Message.find("cuPointerGetAttributes failed with "
                           "CUDA_ERROR_INVALID_CONTEXT"),
            std::string::npos)
      << D.Message;
  std::string Expected =
      llvm::formatv("{0} for device 0", reinterpret_cast<void *>(Ptr)).str();
  EXPECT_NE(D.Message.find(Expected), std::string::npos) << D.Message;
}

TEST_F(CUDADeviceTest, AQueryAfterTheDriverShutDownSaysSo) {
  CUdeviceptr Ptr = allocation(4096, 0, primaryContext(0));
  State.Down = true;
  auto M = Device->queryForeignMemory(reinterpret_cast<void *>(Ptr));
  ASSERT_FALSE(bool(M));
  EXPECT_EQ(takeErrorDetails(M.takeError()).Code, ErrorCode::DriverShutDown);
}

//===----------------------------------------------------------------------===//
// Teardown after the driver shut down
//===----------------------------------------------------------------------===//

/// Allocations of the program that it never freed (deinit frees them).
void leak(CUDADeviceTy &Device, unsigned N) {
  for (unsigned I = 0; I < N; ++I) {
    auto Ptr = Device.dataAlloc(1 << 20, nullptr, AllocKindTy::Device);
    ASSERT_TRUE(bool(Ptr)) << takeErrorMessage(Ptr.takeError());
  }
}

TEST_F(CUDADeviceTest, DeinitWithTheDriverUpReleasesEverything) {
  leak(*Device, 3);
  Error Err = Device->deinit();
  EXPECT_FALSE(bool(Err)) << takeErrorMessage(std::move(Err));
  EXPECT_EQ(State.Frees, 3u);
  EXPECT_EQ(State.PrimaryReleases, State.PrimaryRetains);
}

TEST_F(CUDADeviceTest, DeinitAfterShutdownAsksOnceAndIsQuiet) {
  leak(*Device, 3);
  State.Down = true;
  testing::internal::CaptureStderr();
  Error Err = Device->deinit();
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_FALSE(bool(Err)) << takeErrorMessage(std::move(Err));
  // The first stream's cuCtxSetCurrent heard the answer; no stream was
  // waited for, and neither the leaked memory nor the primary context was
  // asked for afterwards. Only the destructors of the device's streams and
  // events still call (and check nothing).
  EXPECT_GE(State.CallsWhileDown["cuCtxSetCurrent"], 1u);
  for (auto &[Call, N] : State.CallsWhileDown)
    EXPECT_TRUE(Call == "cuCtxSetCurrent" || Call == "cuStreamDestroy" ||
                Call == "cuEventDestroy")
        << Call << " asked " << N << " times after the shutdown";
  EXPECT_EQ(State.Frees, 0u);
}

TEST_F(CUDADeviceTest, DeinitWhoseFirstFreeFindsTheDriverGoneStopsThere) {
  leak(*Device, 3);
  State.DownAt = "cuMemFree";
  testing::internal::CaptureStderr();
  Error Err = Device->deinit();
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_FALSE(bool(Err)) << takeErrorMessage(std::move(Err));
  EXPECT_EQ(State.CallsWhileDown["cuMemFree"], 1u);
  EXPECT_EQ(State.CallsWhileDown.count("cuDevicePrimaryCtxRelease"), 0u);
}

TEST_F(CUDADeviceTest, DeinitWhoseContextReleaseFindsTheDriverGoneSucceeds) {
  State.DownAt = "cuDevicePrimaryCtxRelease";
  Error Err = Device->deinit();
  EXPECT_FALSE(bool(Err)) << takeErrorMessage(std::move(Err));
  EXPECT_EQ(State.CallsWhileDown["cuDevicePrimaryCtxRelease"], 1u);
  // The device is deinitialised all the same: a second deinit asks
  // nothing.
  State.CallsWhileDown.clear();
  Err = Device->deinit();
  EXPECT_FALSE(bool(Err)) << takeErrorMessage(std::move(Err));
  EXPECT_EQ(State.CallsWhileDown.count("cuDevicePrimaryCtxRelease"), 0u);
}

TEST_F(CUDADeviceTest, OtherDeinitFailuresAreKept) {
  // A context that cannot be made current is an error like any other; the
  // primary context is still released.
  State.Down = false;
  Api.cuCtxSetCurrent = [](CUcontext) { return CUDA_ERROR_INVALID_CONTEXT; };
  Error Err = Device->deinit();
  ASSERT_TRUE(bool(Err));
  std::string Message = takeErrorMessage(std::move(Err));
  EXPECT_NE(Message.find("cuCtxSetCurrent failed with "
                         "CUDA_ERROR_INVALID_CONTEXT"),
            std::string::npos)
      << Message;
  EXPECT_EQ(State.PrimaryReleases, State.PrimaryRetains);
  Api.cuCtxSetCurrent = fakeCtxSetCurrent;
}

} // namespace

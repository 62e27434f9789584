// SPDX-License-Identifier: Apache-2.0
//
// What GenericDeviceTy writes into each image it loads for the device
// runtime, per libomptarget version: the device environment (16, 24 or 48
// bytes) with the backend's clock frequency (CLOCKS_PER_SEC when it has
// none) and hardware parallelism, and under 18 the pool of the device-side
// malloc: its tracker and {Ptr, Size}, a device allocation of the backend's
// heap size of its own for each image that has the tracker, freed at
// deinit. None for images without the tracker, for a backend without a heap
// (CUDA) and for 16 and 17. Under 18 also the table of indirectly callable
// functions. On FakeDevice.h's device, whose images are lists of globals.
#include "FakeDevice.h"
#include "ScopedEnv.h"

#include "offloadio/DeviceRuntimeABI.h"

#include "gtest/gtest.h"

#include <cstring>
#include <ctime>
#include <map>
#include <string>

using namespace offloadio;
using namespace offloadio::unittest;
using offloadio::test::ScopedEnvTy;

namespace {

/// A device whose images hold the globals a test names (with their sizes)
/// and record what the framework writes into them.
class ImageDeviceTy final : public FakeDeviceTy {
public:
  ImageDeviceTy(GenericPluginTy &Plugin, DeviceLimitsTy Backend)
      : FakeDeviceTy(Plugin, /*HostAddressable=*/true), Backend(Backend) {}

  /// The globals of the images loaded from now on, by name: their sizes.
  std::map<std::string, size_t> Globals;
  /// What was written, by image and global.
  std::map<std::pair<int32_t, std::string>, std::string> Written;
  /// Globals holding a device function's address (declare target
  /// indirect), by name: what they hold. The device's memory is the host's.
  std::map<std::string, void *> FunctionGlobals;

  std::string written(int32_t Image, const std::string &Name) const {
    auto It = Written.find({Image, Name});
    return It == Written.end() ? std::string() : It->second;
  }

protected:
  Error initImpl(DeviceLimitsTy &L) override {
    L = Backend;
    return Error::success();
  }
  Expected<void *> getGlobalAddressImpl(DeviceImageTy &, llvm::StringRef Name,
                                        size_t) override {
    auto It = FunctionGlobals.find(Name.str());
    if (It == FunctionGlobals.end())
      return makeError(ErrorCode::NotFound, "no global {0}", Name);
    return static_cast<void *>(&It->second);
  }
  Expected<std::unique_ptr<DeviceImageTy>>
  loadImageImpl(const __tgt_device_image &TgtImage, int32_t Id) override {
    ImageGlobals[Id] = Globals;
    return std::make_unique<DeviceImageTy>(Id, TgtImage);
  }
  Expected<bool> writeImageGlobalImpl(DeviceImageTy &Image,
                                      llvm::StringRef Name, const void *Data,
                                      size_t Size) override {
    auto &Have = ImageGlobals[Image.getId()];
    auto It = Have.find(Name.str());
    if (It == Have.end())
      return false;
    if (It->second != Size)
      return makeError(ErrorCode::InvalidImage, "global {0}: {1} bytes, not {2}",
                       Name, It->second, Size);
    Written[{Image.getId(), Name.str()}] =
        std::string(static_cast<const char *>(Data), Size);
    return true;
  }

private:
  DeviceLimitsTy Backend;
  std::map<int32_t, std::map<std::string, size_t>> ImageGlobals;
};

template <typename T> T field(const std::string &Bytes, size_t Offset) {
  T V;
  EXPECT_LE(Offset + sizeof(T), Bytes.size());
  std::memcpy(&V, Bytes.data() + Offset, sizeof(T));
  return V;
}

constexpr const char *EnvSymbol = "__omp_rtl_device_environment";

class DeviceEnvironmentTest : public ::testing::Test {
protected:
  /// A device of a plugin serving libomptarget \p Version whose backend
  /// reports \p Backend.
  void start(unsigned Version, DeviceLimitsTy Backend) {
    Plugin.setRuntimeABI(*findDeviceRuntimeABI(Version));
    ASSERT_FALSE(bool(Plugin.init()));
    Device = std::make_unique<ImageDeviceTy>(Plugin, Backend);
    ASSERT_FALSE(bool(Device->init()));
  }
  void TearDown() override {
    if (!Device)
      return;
    EXPECT_FALSE(bool(Device->deinit()));
    EXPECT_EQ(Device->live(AllocKindTy::Device), 0u)
        << "a pool outlived the device";
  }
  /// Load an image holding \p Globals; its id.
  Expected<int32_t> load(std::map<std::string, size_t> Globals) {
    Device->Globals = std::move(Globals);
    auto Image = Device->loadBinary(TgtImage);
    if (!Image)
      return Image.takeError();
    return int32_t(Loaded++);
  }
  static DeviceLimitsTy amdgpu(uint64_t HeapSize) {
    DeviceLimitsTy L;
    L.ClockFrequency = 100000000;
    L.HardwareParallelism = 104 * 32;
    L.DeviceHeapSize = HeapSize;
    return L;
  }
  /// The 18 device runtime's globals.
  static std::map<std::string, size_t> runtime18() {
    return {{EnvSymbol, 48},
            {DeviceMemoryPoolSymbol, 16},
            {DeviceMemoryPoolTrackerSymbol, 32}};
  }

  ScopedEnvTy Vars{"LIBOMPTARGET_INFO"};
  FakePluginTy Plugin;
  std::unique_ptr<ImageDeviceTy> Device;
  char Bytes[8] = {};
  __tgt_device_image TgtImage{Bytes, Bytes + sizeof(Bytes), nullptr, nullptr};
  int Loaded = 0;
};

TEST_F(DeviceEnvironmentTest, Version18CarriesClockAndParallelism) {
  start(18, amdgpu(0));
  auto Id = load({{EnvSymbol, 48}});
  ASSERT_TRUE(bool(Id)) << llvm::toString(Id.takeError());
  std::string Env = Device->written(*Id, EnvSymbol);
  ASSERT_EQ(Env.size(), 48u);
  EXPECT_EQ(field<uint32_t>(Env, 4), 1u) << "NumDevices of the fake plugin";
  EXPECT_EQ(field<uint64_t>(Env, 16), 100000000u) << "ClockFrequency";
  EXPECT_EQ(field<uint64_t>(Env, 24), 0u) << "IndirectCallTable";
  EXPECT_EQ(field<uint64_t>(Env, 32), 0u) << "IndirectCallTableSize";
  EXPECT_EQ(field<uint64_t>(Env, 40), 104u * 32) << "HardwareParallelism";
}

TEST_F(DeviceEnvironmentTest, Version17CarriesTheClock) {
  start(17, amdgpu(0));
  auto Id = load({{EnvSymbol, 24}});
  ASSERT_TRUE(bool(Id)) << llvm::toString(Id.takeError());
  std::string Env = Device->written(*Id, EnvSymbol);
  ASSERT_EQ(Env.size(), 24u);
  EXPECT_EQ(field<uint64_t>(Env, 16), 100000000u);
}

TEST_F(DeviceEnvironmentTest, WithoutABackendClockTheDefaultIsClocksPerSec) {
  start(18, DeviceLimitsTy{});
  auto Id = load({{EnvSymbol, 48}});
  ASSERT_TRUE(bool(Id)) << llvm::toString(Id.takeError());
  std::string Env = Device->written(*Id, EnvSymbol);
  EXPECT_EQ(field<uint64_t>(Env, 16), uint64_t(CLOCKS_PER_SEC));
  EXPECT_EQ(field<uint64_t>(Env, 40), 0u);
}

TEST_F(DeviceEnvironmentTest, EachImageGetsAPoolOfItsOwn) {
  start(18, amdgpu(1 << 20));
  auto A = load(runtime18());
  ASSERT_TRUE(bool(A)) << llvm::toString(A.takeError());
  auto B = load(runtime18());
  ASSERT_TRUE(bool(B)) << llvm::toString(B.takeError());
  std::string Tracker = Device->written(*A, DeviceMemoryPoolTrackerSymbol);
  ASSERT_EQ(Tracker.size(), 32u);
  EXPECT_EQ(field<uint64_t>(Tracker, 0), 0u) << "NumAllocations";
  EXPECT_EQ(field<uint64_t>(Tracker, 8), 0u) << "AllocationTotal";
  EXPECT_EQ(field<uint64_t>(Tracker, 16), 0xffffffffu) << "AllocationMin";
  EXPECT_EQ(field<uint64_t>(Tracker, 24), 0u) << "AllocationMax";
  std::string PoolA = Device->written(*A, DeviceMemoryPoolSymbol);
  std::string PoolB = Device->written(*B, DeviceMemoryPoolSymbol);
  ASSERT_EQ(PoolA.size(), 16u);
  ASSERT_EQ(PoolB.size(), 16u);
  void *PtrA = field<void *>(PoolA, 0), *PtrB = field<void *>(PoolB, 0);
  EXPECT_NE(PtrA, nullptr);
  EXPECT_NE(PtrA, PtrB) << "the images bump pointers of their own";
  EXPECT_EQ(field<uint64_t>(PoolA, 8), 1u << 20);
  auto Alloc = Device->findAllocation(PtrA);
  ASSERT_TRUE(Alloc);
  EXPECT_EQ(Alloc->Size, 1u << 20);
  EXPECT_EQ(Alloc->Kind, AllocKindTy::Device);
  EXPECT_EQ(Device->live(AllocKindTy::Device), 2u);
  EXPECT_EQ(Device->bytesAvailableFrom(PtrA), SIZE_MAX)
      << "never one of the program's allocations";
  // TearDown: deinit frees both.
}

TEST_F(DeviceEnvironmentTest, ImagesWithoutTheTrackerGetNoPool) {
  start(18, amdgpu(1 << 20));
  auto Id = load({{EnvSymbol, 48}, {DeviceMemoryPoolSymbol, 16}});
  ASSERT_TRUE(bool(Id)) << llvm::toString(Id.takeError());
  EXPECT_EQ(Device->written(*Id, DeviceMemoryPoolSymbol), "");
  EXPECT_EQ(Device->live(AllocKindTy::Device), 0u);
}

TEST_F(DeviceEnvironmentTest, BackendsWithoutAHeapGetNoPool) {
  // CUDA: the device's malloc is the driver's.
  start(18, amdgpu(0));
  auto Id = load(runtime18());
  ASSERT_TRUE(bool(Id)) << llvm::toString(Id.takeError());
  EXPECT_EQ(Device->written(*Id, DeviceMemoryPoolTrackerSymbol), "");
  EXPECT_EQ(Device->written(*Id, DeviceMemoryPoolSymbol), "");
  EXPECT_EQ(Device->live(AllocKindTy::Device), 0u);
}

TEST_F(DeviceEnvironmentTest, OlderVersionsGetNoPool) {
  start(17, amdgpu(1 << 20));
  auto Id = load({{EnvSymbol, 24},
                  {DeviceMemoryPoolSymbol, 16},
                  {DeviceMemoryPoolTrackerSymbol, 32}});
  ASSERT_TRUE(bool(Id)) << llvm::toString(Id.takeError());
  EXPECT_EQ(Device->written(*Id, DeviceMemoryPoolSymbol), "");
  EXPECT_EQ(Device->live(AllocKindTy::Device), 0u);
}

TEST_F(DeviceEnvironmentTest, RefusedPoolStillLoadsTheImageWithAnEmptyPool) {
  start(18, amdgpu(1 << 20));
  Device->DeviceAllocsLeft = 0;
  std::string Stderr;
  auto Id = ScopedEnvTy::captured([&] { return load(runtime18()); }, Stderr);
  ASSERT_TRUE(bool(Id)) << llvm::toString(Id.takeError());
  std::string Pool = Device->written(*Id, DeviceMemoryPoolSymbol);
  ASSERT_EQ(Pool.size(), 16u);
  EXPECT_EQ(field<void *>(Pool, 0), nullptr);
  EXPECT_EQ(field<uint64_t>(Pool, 8), 0u);
  EXPECT_NE(Stderr.find("no pool for device-side malloc of image 0"),
            std::string::npos)
      << Stderr;
  EXPECT_NE(Stderr.find("1048576 bytes"), std::string::npos) << Stderr;
  Device->DeviceAllocsLeft = -1;
}

TEST_F(DeviceEnvironmentTest, TrackerWithoutPoolFailsTheLoadAndFreesIt) {
  start(18, amdgpu(1 << 20));
  auto Id = load({{EnvSymbol, 48}, {DeviceMemoryPoolTrackerSymbol, 32}});
  ASSERT_FALSE(bool(Id));
  auto Details = takeErrorDetails(Id.takeError());
  EXPECT_EQ(Details.Code, ErrorCode::InvalidImage);
  EXPECT_NE(Details.Message.find("has '__omp_rtl_device_memory_pool_tracker' "
                                 "but not '__omp_rtl_device_memory_pool'"),
            std::string::npos)
      << Details.Message;
  EXPECT_EQ(Device->live(AllocKindTy::Device), 0u);
}

TEST_F(DeviceEnvironmentTest, PoolOfTheWrongSizeFailsTheLoad) {
  start(18, amdgpu(1 << 20));
  auto Id = load({{EnvSymbol, 48},
                  {DeviceMemoryPoolSymbol, 8},
                  {DeviceMemoryPoolTrackerSymbol, 32}});
  ASSERT_FALSE(bool(Id));
  EXPECT_EQ(takeErrorDetails(Id.takeError()).Code, ErrorCode::InvalidImage);
  EXPECT_EQ(Device->live(AllocKindTy::Device), 0u);
}

} // namespace

namespace {

__tgt_offload_entry indirectEntry(uintptr_t Host, const char *Name,
                                  size_t Size = sizeof(void *)) {
  __tgt_offload_entry E{};
  E.addr = reinterpret_cast<void *>(Host);
  E.name = const_cast<char *>(Name);
  E.size = Size;
  E.flags = OMP_DECLARE_TARGET_INDIRECT;
  return E;
}

TEST_F(DeviceEnvironmentTest, Version18GetsTheSortedIndirectCallTable) {
  start(18, amdgpu(0));
  Device->FunctionGlobals = {{"f", reinterpret_cast<void *>(0xf00)},
                             {"g", reinterpret_cast<void *>(0x900)},
                             {"h", reinterpret_cast<void *>(0x500)}};
  __tgt_offload_entry Entries[] = {indirectEntry(0x3000, "f"),
                                   indirectEntry(0x1000, "g"),
                                   indirectEntry(0x2000, "h")};
  TgtImage.EntriesBegin = Entries;
  TgtImage.EntriesEnd = Entries + 3;
  auto Id = load({{EnvSymbol, 48}});
  ASSERT_TRUE(bool(Id)) << llvm::toString(Id.takeError());
  std::string Env = Device->written(*Id, EnvSymbol);
  auto *Table = field<std::pair<uintptr_t, uintptr_t> *>(Env, 24);
  ASSERT_NE(Table, nullptr);
  ASSERT_EQ(field<uint64_t>(Env, 32), 3u);
  EXPECT_EQ(Table[0], std::make_pair(uintptr_t(0x1000), uintptr_t(0x900)));
  EXPECT_EQ(Table[1], std::make_pair(uintptr_t(0x2000), uintptr_t(0x500)));
  EXPECT_EQ(Table[2], std::make_pair(uintptr_t(0x3000), uintptr_t(0xf00)));
  EXPECT_EQ(Device->live(AllocKindTy::Device), 1u);
  // TearDown: deinit frees it.
}

TEST_F(DeviceEnvironmentTest, OlderVersionsGetNoIndirectCallTable) {
  start(17, amdgpu(0));
  Device->FunctionGlobals = {{"f", reinterpret_cast<void *>(0xf00)}};
  __tgt_offload_entry Entries[] = {indirectEntry(0x3000, "f")};
  TgtImage.EntriesBegin = Entries;
  TgtImage.EntriesEnd = Entries + 1;
  auto Id = load({{EnvSymbol, 24}});
  ASSERT_TRUE(bool(Id)) << llvm::toString(Id.takeError());
  EXPECT_EQ(Device->live(AllocKindTy::Device), 0u);
}

TEST_F(DeviceEnvironmentTest, AnIndirectEntryNotAPointerFailsTheLoad) {
  start(18, amdgpu(0));
  Device->FunctionGlobals = {{"f", nullptr}};
  __tgt_offload_entry Entries[] = {indirectEntry(0x3000, "f", 4)};
  TgtImage.EntriesBegin = Entries;
  TgtImage.EntriesEnd = Entries + 1;
  auto Id = load({{EnvSymbol, 48}});
  ASSERT_FALSE(bool(Id));
  EXPECT_NE(llvm::toString(Id.takeError()).find("'f' has 4 bytes"),
            std::string::npos);
  EXPECT_EQ(Device->live(AllocKindTy::Device), 0u);
}

} // namespace

// SPDX-License-Identifier: Apache-2.0
//
// Global constructors and destructors of GPU images under libomptarget 18
// (GenericDeviceTy::runImageConstructors / runImageDestructors), on
// FakeDevice.h's device with ELF images built in memory: AMDGPU images run
// amdgcn.device.init after loading and amdgcn.device.fini at deinit; NVPTX
// images get the array of their __init_array_object_*_<priority> functions,
// sorted by priority, in __init_array_start/end before nvptx$device$init
// runs, and the array is freed afterwards; each kernel on one thread of one
// team without arguments; destructors once, the last image first; nothing
// under 16, for host images, or for images without the kernels; errors name
// the image, the device and what was missing.
#include "ELFImageBuilder.h"
#include "FakeDevice.h"
#include "ScopedEnv.h"

#include "offloadio/DeviceRuntimeABI.h"
#include "offloadio/ImageSymbols.h"
#include "offloadio/Kernel.h"

#include "gtest/gtest.h"

#include <cstddef>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace offloadio;
using namespace offloadio::unittest;
using offloadio::test::ScopedEnvTy;

namespace {

/// One launch of a constructor or destructor kernel.
struct LaunchTy {
  int32_t Image;
  std::string Kernel;
  uint32_t NumArgs;
  LaunchDimsTy Dims;
  /// __init_array_start..end (or fini) as the kernel found them.
  std::vector<void *> Array;
};

class ImageDeviceTy;

/// A kernel whose launch is recorded by its device.
class RecordingKernelTy final : public GenericKernelTy {
public:
  RecordingKernelTy(DeviceImageTy &Image, llvm::StringRef Name,
                    ImageDeviceTy &Owner)
      : GenericKernelTy(Image, Name.str()), Owner(Owner) {}

protected:
  Error launchImpl(GenericDeviceTy &, void **, uint32_t NumArgs,
                   const LaunchDimsTy &Dims, const KernelArgsTy &,
                   StreamTy &) override;

private:
  ImageDeviceTy &Owner;
};

/// A device whose images are ELF files (of the test's machine and
/// symbols); their globals live in host memory the device owns.
class ImageDeviceTy final : public FakeDeviceTy {
public:
  explicit ImageDeviceTy(GenericPluginTy &Plugin)
      : FakeDeviceTy(Plugin, /*HostAddressable=*/true) {}

  std::vector<LaunchTy> Launches;
  /// Launches of kernels named so fail.
  std::string FailingKernel;

  /// The 8-byte global \p Name of image \p Image.
  void *&global(int32_t Image, const std::string &Name) {
    return Globals[{Image, Name}];
  }

protected:
  Expected<std::unique_ptr<DeviceImageTy>>
  loadImageImpl(const __tgt_device_image &TgtImage, int32_t Id) override {
    // The loader relocates each __init/fini_array_object_ to the address of
    // its function: here a distinct fake address per global.
    auto Image = std::make_unique<DeviceImageTy>(Id, TgtImage);
    // What a vendor loader keeps of the image: its symbols.
    for (const std::string &Name : imageSymbolsWithPrefix(Image->getBytes(), ""))
      Symbols[Id].insert(Name);
    for (const char *Prefix : {"__init_array_object_", "__fini_array_object_"})
      for (const std::string &Name :
           imageSymbolsWithPrefix(Image->getBytes(), Prefix))
        global(Id, Name) = reinterpret_cast<void *>(0x1000 + 0x10 * Next++);
    return std::move(Image);
  }
  Expected<std::unique_ptr<GenericKernelTy>>
  constructKernelImpl(DeviceImageTy &Image, llvm::StringRef Name) override {
    if (!Symbols[Image.getId()].count(Name.str()))
      return makeError(ErrorCode::NotFound, "no kernel {0}", Name);
    return std::make_unique<RecordingKernelTy>(Image, Name, *this);
  }
  Expected<void *> getGlobalAddressImpl(DeviceImageTy &Image,
                                        llvm::StringRef Name,
                                        size_t Size) override {
    auto It = Globals.find({Image.getId(), Name.str()});
    if (It == Globals.end() || Size != sizeof(void *))
      return makeError(ErrorCode::NotFound, "no global {0}", Name);
    return &It->second;
  }
  Expected<bool> writeImageGlobalImpl(DeviceImageTy &Image,
                                      llvm::StringRef Name, const void *Data,
                                      size_t Size) override {
    if (!Symbols[Image.getId()].count(Name.str()))
      return false;
    if (Size != sizeof(void *))
      return makeError(ErrorCode::InvalidImage, "{0}: wrong size", Name);
    std::memcpy(&global(Image.getId(), Name.str()), Data, Size);
    return true;
  }

private:
  friend class RecordingKernelTy;
  std::map<std::pair<int32_t, std::string>, void *> Globals;
  std::map<int32_t, std::set<std::string>> Symbols;
  unsigned Next = 0;
};

Error RecordingKernelTy::launchImpl(GenericDeviceTy &, void **,
                                    uint32_t NumArgs, const LaunchDimsTy &Dims,
                                    const KernelArgsTy &, StreamTy &) {
  if (getName() == Owner.FailingKernel)
    return makeError(ErrorCode::BackendError, "fake launch of {0} failed",
                     getName());
  LaunchTy L{getImage().getId(), getName(), NumArgs, Dims, {}};
  bool Init = llvm::StringRef(getName()).ends_with("init");
  auto Start = Owner.Globals.find(
      {L.Image, Init ? "__init_array_start" : "__fini_array_start"});
  auto End = Owner.Globals.find(
      {L.Image, Init ? "__init_array_end" : "__fini_array_end"});
  if (Start != Owner.Globals.end() && End != Owner.Globals.end())
    for (auto **P = static_cast<void **>(Start->second);
         P != static_cast<void **>(End->second); ++P)
      L.Array.push_back(*P);
  Owner.Launches.push_back(L);
  return Error::success();
}

class ImageConstructorsTest : public ::testing::Test {
protected:
  void start(unsigned Version = 18) {
    Plugin.setRuntimeABI(*findDeviceRuntimeABI(Version));
    ASSERT_FALSE(bool(Plugin.init()));
    Device = std::make_unique<ImageDeviceTy>(Plugin);
    ASSERT_FALSE(bool(Device->init()));
  }
  void TearDown() override {
    if (Device)
      EXPECT_FALSE(bool(Device->deinit()));
  }

  /// Load \p Image, an ELF file of machine \p Machine (kept alive by the
  /// fixture); its id.
  Expected<int32_t> load(const ELFBuilderTy &Image, uint16_t Machine) {
    Bytes.push_back(std::make_unique<std::string>(Image.build()));
    std::string &B = *Bytes.back();
    std::memcpy(&B[offsetof(llvm::ELF::Elf64_Ehdr, e_machine)], &Machine,
                sizeof(Machine));
    TgtImages.push_back(std::make_unique<__tgt_device_image>(
        __tgt_device_image{&B[0], &B[0] + B.size(), nullptr, nullptr}));
    auto LoadedImage = Device->loadBinary(*TgtImages.back());
    if (!LoadedImage)
      return LoadedImage.takeError();
    return Loaded++;
  }

  static ELFBuilderTy amdgpuImage(bool Init, bool Fini) {
    ELFBuilderTy B;
    if (Init)
      B.addSymbol("amdgcn.device.init", llvm::ELF::STT_FUNC, 1, 0, 4);
    if (Fini)
      B.addSymbol("amdgcn.device.fini", llvm::ELF::STT_FUNC, 1, 0, 4);
    B.addDataGlobal("x", "1234");
    return B;
  }
  /// An NVPTX image whose constructors have priorities \p Priorities (in
  /// the symbol table's order), with the array bounds unless told not.
  static ELFBuilderTy nvptxImage(std::vector<std::string> Priorities,
                                 bool Bounds = true,
                                 std::vector<std::string> FiniPriorities = {},
                                 bool Fini = false) {
    ELFBuilderTy B;
    B.addSymbol("nvptx$device$init", llvm::ELF::STT_FUNC, 1, 0, 4);
    for (auto [Kind, List] : {std::pair("init", &Priorities),
                              std::pair("fini", &FiniPriorities)}) {
      char Name = 'a';
      for (const std::string &P : *List)
        B.addDataGlobal(std::string("__") + Kind + "_array_object_" + Name++ +
                            "_" + P,
                        std::string(8, '\0'));
    }
    if (Bounds)
      for (const char *Global : {"__init_array_start", "__init_array_end"})
        B.addDataGlobal(Global, std::string(8, '\0'));
    if (Fini) {
      B.addSymbol("nvptx$device$fini", llvm::ELF::STT_FUNC, 1, 0, 4);
      for (const char *Global : {"__fini_array_start", "__fini_array_end"})
        B.addDataGlobal(Global, std::string(8, '\0'));
    }
    return B;
  }

  ScopedEnvTy Vars{{"LIBOMPTARGET_INFO", "LIBOMPTARGET_MEMORY_MANAGER_THRESHOLD"}};
  FakePluginTy Plugin;
  std::unique_ptr<ImageDeviceTy> Device;
  std::vector<std::unique_ptr<std::string>> Bytes;
  std::vector<std::unique_ptr<__tgt_device_image>> TgtImages;
  int32_t Loaded = 0;
};

TEST_F(ImageConstructorsTest, AMDGPUConstructorsRunAtLoadDestructorsAtDeinit) {
  start();
  auto Id = load(amdgpuImage(true, true), llvm::ELF::EM_AMDGPU);
  ASSERT_TRUE(bool(Id)) << llvm::toString(Id.takeError());
  ASSERT_EQ(Device->Launches.size(), 1u);
  const LaunchTy &Init = Device->Launches[0];
  EXPECT_EQ(Init.Kernel, "amdgcn.device.init");
  EXPECT_EQ(Init.NumArgs, 0u) << "no launch environment either";
  EXPECT_EQ(Init.Dims.NumTeams, 1u);
  EXPECT_EQ(Init.Dims.NumThreads, 1u);
  ASSERT_FALSE(bool(Device->deinit()));
  ASSERT_EQ(Device->Launches.size(), 2u);
  EXPECT_EQ(Device->Launches[1].Kernel, "amdgcn.device.fini");
  EXPECT_EQ(Device->Launches[1].NumArgs, 0u);
  Device.reset();
}

TEST_F(ImageConstructorsTest, DestructorsRunOnceLastImageFirst) {
  start();
  ASSERT_TRUE(bool(load(amdgpuImage(false, true), llvm::ELF::EM_AMDGPU)));
  ASSERT_TRUE(bool(load(amdgpuImage(false, false), llvm::ELF::EM_AMDGPU)));
  ASSERT_TRUE(bool(load(amdgpuImage(true, true), llvm::ELF::EM_AMDGPU)));
  ASSERT_EQ(Device->Launches.size(), 1u) << "one image has a constructor";
  ASSERT_FALSE(bool(Device->runImageDestructors()));
  ASSERT_EQ(Device->Launches.size(), 3u);
  EXPECT_EQ(Device->Launches[1].Image, 2);
  EXPECT_EQ(Device->Launches[2].Image, 0);
  // Again (deinit after the exit flush): nothing more.
  ASSERT_FALSE(bool(Device->runImageDestructors()));
  EXPECT_EQ(Device->Launches.size(), 3u);
}

TEST_F(ImageConstructorsTest, NothingUnderOlderVersions) {
  // clang 17 and older make them offload entries libomptarget launches.
  start(17);
  ASSERT_TRUE(bool(load(amdgpuImage(true, true), llvm::ELF::EM_AMDGPU)));
  ASSERT_FALSE(bool(Device->runImageDestructors()));
  EXPECT_TRUE(Device->Launches.empty());
}

TEST_F(ImageConstructorsTest, NothingForHostImages) {
  start();
  ELFBuilderTy B(0x1000);
  B.addSymbol("amdgcn.device.init", llvm::ELF::STT_FUNC, 1, 0, 4);
  B.addSymbol("nvptx$device$init", llvm::ELF::STT_FUNC, 1, 0, 4);
  ASSERT_TRUE(bool(load(B, llvm::ELF::EM_X86_64)));
  EXPECT_TRUE(Device->Launches.empty());
}

TEST_F(ImageConstructorsTest, NVPTXArrayIsSortedByPriority) {
  start();
  size_t Before = Device->live(AllocKindTy::Device);
  auto Id = load(nvptxImage({"200", "100", "65535", "100"}), llvm::ELF::EM_CUDA);
  ASSERT_TRUE(bool(Id)) << llvm::toString(Id.takeError());
  ASSERT_EQ(Device->Launches.size(), 1u);
  const LaunchTy &Init = Device->Launches[0];
  EXPECT_EQ(Init.Kernel, "nvptx$device$init");
  auto Fn = [&](const char *Global) {
    return Device->global(*Id, Global);
  };
  EXPECT_EQ(Init.Array,
            (std::vector<void *>{Fn("__init_array_object_b_100"),
                                 Fn("__init_array_object_d_100"),
                                 Fn("__init_array_object_a_200"),
                                 Fn("__init_array_object_c_65535")}));
  EXPECT_EQ(Device->live(AllocKindTy::Device), Before)
      << "the array is freed once the kernel is done";
}

TEST_F(ImageConstructorsTest, NVPTXWithoutConstructorsGetsAnEmptyArray) {
  start();
  ASSERT_TRUE(bool(load(nvptxImage({}), llvm::ELF::EM_CUDA)));
  ASSERT_EQ(Device->Launches.size(), 1u);
  EXPECT_TRUE(Device->Launches[0].Array.empty());
}

TEST_F(ImageConstructorsTest, NVPTXPriorityMustBeANumber) {
  start();
  auto Id = load(nvptxImage({"high"}), llvm::ELF::EM_CUDA);
  ASSERT_FALSE(bool(Id));
  auto Details = takeErrorDetails(Id.takeError());
  EXPECT_EQ(Details.Code, ErrorCode::InvalidImage);
  EXPECT_EQ(Details.Message,
            "global constructors of image 0 on device 0: "
            "'__init_array_object_a_high' does not end in a priority (0 to "
            "65535)");
  EXPECT_TRUE(Device->Launches.empty());
}

TEST_F(ImageConstructorsTest, NVPTXWithoutArrayBoundsFailsAndLeaksNothing) {
  start();
  size_t Before = Device->live(AllocKindTy::Device);
  auto Id = load(nvptxImage({"1"}, /*Bounds=*/false), llvm::ELF::EM_CUDA);
  ASSERT_FALSE(bool(Id));
  auto Details = takeErrorDetails(Id.takeError());
  EXPECT_EQ(Details.Code, ErrorCode::InvalidImage);
  EXPECT_NE(Details.Message.find("the image has no '__init_array_start'"),
            std::string::npos)
      << Details.Message;
  EXPECT_EQ(Device->live(AllocKindTy::Device), Before);
}

TEST_F(ImageConstructorsTest, FailedConstructorFailsTheLoad) {
  start();
  Device->FailingKernel = "amdgcn.device.init";
  auto Id = load(amdgpuImage(true, true), llvm::ELF::EM_AMDGPU);
  ASSERT_FALSE(bool(Id));
  auto Details = takeErrorDetails(Id.takeError());
  EXPECT_EQ(Details.Code, ErrorCode::BackendError);
  EXPECT_EQ(Details.Message, "global constructors of image 0 on device 0: "
                             "fake launch of amdgcn.device.init failed");
  // The image was not loaded: its destructors never run.
  ASSERT_FALSE(bool(Device->runImageDestructors()));
  EXPECT_TRUE(Device->Launches.empty());
}

TEST_F(ImageConstructorsTest, FailedDestructorIsReportedAtDeinit) {
  start();
  ASSERT_TRUE(bool(load(amdgpuImage(false, true), llvm::ELF::EM_AMDGPU)));
  Device->FailingKernel = "amdgcn.device.fini";
  Error Err = Device->deinit();
  ASSERT_TRUE(bool(Err));
  EXPECT_EQ(takeErrorMessage(std::move(Err)),
            "global destructors of image 0 on device 0: fake launch of "
            "amdgcn.device.fini failed");
  Device.reset();
}

TEST_F(ImageConstructorsTest, NVPTXDestructorsNeedNotTheImageBytesAtDeinit) {
  start();
  auto Id = load(nvptxImage({}, true, {"7", "3"}, /*Fini=*/true), llvm::ELF::EM_CUDA);
  ASSERT_TRUE(bool(Id)) << llvm::toString(Id.takeError());
  // The program unregisters (and may unmap) its image before the device
  // goes down.
  std::memset(&(*Bytes.back())[0], 0, Bytes.back()->size());
  ASSERT_FALSE(bool(Device->runImageDestructors()));
  ASSERT_EQ(Device->Launches.size(), 2u);
  const LaunchTy &Fini = Device->Launches[1];
  EXPECT_EQ(Fini.Kernel, "nvptx$device$fini");
  EXPECT_EQ(Fini.Array,
            (std::vector<void *>{Device->global(*Id, "__fini_array_object_b_3"),
                                 Device->global(*Id, "__fini_array_object_a_7")}));
}

TEST_F(ImageConstructorsTest, NVPTXBadDestructorPriorityFailsTheLoad) {
  start();
  auto Id = load(nvptxImage({}, true, {"x"}, /*Fini=*/true), llvm::ELF::EM_CUDA);
  ASSERT_FALSE(bool(Id));
  EXPECT_EQ(takeErrorMessage(Id.takeError()),
            "global destructors of image 0 on device 0: "
            "'__fini_array_object_a_x' does not end in a priority (0 to "
            "65535)");
  EXPECT_TRUE(Device->Launches.empty()) << "no constructor ran either";
}

} // namespace

// SPDX-License-Identifier: Apache-2.0
//
// The JIT of bitcode images (common/device: BitcodeImage, JITCompiler,
// JITImageCache, JITLinker) and its use by the device framework
// (loadBinary) and the plugin (is_valid_binary), on modules the build's
// clang made at test time (jit/jit-kernel.c).
#include "FakeDevice.h"
#include "ScopedEnv.h"

#include "offloadio/BitcodeImage.h"
#include "offloadio/JITCompiler.h"
#include "offloadio/JITImageCache.h"
#include "offloadio/JITLinker.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

using namespace offloadio;
using namespace offloadio::unittest;
using offloadio::test::ScopedEnvTy;

namespace {

std::string readFile(const std::string &Path) {
  std::ifstream In(Path, std::ios::binary);
  std::stringstream S;
  S << In.rdbuf();
  return S.str();
}

std::string modulePath(const char *Name) {
  return std::string(JIT_TEST_MODULE_DIR) + "/" + Name;
}

/// A scratch file name, removed at the end of the test.
struct TempPathTy {
  std::string Path;
  explicit TempPathTy(const char *Suffix) {
    llvm::SmallString<128> P;
    EXPECT_FALSE(llvm::sys::fs::createTemporaryFile("jit-test", Suffix, P));
    Path = P.str().str();
  }
  ~TempPathTy() { llvm::sys::fs::remove(Path); }
};

/// A target whose "finishing" returns code generation's output as it is,
/// counting the calls.
class PassThroughTargetTy final : public JITTargetTy {
public:
  PassThroughTargetTy(std::string CPU, JITOutputKindTy Kind)
      : CPU(std::move(CPU)), Kind(Kind) {}
  std::string getCPU() const override { return CPU; }
  JITOutputKindTy getOutputKind() const override { return Kind; }
  Expected<std::unique_ptr<llvm::MemoryBuffer>>
  finishImage(std::unique_ptr<llvm::MemoryBuffer> Output) override {
    ++Finished;
    if (Fail)
      return makeError(ErrorCode::BackendError, "fake assembler failed");
    return std::move(Output);
  }
  std::string CPU;
  JITOutputKindTy Kind;
  unsigned Finished = 0;
  bool Fail = false;
};

class JITCompilerTest : public ::testing::Test {
protected:
  std::string NVPTX = readFile(modulePath("nvptx-sm_90.bc"));
  std::string AMDGCN = readFile(modulePath("amdgcn-gfx90a.bc"));
  PassThroughTargetTy PTX{"sm_90", JITOutputKindTy::Assembly};

  std::string compile(const JITSettingsTy &Settings, llvm::StringRef Bitcode,
                      JITTargetTy &Target) {
    JITCompilerTy JIT(Settings);
    auto Out = JIT.compile(Bitcode, Target);
    if (!Out) {
      ADD_FAILURE() << llvm::toString(Out.takeError());
      return "";
    }
    return (*Out)->getBuffer().str();
  }
};

TEST_F(JITCompilerTest, TheTestModulesAreBitcodeOfTheirTargets) {
  ASSERT_FALSE(NVPTX.empty());
  ASSERT_FALSE(AMDGCN.empty());
  EXPECT_TRUE(isBitcodeImage(NVPTX));
  EXPECT_TRUE(isBitcodeImage(AMDGCN));
  EXPECT_FALSE(isBitcodeImage("\x7f"
                              "ELF\x02\x01\x01"));
  EXPECT_FALSE(isBitcodeImage(""));

  auto Target = readBitcodeTarget(NVPTX);
  ASSERT_TRUE(bool(Target)) << llvm::toString(Target.takeError());
  EXPECT_EQ(Target->Triple, "nvptx64-nvidia-cuda");
  EXPECT_EQ(Target->CPU, "sm_90");
  Target = readBitcodeTarget(AMDGCN);
  ASSERT_TRUE(bool(Target)) << llvm::toString(Target.takeError());
  EXPECT_EQ(Target->Triple, "amdgcn-amd-amdhsa");
  EXPECT_EQ(Target->CPU, "gfx90a");
}

TEST_F(JITCompilerTest, TruncatedBitcodeIsRefusedWithItsSize) {
  std::string Truncated = NVPTX.substr(0, NVPTX.size() / 2);
  ASSERT_TRUE(isBitcodeImage(Truncated));
  auto Target = readBitcodeTarget(Truncated);
  ASSERT_FALSE(bool(Target));
  EXPECT_NE(llvm::toString(Target.takeError()).find("does not parse"),
            std::string::npos);
  JITCompilerTy JIT({});
  auto Out = JIT.compile(Truncated, PTX);
  ASSERT_FALSE(bool(Out));
  EXPECT_NE(llvm::toString(Out.takeError())
                .find("bitcode image of " + std::to_string(Truncated.size()) +
                      " bytes does not parse"),
            std::string::npos);
  EXPECT_EQ(PTX.Finished, 0u);
}

TEST_F(JITCompilerTest, ArchitecturesCompareByArchitectureOnly) {
  EXPECT_TRUE(isSameArchitecture("nvptx64-nvidia-cuda", "nvptx64-nvidia-cuda"));
  EXPECT_TRUE(
      isSameArchitecture("nvptx64-unknown-unknown", "nvptx64-nvidia-cuda"));
  EXPECT_FALSE(isSameArchitecture("amdgcn-amd-amdhsa", "nvptx64-nvidia-cuda"));
  EXPECT_FALSE(isSameArchitecture("nvptx-nvidia-cuda", "nvptx64-nvidia-cuda"));
  EXPECT_FALSE(isSameArchitecture("", "nvptx64-nvidia-cuda"));
}

TEST_F(JITCompilerTest, NVPTXBitcodeBecomesPTXForTheDevicesProcessor) {
  std::string Out = compile({}, NVPTX, PTX);
  EXPECT_NE(Out.find(".target sm_90"), std::string::npos) << Out;
  EXPECT_NE(Out.find("jit_test_store"), std::string::npos) << Out;
  EXPECT_EQ(PTX.Finished, 1u);
  // The processor is the device's, not the module's.
  PassThroughTargetTy Other("sm_80", JITOutputKindTy::Assembly);
  Out = compile({}, NVPTX, Other);
  EXPECT_NE(Out.find(".target sm_80"), std::string::npos) << Out;
}

TEST_F(JITCompilerTest, EveryOptimisationLevelCompiles) {
  for (unsigned Level = 0; Level <= 3; ++Level) {
    JITSettingsTy S;
    S.OptLevel = Level;
    EXPECT_NE(compile(S, NVPTX, PTX).find(".target sm_90"), std::string::npos)
        << "level " << Level;
  }
}

TEST_F(JITCompilerTest, DumpsThePreAndPostOptimisationModules) {
  TempPathTy Pre(".pre.ll"), Post(".post.ll");
  JITSettingsTy S;
  S.PreOptIRModule = Pre.Path;
  S.PostOptIRModule = Post.Path;
  compile(S, NVPTX, PTX);
  std::string PreText = readFile(Pre.Path), PostText = readFile(Post.Path);
  EXPECT_NE(PreText.find("target triple = \"nvptx64-nvidia-cuda\""),
            std::string::npos);
  EXPECT_NE(PreText.find("define"), std::string::npos);
  EXPECT_NE(PreText.find("@jit_test_store"), std::string::npos);
  EXPECT_NE(PostText.find("@jit_test_store"), std::string::npos);

  // Without optimisation the module after is the module before.
  S.SkipOpt = true;
  compile(S, NVPTX, PTX);
  EXPECT_EQ(readFile(Pre.Path), readFile(Post.Path));
}

TEST_F(JITCompilerTest, ADumpThatCannotBeWrittenFailsTheCompilation) {
  JITSettingsTy S;
  S.PreOptIRModule = "/nonexistent-dir/pre.ll";
  JITCompilerTy JIT(S);
  auto Out = JIT.compile(NVPTX, PTX);
  ASSERT_FALSE(bool(Out));
  std::string Msg = llvm::toString(Out.takeError());
  EXPECT_NE(Msg.find("LIBOMPTARGET_JIT_PRE_OPT_IR_MODULE=/nonexistent-dir/"
                     "pre.ll"),
            std::string::npos)
      << Msg;
}

TEST_F(JITCompilerTest, AReplacementModuleIsCompiledInstead) {
  JITSettingsTy S;
  S.ReplacementModule = modulePath("nvptx-replacement.ll");
  std::string Out = compile(S, NVPTX, PTX);
  EXPECT_NE(Out.find("jit_test_replacement"), std::string::npos) << Out;
  EXPECT_EQ(Out.find("jit_test_store"), std::string::npos) << Out;

  S.ReplacementModule = "/nonexistent.ll";
  JITCompilerTy JIT(S);
  auto Failed = JIT.compile(NVPTX, PTX);
  ASSERT_FALSE(bool(Failed));
  EXPECT_NE(llvm::toString(Failed.takeError())
                .find("cannot read LIBOMPTARGET_JIT_REPLACEMENT_MODULE="
                      "/nonexistent.ll"),
            std::string::npos);
}

TEST_F(JITCompilerTest, AReplacementObjectIsFinishedWithoutCompiling) {
  TempPathTy Object(".s");
  {
    std::ofstream Out(Object.Path);
    Out << "// not compiled: the user's own PTX\n";
  }
  JITSettingsTy S;
  S.ReplacementObject = Object.Path;
  // Even a module that does not parse: it is never read.
  EXPECT_EQ(compile(S, "BC\xc0\xde", PTX),
            "// not compiled: the user's own PTX\n");
  EXPECT_EQ(PTX.Finished, 1u);
}

TEST_F(JITCompilerTest, TheBackendsFailureIsTheCompilations) {
  PTX.Fail = true;
  JITCompilerTy JIT({});
  auto Image = JIT.getImage(NVPTX, PTX);
  ASSERT_FALSE(bool(Image));
  EXPECT_NE(llvm::toString(Image.takeError()).find("fake assembler failed"),
            std::string::npos);
  EXPECT_EQ(JIT.numCompiledImages(), 0u) << "a failure is not cached";
  PTX.Fail = false;
  EXPECT_TRUE(bool(JIT.getImage(NVPTX, PTX)));
  EXPECT_EQ(JIT.numCompiledImages(), 1u);
}

TEST_F(JITCompilerTest, ImagesAreCompiledOncePerContentAndProcessor) {
  JITCompilerTy JIT({});
  auto First = JIT.getImage(NVPTX, PTX);
  ASSERT_TRUE(bool(First)) << llvm::toString(First.takeError());
  // The same bytes elsewhere (another registration of the same program).
  std::string Copy = NVPTX;
  auto Again = JIT.getImage(Copy, PTX);
  ASSERT_TRUE(bool(Again));
  EXPECT_EQ(Again->data(), First->data());
  EXPECT_EQ(PTX.Finished, 1u);
  // Another processor compiles again.
  PassThroughTargetTy Other("sm_80", JITOutputKindTy::Assembly);
  auto ForOther = JIT.getImage(NVPTX, Other);
  ASSERT_TRUE(bool(ForOther));
  EXPECT_NE(ForOther->data(), First->data());
  EXPECT_EQ(Other.Finished, 1u);
  EXPECT_EQ(JIT.numCompiledImages(), 2u);
}

TEST_F(JITCompilerTest, TheCacheKeysOnContentNotAddress) {
  JITImageCacheTy Cache;
  unsigned Calls = 0;
  auto Make = [&] {
    ++Calls;
    return Expected<std::unique_ptr<llvm::MemoryBuffer>>(
        llvm::MemoryBuffer::getMemBufferCopy("image"));
  };
  std::string A = "bitcode-a", B = "bitcode-b";
  ASSERT_TRUE(bool(Cache.getOrCompile(A, "gfx90a", Make)));
  ASSERT_TRUE(bool(Cache.getOrCompile(std::string(A), "gfx90a", Make)));
  EXPECT_EQ(Calls, 1u);
  ASSERT_TRUE(bool(Cache.getOrCompile(B, "gfx90a", Make)));
  ASSERT_TRUE(bool(Cache.getOrCompile(A, "gfx942", Make)));
  EXPECT_EQ(Calls, 3u);
  EXPECT_EQ(Cache.size(), 3u);
}

TEST_F(JITCompilerTest, AMDGCNBitcodeIsLinkedIntoASharedObject) {
  auto LLD = findLLD(defaultLLDDirectories());
  if (!LLD) {
    GTEST_SKIP() << llvm::toString(LLD.takeError());
  }
  PassThroughTargetTy Object("gfx90a", JITOutputKindTy::Object);
  std::string Relocatable = compile({}, AMDGCN, Object);
  ASSERT_GE(Relocatable.size(), sizeof(llvm::ELF::Elf64_Ehdr));
  auto *Header =
      reinterpret_cast<const llvm::ELF::Elf64_Ehdr *>(Relocatable.data());
  EXPECT_EQ(Header->e_type, llvm::ELF::ET_REL);
  EXPECT_EQ(Header->e_machine, llvm::ELF::EM_AMDGPU);

  auto Linked = linkSharedObject(*LLD, Relocatable, "gfx90a");
  ASSERT_TRUE(bool(Linked)) << llvm::toString(Linked.takeError());
  llvm::StringRef Bytes = (*Linked)->getBuffer();
  ASSERT_GE(Bytes.size(), sizeof(llvm::ELF::Elf64_Ehdr));
  Header = reinterpret_cast<const llvm::ELF::Elf64_Ehdr *>(Bytes.data());
  EXPECT_EQ(Header->e_type, llvm::ELF::ET_DYN);
  EXPECT_EQ(Header->e_machine, llvm::ELF::EM_AMDGPU);
  EXPECT_EQ(Header->e_flags & llvm::ELF::EF_AMDGPU_MACH,
            unsigned(llvm::ELF::EF_AMDGPU_MACH_AMDGCN_GFX90A));
}

TEST_F(JITCompilerTest, NoLinkerNamesWhatWasSearched) {
  ScopedEnvTy Path{"PATH"};
  ScopedEnvTy::set("PATH", "/nonexistent-bin");
  auto LLD = findLLD({"/nonexistent-llvm/bin"});
  ASSERT_FALSE(bool(LLD));
  std::string Msg = llvm::toString(LLD.takeError());
  EXPECT_NE(Msg.find("no 'lld' or 'ld.lld' on PATH nor in "
                     "/nonexistent-llvm/bin"),
            std::string::npos)
      << Msg;
  // The build's LLVM bin directory is searched when PATH has none.
  auto Found = findLLD(defaultLLDDirectories());
  if (Found)
    EXPECT_EQ(llvm::sys::path::parent_path(Found->Path),
              defaultLLDDirectories().front());
}

TEST_F(JITCompilerTest, SettingsAreReadWithTheStockNames) {
  ScopedEnvTy Vars{"LIBOMPTARGET_JIT_OPT_LEVEL",
                   "LIBOMPTARGET_JIT_SKIP_OPT",
                   "LIBOMPTARGET_JIT_PRE_OPT_IR_MODULE",
                   "LIBOMPTARGET_JIT_POST_OPT_IR_MODULE",
                   "LIBOMPTARGET_JIT_REPLACEMENT_MODULE",
                   "LIBOMPTARGET_JIT_REPLACEMENT_OBJECT"};
  JITSettingsTy Default = JITSettingsTy::fromEnv();
  EXPECT_EQ(Default.OptLevel, 3u);
  EXPECT_FALSE(Default.SkipOpt);
  EXPECT_FALSE(Default.PreOptIRModule);
  EXPECT_FALSE(Default.ReplacementObject);
  ScopedEnvTy::set("LIBOMPTARGET_JIT_OPT_LEVEL", "1");
  ScopedEnvTy::set("LIBOMPTARGET_JIT_SKIP_OPT", "true");
  ScopedEnvTy::set("LIBOMPTARGET_JIT_PRE_OPT_IR_MODULE", "/tmp/pre.ll");
  ScopedEnvTy::set("LIBOMPTARGET_JIT_POST_OPT_IR_MODULE", "");
  ScopedEnvTy::set("LIBOMPTARGET_JIT_REPLACEMENT_MODULE", "/tmp/m.bc");
  ScopedEnvTy::set("LIBOMPTARGET_JIT_REPLACEMENT_OBJECT", "/tmp/o.s");
  JITSettingsTy S = JITSettingsTy::fromEnv();
  EXPECT_EQ(S.OptLevel, 1u);
  EXPECT_TRUE(S.SkipOpt);
  EXPECT_EQ(S.PreOptIRModule.value_or(""), "/tmp/pre.ll");
  EXPECT_FALSE(S.PostOptIRModule) << "empty names no file";
  EXPECT_EQ(S.ReplacementModule.value_or(""), "/tmp/m.bc");
  EXPECT_EQ(S.ReplacementObject.value_or(""), "/tmp/o.s");
  // Beyond 3 is refused (the stock plugin would abort) and reported.
  ScopedEnvTy::set("LIBOMPTARGET_JIT_OPT_LEVEL", "4");
  std::string Stderr;
  S = ScopedEnvTy::captured([] { return JITSettingsTy::fromEnv(); }, Stderr);
  EXPECT_EQ(S.OptLevel, 3u);
  EXPECT_NE(Stderr.find("LIBOMPTARGET_JIT_OPT_LEVEL"), std::string::npos);
}

// ---- The device framework and the plugin ------------------------------

/// A plugin whose devices compile nvptx64 bitcode for \p CPU.
class JITPluginTy final : public GenericPluginTy {
public:
  JITPluginTy() : GenericPluginTy("jit-fake") {}
  bool AcceptCPU = true;
  std::string LastCPU, LastArch;

protected:
  Expected<int32_t> initImpl() override { return 1; }
  Expected<std::unique_ptr<GenericDeviceTy>>
  createDeviceImpl(int32_t) override {
    return notHere("devices from the plugin");
  }
  bool isImageCompatibleImpl(const __tgt_device_image &,
                             llvm::StringRef) override {
    return false;
  }
  llvm::StringRef getJITTripleImpl() const override {
    return "nvptx64-nvidia-cuda";
  }
  bool isBitcodeCompatibleImpl(llvm::StringRef CPU,
                               llvm::StringRef Arch) override {
    LastCPU = CPU.str();
    LastArch = Arch.str();
    return AcceptCPU;
  }
  Expected<void *> pinHostMemoryImpl(void *HstPtr, size_t) override {
    return HstPtr;
  }
  Error unpinHostMemoryImpl(void *, void *, size_t) override {
    return Error::success();
  }
};

/// A device that compiles for sm_90 and records the image it is given.
class JITDeviceTy final : public FakeDeviceTy {
public:
  JITDeviceTy(GenericPluginTy &Plugin, bool Compiles)
      : FakeDeviceTy(Plugin, /*HostAddressable=*/true), Compiles(Compiles) {}
  PassThroughTargetTy Target{"sm_90", JITOutputKindTy::Assembly};
  std::string Loaded;
  const void *LoadedAt = nullptr;

protected:
  Error initImpl(DeviceLimitsTy &) override { return Error::success(); }
  JITTargetTy *getJITTargetImpl() override {
    return Compiles ? &Target : nullptr;
  }
  Expected<std::unique_ptr<DeviceImageTy>>
  loadImageImpl(const __tgt_device_image &TgtImage, int32_t Id) override {
    auto Image = std::make_unique<DeviceImageTy>(Id, TgtImage);
    Loaded = Image->getBytes().str();
    LoadedAt = TgtImage.ImageStart;
    return std::move(Image);
  }
  Expected<bool> writeImageGlobalImpl(DeviceImageTy &, llvm::StringRef,
                                      const void *, size_t) override {
    return false;
  }

private:
  bool Compiles;
};

__tgt_device_image imageOf(std::string &Bytes) {
  return {&Bytes[0], &Bytes[0] + Bytes.size(), nullptr, nullptr};
}

TEST_F(JITCompilerTest, IsValidBinaryTakesBitcodeOfThePluginsTriple) {
  JITPluginTy Plugin;
  __tgt_device_image Image = imageOf(NVPTX);
  EXPECT_TRUE(Plugin.isValidBinary(Image, nullptr));
  EXPECT_EQ(Plugin.LastCPU, "sm_90");
  EXPECT_EQ(Plugin.LastArch, "");
  EXPECT_TRUE(Plugin.isValidBinary(Image, "sm_90"));
  EXPECT_EQ(Plugin.LastArch, "sm_90");
  // The backend's word on the processor is final.
  Plugin.AcceptCPU = false;
  EXPECT_FALSE(Plugin.isValidBinary(Image, nullptr));
  Plugin.AcceptCPU = true;
  // Bitcode for another triple is refused before the backend is asked.
  __tgt_device_image Other = imageOf(AMDGCN);
  Plugin.LastCPU.clear();
  EXPECT_FALSE(Plugin.isValidBinary(Other, nullptr));
  EXPECT_EQ(Plugin.LastCPU, "");
  // So is bitcode that does not parse.
  std::string Truncated = NVPTX.substr(0, 64);
  __tgt_device_image Bad = imageOf(Truncated);
  EXPECT_FALSE(Plugin.isValidBinary(Bad, nullptr));
}

TEST_F(JITCompilerTest, APluginWithoutAJITRefusesBitcode) {
  FakePluginTy Plugin;
  __tgt_device_image Image = imageOf(NVPTX);
  EXPECT_FALSE(Plugin.isValidBinary(Image, nullptr));
}

TEST_F(JITCompilerTest, LoadBinaryHandsTheBackendTheCompiledImage) {
  JITPluginTy Plugin;
  ASSERT_FALSE(bool(Plugin.init()));
  JITDeviceTy A(Plugin, true), B(Plugin, true);
  ASSERT_FALSE(bool(A.init()));
  ASSERT_FALSE(bool(B.init()));
  __tgt_device_image Image = imageOf(NVPTX);
  auto LoadedA = A.loadBinary(Image);
  ASSERT_TRUE(bool(LoadedA)) << llvm::toString(LoadedA.takeError());
  EXPECT_NE(A.Loaded.find(".target sm_90"), std::string::npos);
  EXPECT_NE(A.LoadedAt, Image.ImageStart);
  EXPECT_TRUE((*LoadedA)->isCompiledFromBitcode());
  EXPECT_EQ((*LoadedA)->getTgtImage().EntriesBegin, Image.EntriesBegin);
  // The second device of the same processor gets the same compiled image.
  auto LoadedB = B.loadBinary(Image);
  ASSERT_TRUE(bool(LoadedB)) << llvm::toString(LoadedB.takeError());
  EXPECT_EQ(B.LoadedAt, A.LoadedAt);
  EXPECT_EQ(A.Target.Finished + B.Target.Finished, 1u);
  EXPECT_EQ(Plugin.getJIT().numCompiledImages(), 1u);
  EXPECT_FALSE(bool(A.deinit()));
  EXPECT_FALSE(bool(B.deinit()));
}

TEST_F(JITCompilerTest, NativeImagesAreLoadedAsTheyAre) {
  JITPluginTy Plugin;
  ASSERT_FALSE(bool(Plugin.init()));
  JITDeviceTy Device(Plugin, true);
  ASSERT_FALSE(bool(Device.init()));
  std::string Native = "\x7f"
                       "ELF not bitcode";
  __tgt_device_image Image = imageOf(Native);
  auto Loaded = Device.loadBinary(Image);
  ASSERT_TRUE(bool(Loaded)) << llvm::toString(Loaded.takeError());
  EXPECT_EQ(Device.LoadedAt, Image.ImageStart);
  EXPECT_FALSE((*Loaded)->isCompiledFromBitcode());
  EXPECT_EQ(Device.Target.Finished, 0u);
  EXPECT_FALSE(bool(Device.deinit()));
}

TEST_F(JITCompilerTest, ABackendWithoutAJITFailsTheLoadByName) {
  JITPluginTy Plugin;
  ASSERT_FALSE(bool(Plugin.init()));
  JITDeviceTy Device(Plugin, false);
  ASSERT_FALSE(bool(Device.init()));
  __tgt_device_image Image = imageOf(NVPTX);
  auto Loaded = Device.loadBinary(Image);
  ASSERT_FALSE(bool(Loaded));
  EXPECT_NE(llvm::toString(Loaded.takeError())
                .find("the jit-fake plugin compiles no bitcode images"),
            std::string::npos);
  EXPECT_FALSE(bool(Device.deinit()));
}

TEST_F(JITCompilerTest, ACompilationFailureFailsTheLoadNamingTheImage) {
  JITPluginTy Plugin;
  ASSERT_FALSE(bool(Plugin.init()));
  JITDeviceTy Device(Plugin, true);
  ASSERT_FALSE(bool(Device.init()));
  Device.Target.Fail = true;
  __tgt_device_image Image = imageOf(NVPTX);
  auto Loaded = Device.loadBinary(Image);
  ASSERT_FALSE(bool(Loaded));
  std::string Msg = llvm::toString(Loaded.takeError());
  EXPECT_NE(Msg.find("cannot compile the bitcode image at"), std::string::npos)
      << Msg;
  EXPECT_NE(Msg.find("for sm_90 on device 0: fake assembler failed"),
            std::string::npos)
      << Msg;
  EXPECT_FALSE(bool(Device.deinit()));
}

} // namespace

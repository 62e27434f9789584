// SPDX-License-Identifier: Apache-2.0
//
// readImageGlobal, imageHasSymbol and readExecMode on ELF images built in
// memory: a cubin-like relocatable layout (symbol values are section
// offsets) and a shared-object layout (values are addresses), globals in
// file-backed and zero-filled sections, undefined driver functions, and
// malformed symbols.
#include "offloadio/DeviceRuntimeABI.h"
#include "offloadio/ImageSymbols.h"
#include "offloadio/Kernel.h"

#include "ELFImageBuilder.h"

#include "llvm/BinaryFormat/ELF.h"

#include "gtest/gtest.h"

#include <cstring>
#include <string>
#include <tuple>
#include <vector>

using namespace offloadio;
using offloadio::unittest::ELFBuilderTy;

namespace {

/// The image a clang 16 nvptx build of a program with a generic-mode and a
/// generic-SPMD kernel, one of which calls printf, looks like.
ELFBuilderTy kernelImage(uint64_t DataAddress) {
  ELFBuilderTy B(DataAddress);
  B.addDataGlobal("__omp_offloading_10_main_l4_exec_mode", "\x01");
  B.addDataGlobal("__omp_offloading_10_main_l7_exec_mode", "\x03");
  B.addDataGlobal("__omp_offloading_10_main_l9_exec_mode", "\x02");
  B.addDataGlobal("table", "abcdefgh");
  B.addBssGlobal("zeros", 16);
  B.addSymbol("vprintf", llvm::ELF::STT_FUNC, llvm::ELF::SHN_UNDEF, 0, 0);
  return B;
}

class ImageSymbolsTest : public ::testing::TestWithParam<uint64_t> {};

/// The execution mode libomptarget 16's conventions read for \p Kernel.
Expected<ExecModeTy> readExecMode(llvm::StringRef Image,
                                  llvm::StringRef Kernel) {
  auto Config = findDeviceRuntimeABI(16)->readKernelConfig(Image, Kernel);
  if (!Config)
    return Config.takeError();
  return Config->ExecMode;
}

TEST_P(ImageSymbolsTest, ReadsInitialBytesOfGlobals) {
  std::string Image = kernelImage(GetParam()).build();
  auto Table = readImageGlobal(Image, "table");
  ASSERT_TRUE(bool(Table)) << takeErrorMessage(Table.takeError());
  ASSERT_TRUE(Table->has_value());
  EXPECT_EQ(**Table, "abcdefgh");
  // A view into the image, not a copy.
  EXPECT_GE((*Table)->data(), Image.data());
  EXPECT_LE((*Table)->end(), Image.data() + Image.size());

  auto Missing = readImageGlobal(Image, "tabl");
  ASSERT_TRUE(bool(Missing));
  EXPECT_FALSE(Missing->has_value());
  // A function of that name is not a global.
  auto Function = readImageGlobal(Image, "vprintf");
  ASSERT_TRUE(bool(Function));
  EXPECT_FALSE(Function->has_value());
}

TEST_P(ImageSymbolsTest, ReadsEachKernelsExecutionMode) {
  std::string Image = kernelImage(GetParam()).build();
  auto Mode = [&](const char *Kernel) {
    auto M = readExecMode(Image, Kernel);
    EXPECT_TRUE(bool(M)) << takeErrorMessage(M.takeError());
    return M ? *M : ExecModeTy(0);
  };
  EXPECT_EQ(Mode("__omp_offloading_10_main_l4"), ExecModeTy::Generic);
  EXPECT_EQ(Mode("__omp_offloading_10_main_l7"), ExecModeTy::GenericSPMD);
  EXPECT_EQ(Mode("__omp_offloading_10_main_l9"), ExecModeTy::SPMD);
  // Kernels without a record are SPMD, as with libomptarget 16.
  EXPECT_EQ(Mode("not_openmp"), ExecModeTy::SPMD);
}

TEST_P(ImageSymbolsTest, FindsUndefinedDriverFunctions) {
  std::string Image = kernelImage(GetParam()).build();
  EXPECT_TRUE(imageHasSymbol(Image, "vprintf"));
  EXPECT_TRUE(imageHasSymbol(Image, "table"));
  EXPECT_FALSE(imageHasSymbol(Image, "printf"));
  EXPECT_FALSE(imageHasSymbol(Image, "vprintf2"));
  ELFBuilderTy Quiet(GetParam());
  Quiet.addDataGlobal("k_exec_mode", "\x02");
  EXPECT_FALSE(imageHasSymbol(Quiet.build(), "vprintf"));
}

INSTANTIATE_TEST_SUITE_P(Layouts, ImageSymbolsTest,
                         ::testing::Values(0, 0x10000));

TEST(ImageSymbols, ZeroFilledAndOutOfRangeGlobalsAreErrors) {
  ELFBuilderTy B;
  B.addDataGlobal("ok", "x");
  B.addBssGlobal("zeros", 16);
  B.addSymbol("past_end", llvm::ELF::STT_OBJECT, ELFBuilderTy::DataIndex, 0,
              1 << 20);
  B.addSymbol("wrapping", llvm::ELF::STT_OBJECT, ELFBuilderTy::DataIndex,
              UINT64_MAX - 1, 4);
  B.addSymbol("no_section", llvm::ELF::STT_OBJECT, 40, 0, 1);
  std::string Image = B.build();
  for (const char *Name : {"zeros", "past_end", "wrapping", "no_section"}) {
    auto R = readImageGlobal(Image, Name);
    ASSERT_FALSE(bool(R)) << Name;
    std::string Msg = takeErrorMessage(R.takeError());
    EXPECT_NE(Msg.find(Name), std::string::npos) << Msg;
  }
  EXPECT_TRUE(bool(readImageGlobal(Image, "ok")));
}

TEST(ImageSymbols, BadExecutionModeRecordsAreErrors) {
  ELFBuilderTy B;
  B.addDataGlobal("wide_exec_mode", std::string("\x02\x00\x00\x00", 4));
  B.addDataGlobal("zero_exec_mode", std::string(1, '\0'));
  B.addDataGlobal("four_exec_mode", "\x04");
  std::string Image = B.build();
  for (const char *Kernel : {"wide", "zero", "four"}) {
    auto M = readExecMode(Image, Kernel);
    ASSERT_FALSE(bool(M)) << Kernel;
    std::string Msg = takeErrorMessage(M.takeError());
    EXPECT_NE(Msg.find(Kernel), std::string::npos) << Msg;
  }
}

TEST(ImageSymbols, NonELFImagesHaveNoSymbols) {
  for (std::string Image :
       {std::string(), std::string("//\n// PTX text vprintf\n.version 8.0"),
        std::string("\x7f" "ELF", 4), std::string(64, '\x7f')}) {
    EXPECT_FALSE(imageHasSymbol(Image, "vprintf"));
    auto G = readImageGlobal(Image, "vprintf");
    ASSERT_TRUE(bool(G));
    EXPECT_FALSE(G->has_value());
    auto M = readExecMode(Image, "k");
    ASSERT_TRUE(bool(M));
    EXPECT_EQ(*M, ExecModeTy::SPMD);
  }
  // A truncated real image: its section headers are gone.
  std::string Image = kernelImage(0).build();
  Image.resize(Image.size() / 2);
  EXPECT_FALSE(imageHasSymbol(Image, "vprintf"));
}

TEST(ImageSymbols, SymbolsWithAPrefixInTableOrder) {
  ELFBuilderTy B;
  B.addDataGlobal("__init_array_object_b_101", std::string(8, '\0'));
  B.addDataGlobal("other", "x");
  B.addDataGlobal("__init_array_object_a_65535", std::string(8, '\0'));
  // Undefined symbols are not the image's.
  B.addSymbol("__init_array_object_undef_1", llvm::ELF::STT_NOTYPE,
              llvm::ELF::SHN_UNDEF, 0, 0);
  std::string Image = B.build();
  // An AMDGPU code object's machine.
  const uint16_t Machine = llvm::ELF::EM_AMDGPU;
  std::memcpy(&Image[offsetof(llvm::ELF::Elf64_Ehdr, e_machine)], &Machine,
              sizeof(Machine));
  EXPECT_EQ(imageSymbolsWithPrefix(Image, "__init_array_object_"),
            (std::vector<std::string>{"__init_array_object_b_101",
                                      "__init_array_object_a_65535"}));
  EXPECT_TRUE(imageSymbolsWithPrefix(Image, "__fini_array_object_").empty());
  EXPECT_EQ(imageMachine(Image), std::optional<uint16_t>(llvm::ELF::EM_AMDGPU));
  EXPECT_EQ(imageMachine(ELFBuilderTy().build()),
            std::optional<uint16_t>(llvm::ELF::EM_CUDA));
  EXPECT_FALSE(imageMachine("not an image"));
  EXPECT_TRUE(imageSymbolsWithPrefix("not an image", "").empty());
}

} // namespace

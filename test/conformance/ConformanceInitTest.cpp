// SPDX-License-Identifier: Apache-2.0
//
// Conformance: loading a plugin and initialising it and its devices, and
// the dynamic symbols it exports, read from its ELF file.
#include "ConformanceFixture.h"

#include "gtest/gtest.h"

#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include <elf.h>

namespace offloadio::conformance {

namespace {

/// Names of the defined global/weak symbols of \p Path's .dynsym, without
/// the version-definition symbols (nm -D --defined-only, less "A VERS1.0").
::testing::AssertionResult readDynamicExports(const std::string &Path,
                                              std::set<std::string> &Names) {
  std::ifstream In(Path, std::ios::binary);
  std::vector<char> Bytes((std::istreambuf_iterator<char>(In)),
                          std::istreambuf_iterator<char>());
  if (Bytes.size() < sizeof(Elf64_Ehdr))
    return ::testing::AssertionFailure() << "cannot read " << Path;
  const char *Base = Bytes.data();
  auto *Eh = reinterpret_cast<const Elf64_Ehdr *>(Base);
  if (std::memcmp(Eh->e_ident, ELFMAG, SELFMAG) != 0 ||
      Eh->e_ident[EI_CLASS] != ELFCLASS64)
    return ::testing::AssertionFailure() << Path << " is not a 64-bit ELF";
  if (Eh->e_shoff + size_t(Eh->e_shnum) * sizeof(Elf64_Shdr) > Bytes.size())
    return ::testing::AssertionFailure() << Path << ": bad section table";
  auto *Sh = reinterpret_cast<const Elf64_Shdr *>(Base + Eh->e_shoff);
  auto InFile = [&](const Elf64_Shdr &S) {
    return S.sh_offset + S.sh_size <= Bytes.size();
  };

  // Version definition names ("VERS1.0") appear in .dynsym as absolute
  // symbols; they are not exported functions.
  std::set<std::string> VersionNames;
  for (unsigned I = 0; I < Eh->e_shnum; ++I) {
    if (Sh[I].sh_type != SHT_GNU_verdef || !InFile(Sh[I]) ||
        Sh[I].sh_link >= Eh->e_shnum)
      continue;
    const Elf64_Shdr &Str = Sh[Sh[I].sh_link];
    const char *Def = Base + Sh[I].sh_offset;
    for (unsigned N = 0; N < Sh[I].sh_info; ++N) {
      auto *VD = reinterpret_cast<const Elf64_Verdef *>(Def);
      if (VD->vd_cnt) {
        auto *Aux = reinterpret_cast<const Elf64_Verdaux *>(Def + VD->vd_aux);
        VersionNames.insert(Base + Str.sh_offset + Aux->vda_name);
      }
      if (!VD->vd_next)
        break;
      Def += VD->vd_next;
    }
  }

  bool Found = false;
  for (unsigned I = 0; I < Eh->e_shnum; ++I) {
    if (Sh[I].sh_type != SHT_DYNSYM)
      continue;
    Found = true;
    if (!InFile(Sh[I]) || Sh[I].sh_link >= Eh->e_shnum ||
        !InFile(Sh[Sh[I].sh_link]))
      return ::testing::AssertionFailure() << Path << ": bad .dynsym";
    const Elf64_Shdr &Str = Sh[Sh[I].sh_link];
    auto *Sym = reinterpret_cast<const Elf64_Sym *>(Base + Sh[I].sh_offset);
    size_t Count = Sh[I].sh_size / sizeof(Elf64_Sym);
    for (size_t S = 1; S < Count; ++S) {
      if (Sym[S].st_shndx == SHN_UNDEF)
        continue;
      unsigned Bind = ELF64_ST_BIND(Sym[S].st_info);
      if (Bind != STB_GLOBAL && Bind != STB_WEAK && Bind != STB_GNU_UNIQUE)
        continue;
      if (Sym[S].st_name >= Str.sh_size)
        return ::testing::AssertionFailure() << Path << ": bad symbol name";
      std::string Name = Base + Str.sh_offset + Sym[S].st_name;
      if (Sym[S].st_shndx == SHN_ABS && VersionNames.count(Name))
        continue;
      Names.insert(Name);
    }
  }
  if (!Found)
    return ::testing::AssertionFailure() << Path << " has no .dynsym";
  return ::testing::AssertionSuccess();
}

} // namespace

TEST_P(PluginConformance, ExportsExactlyTheTgtRtlEntryPoints) {
  // Every dynamic export is a __tgt_rtl* name: the entry points the
  // libomptarget version of this build looks up (ConformanceABI.h), all
  // present, plus, in our plugins, the one
  // discovery entry point of the project's extensions,
  // __tgt_rtl_ompx_extensions (README),
  // where no libomptarget will ever look; the extension calls are reached
  // through its table, not exported. Anything else exported could
  // interpose on (or be interposed by) symbols of the program, libLLVM or
  // other plugins.
  std::set<std::string> Exports;
  ASSERT_TRUE(readDynamicExports(P->Path, Exports));
  std::vector<std::string> Foreign, Unknown, Missing, Extensions;
  for (const std::string &N : Exports) {
    if (N.rfind("__tgt_rtl", 0) != 0)
      Foreign.push_back(N);
    else if (expectedExports().count(N))
      continue;
    else if (N == "__tgt_rtl_ompx_extensions")
      Extensions.push_back(N);
    else
      Unknown.push_back(N);
  }
  for (const std::string &N : expectedExports())
    if (!Exports.count(N))
      Missing.push_back(N);
  auto Join = [](const std::vector<std::string> &V) {
    std::string S;
    for (size_t I = 0; I < V.size() && I < 20; ++I)
      S += (I ? ", " : "") + V[I];
    if (V.size() > 20)
      S += ", ... (" + std::to_string(V.size()) + " in all)";
    return S;
  };
  EXPECT_TRUE(Foreign.empty()) << "exports beyond __tgt_rtl*: " << Join(Foreign);
  EXPECT_TRUE(Unknown.empty())
      << "__tgt_rtl_* names that are neither entry points of libomptarget "
      << ConformanceABIVersion << " "
         "nor the extensions' discovery entry point (extension calls are "
         "reached through its table, not exported): "
      << Join(Unknown);
  // A stock plugin (tools/hsa-emu/stock-conformance.sh) has none; ours the
  // discovery entry point alone, whose table PluginDirectoryTest and the
  // batch conformance tests use.
  if (!Extensions.empty())
    RecordProperty("extensions", Join(Extensions));
  // The plugins of this build (no other directory named) are ours.
  const char *OtherDir = std::getenv("OFFLOADIO_CONFORMANCE_PLUGIN_DIR");
  if (!OtherDir || !*OtherDir)
    EXPECT_EQ(Extensions,
              std::vector<std::string>{"__tgt_rtl_ompx_extensions"})
        << "the discovery entry point is not exported";
  EXPECT_TRUE(Missing.empty())
      << "entry points not exported: " << Join(Missing);
  // What the file says is exported must also be what the loader finds.
  EXPECT_TRUE(P->Missing.empty()) << "dlsym failed for " << Join(P->Missing);
}

TEST_P(PluginConformance, InitTwiceIsHarmless) {
  // SetUp called init_plugin once already.
  EXPECT_EQ(P->init_plugin(), OFFLOAD_SUCCESS);
  EXPECT_EQ(P->init_plugin(), OFFLOAD_SUCCESS);
  EXPECT_EQ(P->number_of_devices(), NumDevices);
  if (NumDevices == 0)
    return;
  ASSERT_NE(P->init_device, nullptr);
  EXPECT_EQ(P->init_device(0), OFFLOAD_SUCCESS);
  EXPECT_EQ(P->init_device(0), OFFLOAD_SUCCESS);
  // init_requires runs before every init_device (its answer: see
  // InitRequiresAnswersAsTheVersionExpects).
  ASSERT_NE(P->init_requires, nullptr);
  P->init_requires(offloadio::OMP_REQ_NONE);
  EXPECT_EQ(P->init_device(0), OFFLOAD_SUCCESS);
  // The device still works.
  ASSERT_NE(P->data_alloc, nullptr);
  void *Tgt = P->data_alloc(0, 64, nullptr, KindDefault);
  ASSERT_NE(Tgt, nullptr);
  EXPECT_EQ(P->data_delete(0, Tgt, KindDefault), OFFLOAD_SUCCESS);
}

TEST_P(PluginConformance, InitRequiresAnswersAsTheVersionExpects) {
  // 16 and 17 ignore the answer (the stock plugins echo the flags); 18
  // hides every device whose init_requires answers anything but 0.
  ASSERT_NE(P->init_requires, nullptr);
  for (int64_t Flags :
       {int64_t(offloadio::OMP_REQ_NONE),
        int64_t(offloadio::OMP_REQ_UNIFIED_SHARED_MEMORY),
        int64_t(offloadio::OMP_REQ_NONE | offloadio::OMP_REQ_DYNAMIC_ALLOCATORS)})
    EXPECT_EQ(P->init_requires(Flags), expectedInitRequiresAnswer(Flags))
        << "flags 0x" << std::hex << Flags;
  // Leave the plugin as the other cases expect it.
  P->init_requires(offloadio::OMP_REQ_NONE);
  if (NumDevices > 0)
    EXPECT_EQ(P->init_device(0), OFFLOAD_SUCCESS);
}

TEST_P(PluginConformance, InitDeviceOutOfRangeFails) {
  ASSERT_NE(P->init_device, nullptr);
  for (int32_t Id : {NumDevices, NumDevices + 1, INT32_MAX, -1, INT32_MIN})
    EXPECT_NE(P->init_device(Id), OFFLOAD_SUCCESS) << "device " << Id;
  // Entry points on a device that does not exist fail too.
  ASSERT_NE(P->data_alloc, nullptr);
  EXPECT_EQ(P->data_alloc(NumDevices, 64, nullptr, KindDefault), nullptr);
  EXPECT_EQ(P->data_alloc(-1, 64, nullptr, KindDefault), nullptr);
  ASSERT_NE(P->data_lock, nullptr);
  char Buf[64];
  void *Out = Buf;
  EXPECT_NE(P->data_lock(NumDevices, Buf, sizeof(Buf), &Out), OFFLOAD_SUCCESS);
  EXPECT_EQ(Out, nullptr);
  EXPECT_NE(P->data_unlock(NumDevices, Buf), OFFLOAD_SUCCESS);
}

} // namespace offloadio::conformance

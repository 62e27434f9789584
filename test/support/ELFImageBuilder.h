// SPDX-License-Identifier: Apache-2.0
//
// ELF images built in memory for the tests that read device images
// (ImageSymbolsTest, RuntimeABIConventionsTest): globals in a file-backed
// .data and a zero-filled .bss, and any further symbol.
#ifndef OFFLOADIO_TEST_SUPPORT_ELFIMAGEBUILDER_H
#define OFFLOADIO_TEST_SUPPORT_ELFIMAGEBUILDER_H

#include "llvm/BinaryFormat/ELF.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

namespace offloadio::unittest {

/// Builds a 64-bit little-endian ELF file with a .data section, a .bss
/// section, and a symbol table.
class ELFBuilderTy {
public:
  /// \p DataAddress: sh_addr of .data and .bss (0 in cubins and
  /// relocatable objects).
  explicit ELFBuilderTy(uint64_t DataAddress = 0) : DataAddress(DataAddress) {
    Strings.push_back('\0');
    Symbols.emplace_back(); // The null symbol.
  }

  /// A global of \p Bytes in .data; returns its offset there.
  void addDataGlobal(const std::string &Name, const std::string &Bytes) {
    addSymbol(Name, llvm::ELF::STT_OBJECT, DataIndex,
              DataAddress + Data.size(), Bytes.size());
    Data += Bytes;
  }
  /// A zero-filled global of \p Size bytes in .bss.
  void addBssGlobal(const std::string &Name, uint64_t Size) {
    addSymbol(Name, llvm::ELF::STT_OBJECT, BssIndex, DataAddress + BssSize,
              Size);
    BssSize += Size;
  }
  /// Any symbol, for malformed cases and undefined functions.
  void addSymbol(const std::string &Name, unsigned Type, uint16_t Section,
                 uint64_t Value, uint64_t Size) {
    llvm::ELF::Elf64_Sym Sym{};
    Sym.st_name = uint32_t(Strings.size());
    Sym.setBindingAndType(llvm::ELF::STB_GLOBAL, Type);
    Sym.st_shndx = Section;
    Sym.st_value = Value;
    Sym.st_size = Size;
    Symbols.push_back(Sym);
    Strings.insert(Strings.end(), Name.begin(), Name.end());
    Strings.push_back('\0');
  }

  std::string build() const {
    // Layout: header, .data, .symtab, .strtab, .shstrtab, section headers.
    static const char SectionNames[] =
        "\0.data\0.bss\0.symtab\0.strtab\0.shstrtab";
    std::string ShStrings(SectionNames, sizeof(SectionNames));
    std::string Out(sizeof(llvm::ELF::Elf64_Ehdr), '\0');
    auto Append = [&](const void *P, size_t N) {
      size_t At = Out.size();
      Out.append(static_cast<const char *>(P), N);
      return At;
    };
    while (Out.size() % 8)
      Out.push_back('\0');
    size_t DataOff = Append(Data.data(), Data.size());
    while (Out.size() % 8)
      Out.push_back('\0');
    size_t SymOff = Append(Symbols.data(),
                           Symbols.size() * sizeof(llvm::ELF::Elf64_Sym));
    size_t StrOff = Append(Strings.data(), Strings.size());
    size_t ShStrOff = Append(ShStrings.data(), ShStrings.size());
    while (Out.size() % 8)
      Out.push_back('\0');

    std::vector<llvm::ELF::Elf64_Shdr> Sections(6);
    auto Set = [&](unsigned Index, uint32_t Name, uint32_t Type,
                   uint64_t Offset, uint64_t Size) -> llvm::ELF::Elf64_Shdr & {
      auto &Sec = Sections[Index];
      Sec.sh_name = Name;
      Sec.sh_type = Type;
      Sec.sh_offset = Offset;
      Sec.sh_size = Size;
      return Sec;
    };
    for (auto [Index, Name, Type, Size] :
         {std::tuple(DataIndex, 1u, llvm::ELF::SHT_PROGBITS, Data.size()),
          std::tuple(BssIndex, 7u, llvm::ELF::SHT_NOBITS, size_t(BssSize))}) {
      auto &Sec = Set(Index, Name, Type, DataOff, Size);
      Sec.sh_flags = llvm::ELF::SHF_ALLOC | llvm::ELF::SHF_WRITE;
      Sec.sh_addr = DataAddress;
    }
    auto &Sym = Set(3, 12, llvm::ELF::SHT_SYMTAB, SymOff,
                    Symbols.size() * sizeof(llvm::ELF::Elf64_Sym));
    Sym.sh_link = 4;
    Sym.sh_info = 1;
    Sym.sh_entsize = sizeof(llvm::ELF::Elf64_Sym);
    Sym.sh_addralign = 8;
    Set(4, 20, llvm::ELF::SHT_STRTAB, StrOff, Strings.size());
    Set(5, 28, llvm::ELF::SHT_STRTAB, ShStrOff, ShStrings.size());
    size_t ShOff = Append(Sections.data(),
                          Sections.size() * sizeof(llvm::ELF::Elf64_Shdr));

    llvm::ELF::Elf64_Ehdr Header{};
    std::memcpy(Header.e_ident, llvm::ELF::ElfMagic, 4);
    Header.e_ident[llvm::ELF::EI_CLASS] = llvm::ELF::ELFCLASS64;
    Header.e_ident[llvm::ELF::EI_DATA] = llvm::ELF::ELFDATA2LSB;
    Header.e_ident[llvm::ELF::EI_VERSION] = llvm::ELF::EV_CURRENT;
    Header.e_type = DataAddress ? llvm::ELF::ET_DYN : llvm::ELF::ET_EXEC;
    Header.e_machine = llvm::ELF::EM_CUDA;
    Header.e_version = llvm::ELF::EV_CURRENT;
    Header.e_shoff = ShOff;
    Header.e_ehsize = sizeof(Header);
    Header.e_shentsize = sizeof(llvm::ELF::Elf64_Shdr);
    Header.e_shnum = uint16_t(Sections.size());
    Header.e_shstrndx = 5;
    std::memcpy(&Out[0], &Header, sizeof(Header));
    return Out;
  }

  static constexpr uint16_t DataIndex = 1;
  static constexpr uint16_t BssIndex = 2;

private:
  uint64_t DataAddress;
  std::string Data;
  uint64_t BssSize = 0;
  std::vector<llvm::ELF::Elf64_Sym> Symbols;
  std::vector<char> Strings;
};

} // namespace offloadio::unittest

#endif // OFFLOADIO_TEST_SUPPORT_ELFIMAGEBUILDER_H

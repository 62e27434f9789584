// SPDX-License-Identifier: Apache-2.0
#include "offloadio/ImageSymbols.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Object/ELF.h"

using namespace offloadio;

namespace {

using ELFFileTy = llvm::object::ELF64LEFile;
using ELFSymTy = ELFFileTy::Elf_Sym;

/// Calls \p Visit(File, Symbol, Name) for every symbol of the static
/// symbol table until it returns true; false when \p Image is not ELF, has
/// no symbol table, or no call returned true. Malformed tables end the walk
/// quietly: an image whose symbols cannot be read has none for us.
template <typename VisitTy>
bool forEachSymbol(llvm::StringRef Image, VisitTy Visit) {
  auto File = ELFFileTy::create(Image);
  if (!File) {
    llvm::consumeError(File.takeError());
    return false;
  }
  auto Sections = File->sections();
  if (!Sections) {
    llvm::consumeError(Sections.takeError());
    return false;
  }
  for (const auto &Section : *Sections) {
    if (Section.sh_type != llvm::ELF::SHT_SYMTAB)
      continue;
    auto Symbols = File->symbols(&Section);
    auto Names = File->getStringTableForSymtab(Section);
    if (!Symbols || !Names) {
      llvm::consumeError(Symbols.takeError());
      llvm::consumeError(Names.takeError());
      return false;
    }
    for (const ELFSymTy &Symbol : *Symbols) {
      auto Name = Symbol.getName(*Names);
      if (!Name) {
        llvm::consumeError(Name.takeError());
        continue;
      }
      if (Visit(*File, Symbol, *Name))
        return true;
    }
  }
  return false;
}

} // namespace

bool offloadio::imageHasSymbol(llvm::StringRef Image, llvm::StringRef Name) {
  return forEachSymbol(Image, [&](const ELFFileTy &, const ELFSymTy &,
                                  llvm::StringRef SymbolName) {
    return SymbolName == Name;
  });
}

Expected<std::optional<llvm::StringRef>>
offloadio::readImageGlobal(llvm::StringRef Image, llvm::StringRef Name) {
  std::optional<llvm::StringRef> Result;
  Error Err = Error::success();
  forEachSymbol(Image, [&](const ELFFileTy &File, const ELFSymTy &Symbol,
                           llvm::StringRef SymbolName) {
    if (SymbolName != Name || Symbol.getType() != llvm::ELF::STT_OBJECT ||
        Symbol.st_shndx == llvm::ELF::SHN_UNDEF ||
        Symbol.st_shndx >= llvm::ELF::SHN_LORESERVE)
      return false;
    auto Section = File.getSection(Symbol.st_shndx);
    if (!Section) {
      Err = makeError(ErrorCode::InvalidImage,
                      "global '{0}' names section {1}, which the image "
                      "lacks: {2}",
                      Name, Symbol.st_shndx,
                      llvm::toString(Section.takeError()));
      return true;
    }
    const auto &Sec = **Section;
    if (Sec.sh_type == llvm::ELF::SHT_NOBITS) {
      Err = makeError(ErrorCode::InvalidImage,
                      "global '{0}' is zero-filled at load: the image holds "
                      "no bytes for it",
                      Name);
      return true;
    }
    // In relocatable images and cubins a symbol's value is its offset in
    // its section (sh_addr is 0); in shared objects it is an address, and
    // the section's address maps it back to a file offset.
    uint64_t InSection = Symbol.st_value - Sec.sh_addr;
    uint64_t Size = Symbol.st_size;
    if (Symbol.st_value < Sec.sh_addr || InSection > Sec.sh_size ||
        Size > Sec.sh_size - InSection ||
        Sec.sh_offset > Image.size() ||
        InSection + Size > Image.size() - Sec.sh_offset) {
      Err = makeError(ErrorCode::InvalidImage,
                      "global '{0}' ({1} bytes at {2:x}) lies outside its "
                      "section or the image ({3} bytes)",
                      Name, Size, Symbol.st_value, Image.size());
      return true;
    }
    Result = Image.substr(Sec.sh_offset + InSection, Size);
    return true;
  });
  if (Err)
    return std::move(Err);
  return Result;
}

std::vector<std::string>
offloadio::imageSymbolsWithPrefix(llvm::StringRef Image,
                                  llvm::StringRef Prefix) {
  std::vector<std::string> Names;
  forEachSymbol(Image, [&](const ELFFileTy &, const ELFSymTy &Symbol,
                           llvm::StringRef Name) {
    if (Symbol.st_shndx != llvm::ELF::SHN_UNDEF && Name.starts_with(Prefix))
      Names.push_back(Name.str());
    return false;
  });
  return Names;
}

std::optional<uint16_t> offloadio::imageMachine(llvm::StringRef Image) {
  auto File = ELFFileTy::create(Image);
  if (!File) {
    llvm::consumeError(File.takeError());
    return std::nullopt;
  }
  return uint16_t(File->getHeader().e_machine);
}

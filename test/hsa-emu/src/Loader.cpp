// SPDX-License-Identifier: Apache-2.0
//
// hsa-emu: code object readers, executables and their symbols.
//
// Loading mirrors what ROCr's loader does with an AMDGPU code object (v3 or
// later): every PT_LOAD segment is copied into one block of the agent's
// emulated device memory (zero-filled past p_filesz, i.e. .bss), dynamic
// relocations are applied, and the symbol table is exposed under the ELF
// names: kernels as "<name>.kd" (their kernel object is the address of the
// loaded kernel descriptor), globals (STT_OBJECT) as variables at their
// loaded address. Kernel sizes come from the descriptor; argument layouts
// from the NT_AMDGPU_METADATA note (used only to trace dispatches).
#include "Attributes.h"
#include "Emu.h"

#include "offloadio/LLVMSupportCompat.h"

#include "llvm/BinaryFormat/ELF.h"
#include "llvm/BinaryFormat/MsgPackDocument.h"
#include "llvm/Object/ELF.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdlib>
#include <cstring>
#include <set>

using namespace hsaemu;
using namespace llvm;

namespace {

struct ReaderTy {
  std::string Bytes;
};

struct SymbolTy {
  hsa_symbol_kind_t Kind = HSA_SYMBOL_KIND_VARIABLE;
  std::string Name;
  AgentTy *Agent = nullptr;
  /// Variable address, or the kernel object for kernels.
  uint64_t Address = 0;
  /// Variable size in bytes.
  uint64_t Size = 0;
  /// Kernel properties (kernels only).
  KernelInfoTy Kernel;
};

struct LoadedObjectTy {
  AgentTy *Agent = nullptr;
  PoolTy *Pool = nullptr;
  void *Segment = nullptr;
  size_t SegmentSize = 0;
  std::vector<std::unique_ptr<SymbolTy>> Symbols;
};

struct ExecutableTy {
  hsa_profile_t Profile = HSA_PROFILE_BASE;
  bool Frozen = false;
  std::vector<std::unique_ptr<LoadedObjectTy>> Objects;
};

// Global state is leaked on purpose: the plugin may still call in from
// libomptarget's destructor after this library's static destructors ran.
std::mutex &LoaderLock = *new std::mutex();
std::set<ReaderTy *> &Readers = *new std::set<ReaderTy *>();
/// Code objects of the HSA 1.0 API (hsa_code_object_deserialize): the same
/// bytes a reader holds, under their own handle type.
std::set<ReaderTy *> &CodeObjects = *new std::set<ReaderTy *>();
std::set<ExecutableTy *> &Executables = *new std::set<ExecutableTy *>();
std::set<SymbolTy *> &Symbols = *new std::set<SymbolTy *>();
std::map<uint64_t, const KernelInfoTy *> &Kernels =
    *new std::map<uint64_t, const KernelInfoTy *>();

ExecutableTy *toExecutable(hsa_executable_t E) {
  auto *X = reinterpret_cast<ExecutableTy *>(E.handle);
  return Executables.count(X) ? X : nullptr;
}

SymbolTy *toSymbol(hsa_executable_symbol_t S) {
  auto *X = reinterpret_cast<SymbolTy *>(S.handle);
  return Symbols.count(X) ? X : nullptr;
}

uint64_t nodeU64(msgpack::DocNode &N) {
  if (N.getKind() == msgpack::Type::UInt)
    return N.getUInt();
  if (N.getKind() == msgpack::Type::Int)
    return uint64_t(N.getInt());
  return 0;
}

/// Argument layouts by kernel descriptor symbol, from the metadata note.
void parseMetadata(StringRef Blob,
                   std::map<std::string, std::vector<KernelArgInfoTy>> &Out) {
  msgpack::Document Doc;
  if (!Doc.readFromBlob(Blob, /*Multi=*/false) || !Doc.getRoot().isMap())
    return;
  auto Kernels = Doc.getRoot().getMap().find("amdhsa.kernels");
  if (Kernels == Doc.getRoot().getMap().end() || !Kernels->second.isArray())
    return;
  for (msgpack::DocNode &K : Kernels->second.getArray()) {
    if (!K.isMap())
      continue;
    auto &KM = K.getMap();
    auto Sym = KM.find(".symbol");
    auto Args = KM.find(".args");
    if (Sym == KM.end() || !Sym->second.isString())
      continue;
    std::vector<KernelArgInfoTy> &List = Out[Sym->second.getString().str()];
    if (Args == KM.end() || !Args->second.isArray())
      continue;
    for (msgpack::DocNode &A : Args->second.getArray()) {
      if (!A.isMap())
        continue;
      auto &AM = A.getMap();
      KernelArgInfoTy Info;
      if (auto It = AM.find(".offset"); It != AM.end())
        Info.Offset = uint32_t(nodeU64(It->second));
      if (auto It = AM.find(".size"); It != AM.end())
        Info.Size = uint32_t(nodeU64(It->second));
      if (auto It = AM.find(".value_kind");
          It != AM.end() && It->second.isString())
        Info.ValueKind = It->second.getString().str();
      List.push_back(std::move(Info));
    }
  }
}

template <typename T> T readAt(const uint8_t *P) {
  T V;
  std::memcpy(&V, P, sizeof(T));
  return V;
}

/// Load \p Bytes for \p Agent. Returns HSA_STATUS_SUCCESS and fills \p Out.
hsa_status_t loadObject(StringRef Bytes, AgentTy *Agent, LoadedObjectTy &Out) {
  auto FileOrErr = object::ELF64LEFile::create(Bytes);
  if (!FileOrErr) {
    warn("code object rejected: %s", toString(FileOrErr.takeError()).c_str());
    return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  }
  object::ELF64LEFile &File = *FileOrErr;
  const auto &Header = File.getHeader();
  if (Header.e_machine != ELF::EM_AMDGPU || Header.e_type != ELF::ET_DYN) {
    warn("code object rejected: not an AMDGPU shared object (e_machine %u, "
         "e_type %u)",
         unsigned(Header.e_machine), unsigned(Header.e_type));
    return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  }
  // The processor must be the agent's (target features are not modelled).
  auto ObjOrErr = object::ObjectFile::createELFObjectFile(
      MemoryBufferRef(Bytes, "code object"));
  if (!ObjOrErr) {
    warn("code object rejected: %s", toString(ObjOrErr.takeError()).c_str());
    return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  }
  auto *Elf = cast<object::ELFObjectFileBase>(ObjOrErr->get());
  std::optional<StringRef> Cpu = Elf->tryGetCPUName();
  if (!Cpu || *Cpu != Agent->Name) {
    warn("code object for %s cannot be loaded on a %s agent",
         Cpu ? Cpu->str().c_str() : "<unknown processor>", Agent->Name.c_str());
    return HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS;
  }

  auto PhdrsOrErr = File.program_headers();
  if (!PhdrsOrErr) {
    consumeError(PhdrsOrErr.takeError());
    return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  }
  uint64_t Lo = UINT64_MAX, Hi = 0;
  for (const auto &Ph : *PhdrsOrErr) {
    if (Ph.p_type != ELF::PT_LOAD || !Ph.p_memsz)
      continue;
    Lo = std::min<uint64_t>(Lo, Ph.p_vaddr);
    Hi = std::max<uint64_t>(Hi, Ph.p_vaddr + Ph.p_memsz);
  }
  if (Lo >= Hi)
    return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  size_t Span = (Hi - Lo + 4095) & ~size_t(4095);
  PoolTy *Pool = Agent->Pools.front();
  if (Pool->Used.fetch_add(Span) + Span > Pool->Size) {
    Pool->Used.fetch_sub(Span);
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  }
  auto *Segment = static_cast<uint8_t *>(std::aligned_alloc(4096, Span));
  if (!Segment) {
    Pool->Used.fetch_sub(Span);
    return HSA_STATUS_ERROR_OUT_OF_RESOURCES;
  }
  std::memset(Segment, 0, Span);
  Out.Agent = Agent;
  Out.Pool = Pool;
  Out.Segment = Segment;
  Out.SegmentSize = Span;
  for (const auto &Ph : *PhdrsOrErr) {
    if (Ph.p_type != ELF::PT_LOAD || !Ph.p_filesz)
      continue;
    if (Ph.p_offset + Ph.p_filesz > Bytes.size() || Ph.p_filesz > Ph.p_memsz)
      return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
    std::memcpy(Segment + (Ph.p_vaddr - Lo), Bytes.data() + Ph.p_offset,
                Ph.p_filesz);
  }
  const uint64_t Bias = reinterpret_cast<uint64_t>(Segment) - Lo;
  auto InSegment = [&](uint64_t VAddr, uint64_t N) {
    return VAddr >= Lo && VAddr + N <= Hi;
  };

  auto SectionsOrErr = File.sections();
  if (!SectionsOrErr) {
    consumeError(SectionsOrErr.takeError());
    return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  }

  // Dynamic relocations.
  for (const auto &Sec : *SectionsOrErr) {
    if (Sec.sh_type != ELF::SHT_RELA)
      continue;
    auto RelasOrErr = File.relas(Sec);
    auto SymTabOrErr = File.getSection(Sec.sh_link);
    if (!RelasOrErr || !SymTabOrErr) {
      if (!RelasOrErr)
        consumeError(RelasOrErr.takeError());
      if (!SymTabOrErr)
        consumeError(SymTabOrErr.takeError());
      return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
    }
    for (const auto &R : *RelasOrErr) {
      uint32_t Type = R.getType(false);
      if (Type == ELF::R_AMDGPU_NONE)
        continue;
      if (!InSegment(R.r_offset, Type == ELF::R_AMDGPU_ABS64 ||
                                         Type == ELF::R_AMDGPU_RELATIVE64
                                     ? 8
                                     : 4))
        return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
      uint8_t *Where = Segment + (R.r_offset - Lo);
      uint64_t S = 0;
      if (uint32_t SymIdx = R.getSymbol(false)) {
        auto SymOrErr =
            File.getEntry<object::ELF64LE::Sym>(**SymTabOrErr, SymIdx);
        if (!SymOrErr) {
          consumeError(SymOrErr.takeError());
          return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
        }
        if ((*SymOrErr)->st_shndx == ELF::SHN_UNDEF) {
          warn("code object references an undefined symbol");
          return HSA_STATUS_ERROR_VARIABLE_UNDEFINED;
        }
        S = (*SymOrErr)->st_value + Bias;
      }
      uint64_t V;
      switch (Type) {
      case ELF::R_AMDGPU_RELATIVE64:
        V = Bias + uint64_t(R.r_addend);
        std::memcpy(Where, &V, 8);
        break;
      case ELF::R_AMDGPU_ABS64:
        V = S + uint64_t(R.r_addend);
        std::memcpy(Where, &V, 8);
        break;
      case ELF::R_AMDGPU_ABS32_LO:
      case ELF::R_AMDGPU_ABS32: {
        uint32_t W = uint32_t(S + uint64_t(R.r_addend));
        std::memcpy(Where, &W, 4);
        break;
      }
      case ELF::R_AMDGPU_ABS32_HI: {
        uint32_t W = uint32_t((S + uint64_t(R.r_addend)) >> 32);
        std::memcpy(Where, &W, 4);
        break;
      }
      default:
        warn("code object has unsupported relocation type %u", Type);
        return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
      }
    }
  }

  // Kernel argument layouts from the metadata note.
  std::map<std::string, std::vector<KernelArgInfoTy>> ArgsBySymbol;
  for (const auto &Ph : *PhdrsOrErr) {
    if (Ph.p_type != ELF::PT_NOTE)
      continue;
    Error Err = Error::success();
    for (const auto &Note : File.notes(Ph, Err))
      if (Note.getName() == "AMDGPU" &&
          Note.getType() == ELF::NT_AMDGPU_METADATA)
        parseMetadata(offloadio::noteDescription(Note, Ph.p_align),
                      ArgsBySymbol);
    consumeError(std::move(Err));
  }

  // Symbols: the full symbol table when present, else the dynamic one.
  const object::ELF64LE::Shdr *SymTab = nullptr;
  for (const auto &Sec : *SectionsOrErr)
    if (Sec.sh_type == ELF::SHT_SYMTAB)
      SymTab = &Sec;
  if (!SymTab)
    for (const auto &Sec : *SectionsOrErr)
      if (Sec.sh_type == ELF::SHT_DYNSYM)
        SymTab = &Sec;
  if (!SymTab)
    return HSA_STATUS_SUCCESS;
  auto SymsOrErr = File.symbols(SymTab);
  auto StrTabOrErr = File.getStringTableForSymtab(*SymTab);
  if (!SymsOrErr || !StrTabOrErr) {
    if (!SymsOrErr)
      consumeError(SymsOrErr.takeError());
    if (!StrTabOrErr)
      consumeError(StrTabOrErr.takeError());
    return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  }
  for (const auto &Sym : *SymsOrErr) {
    if (Sym.getBinding() == ELF::STB_LOCAL || Sym.st_shndx == ELF::SHN_UNDEF ||
        Sym.getType() != ELF::STT_OBJECT)
      continue;
    auto NameOrErr = Sym.getName(*StrTabOrErr);
    if (!NameOrErr) {
      consumeError(NameOrErr.takeError());
      continue;
    }
    if (!InSegment(Sym.st_value, Sym.st_size))
      continue;
    auto S = std::make_unique<SymbolTy>();
    S->Name = NameOrErr->str();
    S->Agent = Agent;
    S->Address = Sym.st_value + Bias;
    S->Size = Sym.st_size;
    if (NameOrErr->ends_with(".kd") && Sym.st_size == 64) {
      const uint8_t *Kd = Segment + (Sym.st_value - Lo);
      S->Kind = HSA_SYMBOL_KIND_KERNEL;
      S->Kernel.Name = NameOrErr->drop_back(3).str();
      S->Kernel.GroupSize = readAt<uint32_t>(Kd + 0);
      S->Kernel.PrivateSize = readAt<uint32_t>(Kd + 4);
      S->Kernel.KernargSize = readAt<uint32_t>(Kd + 8);
      // kernel_code_properties bit 11: USES_DYNAMIC_STACK.
      S->Kernel.DynamicCallStack = readAt<uint16_t>(Kd + 56) & (1u << 11);
      if (auto It = ArgsBySymbol.find(S->Name); It != ArgsBySymbol.end())
        S->Kernel.Args = It->second;
    }
    Out.Symbols.push_back(std::move(S));
  }
  return HSA_STATUS_SUCCESS;
}

void releaseObject(LoadedObjectTy &Obj) {
  for (auto &S : Obj.Symbols) {
    Symbols.erase(S.get());
    if (S->Kind == HSA_SYMBOL_KIND_KERNEL)
      Kernels.erase(S->Address);
  }
  if (Obj.Segment) {
    unregisterInternalAllocation(Obj.Segment);
    Obj.Pool->Used.fetch_sub(Obj.SegmentSize);
    std::free(Obj.Segment);
    Obj.Segment = nullptr;
  }
}

/// Load \p Code into \p Executable for \p AgentHandle: the part that
/// hsa_executable_load_agent_code_object and the HSA 1.0
/// hsa_executable_load_code_object share. Called with LoaderLock held.
hsa_status_t loadIntoExecutable(hsa_executable_t Executable,
                                hsa_agent_t AgentHandle, const ReaderTy &Code,
                                hsa_loaded_code_object_t *LoadedCodeObject) {
  AgentTy *Agent = lookupAgent(AgentHandle);
  if (!Agent || !Agent->isGpu())
    return HSA_STATUS_ERROR_INVALID_AGENT;
  ExecutableTy *E = toExecutable(Executable);
  if (!E)
    return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  if (E->Frozen)
    return HSA_STATUS_ERROR_FROZEN_EXECUTABLE;
  auto Obj = std::make_unique<LoadedObjectTy>();
  hsa_status_t Status = loadObject(Code.Bytes, Agent, *Obj);
  if (Obj->Segment)
    registerInternalAllocation(Obj->Segment, Obj->SegmentSize, Obj->Pool);
  if (Status != HSA_STATUS_SUCCESS) {
    releaseObject(*Obj);
    return Status;
  }
  for (auto &S : Obj->Symbols) {
    Symbols.insert(S.get());
    if (S->Kind == HSA_SYMBOL_KIND_KERNEL)
      Kernels[S->Address] = &S->Kernel;
  }
  if (LoadedCodeObject)
    LoadedCodeObject->handle = reinterpret_cast<uint64_t>(Obj.get());
  E->Objects.push_back(std::move(Obj));
  return HSA_STATUS_SUCCESS;
}

/// A new executable, registered.
hsa_status_t createExecutable(hsa_profile_t Profile, bool Frozen,
                              hsa_executable_t *Executable) {
  if (!Executable ||
      (Profile != HSA_PROFILE_BASE && Profile != HSA_PROFILE_FULL))
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  auto *E = new ExecutableTy();
  E->Profile = Profile;
  E->Frozen = Frozen;
  std::lock_guard<std::mutex> Guard(LoaderLock);
  Executables.insert(E);
  Executable->handle = reinterpret_cast<uint64_t>(E);
  return HSA_STATUS_SUCCESS;
}

/// A copy of a code object's bytes, after the checks readers and
/// deserialisation share; null when \p Bytes is no ELF file.
ReaderTy *copyCodeObject(const void *Bytes, size_t Size) {
  if (Size < 4 || std::memcmp(Bytes, ELF::ElfMagic, 4) != 0)
    return nullptr;
  return new ReaderTy{std::string(static_cast<const char *>(Bytes), Size)};
}

} // namespace

const KernelInfoTy *hsaemu::lookupKernel(uint64_t KernelObject) {
  std::lock_guard<std::mutex> Guard(LoaderLock);
  auto It = Kernels.find(KernelObject);
  return It == Kernels.end() ? nullptr : It->second;
}

extern "C" {

hsa_status_t
hsa_code_object_reader_create_from_memory(const void *CodeObject, size_t Size,
                                          hsa_code_object_reader_t *Reader) {
  CHECK_INIT();
  if (!CodeObject || !Size || !Reader)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  ReaderTy *R = copyCodeObject(CodeObject, Size);
  if (!R)
    return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  std::lock_guard<std::mutex> Guard(LoaderLock);
  Readers.insert(R);
  Reader->handle = reinterpret_cast<uint64_t>(R);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_code_object_reader_destroy(hsa_code_object_reader_t Reader) {
  CHECK_INIT();
  auto *R = reinterpret_cast<ReaderTy *>(Reader.handle);
  std::lock_guard<std::mutex> Guard(LoaderLock);
  if (!Readers.erase(R))
    return HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER;
  delete R;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t
hsa_executable_create_alt(hsa_profile_t Profile,
                          hsa_default_float_rounding_mode_t RoundingMode,
                          const char *Options, hsa_executable_t *Executable) {
  CHECK_INIT();
  return createExecutable(Profile, /*Frozen=*/false, Executable);
}

hsa_status_t hsa_executable_load_agent_code_object(
    hsa_executable_t Executable, hsa_agent_t AgentHandle,
    hsa_code_object_reader_t Reader, const char *Options,
    hsa_loaded_code_object_t *LoadedCodeObject) {
  CHECK_INIT();
  std::lock_guard<std::mutex> Guard(LoaderLock);
  auto *R = reinterpret_cast<ReaderTy *>(Reader.handle);
  if (!Readers.count(R))
    return HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER;
  return loadIntoExecutable(Executable, AgentHandle, *R, LoadedCodeObject);
}

hsa_status_t hsa_executable_freeze(hsa_executable_t Executable,
                                   const char *Options) {
  CHECK_INIT();
  std::lock_guard<std::mutex> Guard(LoaderLock);
  ExecutableTy *E = toExecutable(Executable);
  if (!E)
    return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  if (E->Frozen)
    return HSA_STATUS_ERROR_FROZEN_EXECUTABLE;
  E->Frozen = true;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_executable_destroy(hsa_executable_t Executable) {
  CHECK_INIT();
  std::lock_guard<std::mutex> Guard(LoaderLock);
  ExecutableTy *E = toExecutable(Executable);
  if (!E)
    return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  for (auto &Obj : E->Objects)
    releaseObject(*Obj);
  Executables.erase(E);
  delete E;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t
hsa_executable_get_symbol_by_name(hsa_executable_t Executable, const char *Name,
                                  const hsa_agent_t *Agent,
                                  hsa_executable_symbol_t *Symbol) {
  CHECK_INIT();
  if (!Name || !Symbol)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  std::lock_guard<std::mutex> Guard(LoaderLock);
  ExecutableTy *E = toExecutable(Executable);
  if (!E)
    return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  // Every symbol of an agent code object is agent-specific: without an
  // agent only program symbols (none here) would match.
  AgentTy *A = Agent ? lookupAgent(*Agent) : nullptr;
  if (Agent && !A)
    return HSA_STATUS_ERROR_INVALID_AGENT;
  for (auto &Obj : E->Objects) {
    if (Obj->Agent != A)
      continue;
    for (auto &S : Obj->Symbols) {
      if (S->Name == Name) {
        Symbol->handle = reinterpret_cast<uint64_t>(S.get());
        return HSA_STATUS_SUCCESS;
      }
    }
  }
  return HSA_STATUS_ERROR_INVALID_SYMBOL_NAME;
}

hsa_status_t hsa_executable_iterate_agent_symbols(
    hsa_executable_t Executable, hsa_agent_t Agent,
    hsa_status_t (*Callback)(hsa_executable_t, hsa_agent_t,
                             hsa_executable_symbol_t, void *),
    void *Data) {
  CHECK_INIT();
  if (!Callback)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  std::vector<uint64_t> Handles;
  {
    std::lock_guard<std::mutex> Guard(LoaderLock);
    ExecutableTy *E = toExecutable(Executable);
    if (!E)
      return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
    AgentTy *A = lookupAgent(Agent);
    if (!A)
      return HSA_STATUS_ERROR_INVALID_AGENT;
    for (auto &Obj : E->Objects)
      if (Obj->Agent == A)
        for (auto &S : Obj->Symbols)
          Handles.push_back(reinterpret_cast<uint64_t>(S.get()));
  }
  for (uint64_t H : Handles) {
    hsa_status_t S =
        Callback(Executable, Agent, hsa_executable_symbol_t{H}, Data);
    if (S != HSA_STATUS_SUCCESS)
      return S;
  }
  return HSA_STATUS_SUCCESS;
}

hsa_status_t
hsa_executable_symbol_get_info(hsa_executable_symbol_t SymbolHandle,
                               hsa_executable_symbol_info_t Attribute,
                               void *Value) {
  CHECK_INIT();
  if (!Value)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  std::lock_guard<std::mutex> Guard(LoaderLock);
  SymbolTy *S = toSymbol(SymbolHandle);
  if (!S)
    return HSA_STATUS_ERROR_INVALID_EXECUTABLE_SYMBOL;
  const bool Kernel = S->Kind == HSA_SYMBOL_KIND_KERNEL;
  switch (int(Attribute)) {
  case HSA_EXECUTABLE_SYMBOL_INFO_TYPE:
    return put<hsa_symbol_kind_t>(Value, S->Kind);
  case HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH:
    return put<uint32_t>(Value, uint32_t(S->Name.size()));
  case HSA_EXECUTABLE_SYMBOL_INFO_NAME:
    std::memcpy(Value, S->Name.data(), S->Name.size());
    return HSA_STATUS_SUCCESS;
  case HSA_EXECUTABLE_SYMBOL_INFO_MODULE_NAME_LENGTH:
    return put<uint32_t>(Value, 0);
  case HSA_EXECUTABLE_SYMBOL_INFO_MODULE_NAME:
    return HSA_STATUS_SUCCESS;
  case HSA_EXECUTABLE_SYMBOL_INFO_AGENT:
    return put<hsa_agent_t>(Value, S->Agent->handle());
  case HSA_EXECUTABLE_SYMBOL_INFO_LINKAGE:
    return put<hsa_symbol_linkage_t>(Value, HSA_SYMBOL_LINKAGE_PROGRAM);
  case HSA_EXECUTABLE_SYMBOL_INFO_IS_DEFINITION:
    return put<bool>(Value, true);
  }
  if (!Kernel) {
    switch (int(Attribute)) {
    case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS:
      return put<uint64_t>(Value, S->Address);
    case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE:
      return put<uint32_t>(Value, uint32_t(S->Size));
    case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ALLOCATION:
      return put<hsa_variable_allocation_t>(Value,
                                            HSA_VARIABLE_ALLOCATION_AGENT);
    case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SEGMENT:
      return put<hsa_variable_segment_t>(Value, HSA_VARIABLE_SEGMENT_GLOBAL);
    case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ALIGNMENT:
      return put<uint32_t>(Value, 8);
    case HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_IS_CONST:
      return put<bool>(Value, false);
    default:
      return HSA_STATUS_ERROR_INVALID_ARGUMENT;
    }
  }
  switch (int(Attribute)) {
  case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT:
    return put<uint64_t>(Value, S->Address);
  case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE:
    return put<uint32_t>(Value, S->Kernel.KernargSize);
  case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT:
    return put<uint32_t>(Value, 16);
  case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE:
    return put<uint32_t>(Value, S->Kernel.GroupSize);
  case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE:
    return put<uint32_t>(Value, S->Kernel.PrivateSize);
  case HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_DYNAMIC_CALLSTACK:
    return put<bool>(Value, S->Kernel.DynamicCallStack);
  default:
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  }
}

// The HSA 1.0 code object API, which LLVM 16's own AMDGPU plugin loads its
// images with: a code object is deserialised once and loaded into an
// executable for one agent. ROCr implements it on the same loader as the
// reader API above, and so does the emulation.

hsa_status_t hsa_code_object_deserialize(void *SerializedCodeObject,
                                         size_t SerializedCodeObjectSize,
                                         const char *Options,
                                         hsa_code_object_t *CodeObject) {
  CHECK_INIT();
  if (!SerializedCodeObject || !SerializedCodeObjectSize || !CodeObject)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  ReaderTy *C = copyCodeObject(SerializedCodeObject, SerializedCodeObjectSize);
  if (!C)
    return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  std::lock_guard<std::mutex> Guard(LoaderLock);
  CodeObjects.insert(C);
  CodeObject->handle = reinterpret_cast<uint64_t>(C);
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_code_object_destroy(hsa_code_object_t CodeObject) {
  CHECK_INIT();
  auto *C = reinterpret_cast<ReaderTy *>(CodeObject.handle);
  std::lock_guard<std::mutex> Guard(LoaderLock);
  if (!CodeObjects.erase(C))
    return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  delete C;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_executable_create(hsa_profile_t Profile,
                                   hsa_executable_state_t State,
                                   const char *Options,
                                   hsa_executable_t *Executable) {
  CHECK_INIT();
  // Read as an integer: a caller's value outside the enumeration must be
  // refused, and reading it as the enum type would be undefined.
  int RawState;
  static_assert(sizeof(State) == sizeof(RawState), "HSA enums are int-sized");
  std::memcpy(&RawState, &State, sizeof(RawState));
  if (RawState != HSA_EXECUTABLE_STATE_UNFROZEN &&
      RawState != HSA_EXECUTABLE_STATE_FROZEN)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  return createExecutable(Profile, RawState == HSA_EXECUTABLE_STATE_FROZEN,
                          Executable);
}

hsa_status_t hsa_executable_load_code_object(hsa_executable_t Executable,
                                             hsa_agent_t Agent,
                                             hsa_code_object_t CodeObject,
                                             const char *Options) {
  CHECK_INIT();
  std::lock_guard<std::mutex> Guard(LoaderLock);
  auto *C = reinterpret_cast<ReaderTy *>(CodeObject.handle);
  if (!CodeObjects.count(C))
    return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
  return loadIntoExecutable(Executable, Agent, *C, nullptr);
}

hsa_status_t hsa_executable_validate(hsa_executable_t Executable,
                                     uint32_t *Result) {
  CHECK_INIT();
  if (!Result)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  std::lock_guard<std::mutex> Guard(LoaderLock);
  if (!toExecutable(Executable))
    return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
  // Every object was checked and relocated when it was loaded, and an
  // object with an undefined symbol was refused then: nothing is left to
  // find invalid (0 means valid).
  *Result = 0;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t hsa_executable_iterate_symbols(
    hsa_executable_t Executable,
    hsa_status_t (*Callback)(hsa_executable_t, hsa_executable_symbol_t,
                             void *),
    void *Data) {
  CHECK_INIT();
  if (!Callback)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  std::vector<uint64_t> Handles;
  {
    std::lock_guard<std::mutex> Guard(LoaderLock);
    ExecutableTy *E = toExecutable(Executable);
    if (!E)
      return HSA_STATUS_ERROR_INVALID_EXECUTABLE;
    for (auto &Obj : E->Objects)
      for (auto &S : Obj->Symbols)
        Handles.push_back(reinterpret_cast<uint64_t>(S.get()));
  }
  // The callback runs without the lock: it may ask about the symbols.
  for (uint64_t H : Handles)
    if (hsa_status_t S = Callback(Executable, hsa_executable_symbol_t{H}, Data);
        S != HSA_STATUS_SUCCESS)
      return S;
  return HSA_STATUS_SUCCESS;
}

} // extern "C"

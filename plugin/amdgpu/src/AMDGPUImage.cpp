// SPDX-License-Identifier: Apache-2.0
#include "AMDGPUImage.h"
#include "offloadio/LLVMSupportCompat.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/BinaryFormat/MsgPackDocument.h"
#include "llvm/Object/ELF.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace offloadio;
using namespace offloadio::amdgpu;
using llvm::StringRef;

//===----------------------------------------------------------------------===//
// Target ids
//===----------------------------------------------------------------------===//

AMDGPUTargetIdTy AMDGPUTargetIdTy::parse(StringRef Text) {
  AMDGPUTargetIdTy Id;
  size_t Dashes = Text.find("--");
  if (Dashes != StringRef::npos)
    Text = Text.drop_front(Dashes + 2);
  llvm::SmallVector<StringRef, 4> Parts;
  Text.split(Parts, ':');
  Id.Processor = Parts.front().str();
  for (StringRef F : llvm::drop_begin(Parts))
    if (F.size() > 1 && (F.back() == '+' || F.back() == '-'))
      Id.Features.emplace_back(F.drop_back().str(), F.back());
  return Id;
}

bool AMDGPUTargetIdTy::isCompatible(const AMDGPUTargetIdTy &Image,
                                    const AMDGPUTargetIdTy &Agent) {
  if (Image.Processor != Agent.Processor)
    return false;
  for (const auto &[Name, Sign] : Image.Features)
    for (const auto &[AgentName, AgentSign] : Agent.Features)
      if (Name == AgentName && Sign != AgentSign)
        return false;
  return true;
}

std::string AMDGPUTargetIdTy::str() const {
  std::string S = Processor;
  for (const auto &[Name, Sign] : Features)
    S += ":" + Name + Sign;
  return S;
}

std::optional<AMDGPUTargetIdTy> amdgpu::readImageTarget(StringRef Bytes) {
  auto File = llvm::object::ELF64LEFile::create(Bytes);
  if (!File) {
    llvm::consumeError(File.takeError());
    return std::nullopt;
  }
  const auto &Header = File->getHeader();
  if (Header.e_machine != llvm::ELF::EM_AMDGPU)
    return std::nullopt;
  auto Obj = llvm::object::ObjectFile::createELFObjectFile(
      llvm::MemoryBufferRef(Bytes, "image"));
  if (!Obj) {
    llvm::consumeError(Obj.takeError());
    return std::nullopt;
  }
  auto *Elf = llvm::cast<llvm::object::ELFObjectFileBase>(Obj->get());
  std::optional<StringRef> Cpu = Elf->tryGetCPUName();
  if (!Cpu || Cpu->empty())
    return std::nullopt;
  AMDGPUTargetIdTy Id;
  Id.Processor = Cpu->str();
  // Code object v4 and later encode xnack and sramecc as any/off/on.
  if (Header.e_ident[llvm::ELF::EI_ABIVERSION] >=
      llvm::ELF::ELFABIVERSION_AMDGPU_HSA_V4) {
    switch (Header.e_flags & llvm::ELF::EF_AMDGPU_FEATURE_SRAMECC_V4) {
    case llvm::ELF::EF_AMDGPU_FEATURE_SRAMECC_ON_V4:
      Id.Features.emplace_back("sramecc", '+');
      break;
    case llvm::ELF::EF_AMDGPU_FEATURE_SRAMECC_OFF_V4:
      Id.Features.emplace_back("sramecc", '-');
      break;
    default:
      break;
    }
    switch (Header.e_flags & llvm::ELF::EF_AMDGPU_FEATURE_XNACK_V4) {
    case llvm::ELF::EF_AMDGPU_FEATURE_XNACK_ON_V4:
      Id.Features.emplace_back("xnack", '+');
      break;
    case llvm::ELF::EF_AMDGPU_FEATURE_XNACK_OFF_V4:
      Id.Features.emplace_back("xnack", '-');
      break;
    default:
      break;
    }
  }
  return Id;
}

//===----------------------------------------------------------------------===//
// Kernel metadata
//===----------------------------------------------------------------------===//

namespace {

AMDGPUArgKindTy argKind(StringRef ValueKind) {
  if (!ValueKind.starts_with("hidden_"))
    return AMDGPUArgKindTy::Explicit;
  return llvm::StringSwitch<AMDGPUArgKindTy>(ValueKind)
      .Case("hidden_global_offset_x", AMDGPUArgKindTy::HiddenGlobalOffsetX)
      .Case("hidden_global_offset_y", AMDGPUArgKindTy::HiddenGlobalOffsetY)
      .Case("hidden_global_offset_z", AMDGPUArgKindTy::HiddenGlobalOffsetZ)
      .Case("hidden_block_count_x", AMDGPUArgKindTy::HiddenBlockCountX)
      .Case("hidden_block_count_y", AMDGPUArgKindTy::HiddenBlockCountY)
      .Case("hidden_block_count_z", AMDGPUArgKindTy::HiddenBlockCountZ)
      .Case("hidden_group_size_x", AMDGPUArgKindTy::HiddenGroupSizeX)
      .Case("hidden_group_size_y", AMDGPUArgKindTy::HiddenGroupSizeY)
      .Case("hidden_group_size_z", AMDGPUArgKindTy::HiddenGroupSizeZ)
      .Case("hidden_remainder_x", AMDGPUArgKindTy::HiddenRemainderX)
      .Case("hidden_remainder_y", AMDGPUArgKindTy::HiddenRemainderY)
      .Case("hidden_remainder_z", AMDGPUArgKindTy::HiddenRemainderZ)
      .Case("hidden_grid_dims", AMDGPUArgKindTy::HiddenGridDims)
      .Case("hidden_dynamic_lds_size", AMDGPUArgKindTy::HiddenDynamicLdsSize)
      .Case("hidden_queue_ptr", AMDGPUArgKindTy::HiddenQueuePtr)
      .Default(AMDGPUArgKindTy::HiddenOther);
}

std::optional<uint64_t> getUInt(llvm::msgpack::MapDocNode &Map, StringRef Key) {
  auto It = Map.find(Key);
  if (It == Map.end())
    return std::nullopt;
  if (It->second.getKind() == llvm::msgpack::Type::UInt)
    return It->second.getUInt();
  if (It->second.getKind() == llvm::msgpack::Type::Int &&
      It->second.getInt() >= 0)
    return uint64_t(It->second.getInt());
  return std::nullopt;
}

std::optional<StringRef> getString(llvm::msgpack::MapDocNode &Map,
                                   StringRef Key) {
  auto It = Map.find(Key);
  if (It == Map.end() || !It->second.isString())
    return std::nullopt;
  return It->second.getString();
}

Error parseMetadataBlob(StringRef Blob,
                        llvm::StringMap<AMDGPUKernelMetadataTy> &Out) {
  llvm::msgpack::Document Doc;
  if (!Doc.readFromBlob(Blob, /*Multi=*/false) || !Doc.getRoot().isMap())
    return makeError(ErrorCode::InvalidImage,
                     "the AMDGPU metadata note is not a msgpack map");
  auto &Root = Doc.getRoot().getMap();
  auto Kernels = Root.find("amdhsa.kernels");
  if (Kernels == Root.end())
    return Error::success();
  if (!Kernels->second.isArray())
    return makeError(ErrorCode::InvalidImage,
                     "amdhsa.kernels in the AMDGPU metadata is not an array");
  for (llvm::msgpack::DocNode &K : Kernels->second.getArray()) {
    if (!K.isMap())
      continue;
    auto &KM = K.getMap();
    auto Name = getString(KM, ".name");
    if (!Name)
      continue;
    AMDGPUKernelMetadataTy Meta;
    Meta.Name = Name->str();
    Meta.KernargSegmentSize =
        uint32_t(getUInt(KM, ".kernarg_segment_size").value_or(0));
    Meta.MaxFlatWorkgroupSize =
        uint32_t(getUInt(KM, ".max_flat_workgroup_size").value_or(0));
    if (auto It = KM.find(".uses_dynamic_stack");
        It != KM.end() && It->second.getKind() == llvm::msgpack::Type::Boolean)
      Meta.UsesDynamicStack = It->second.getBool();
    auto Args = KM.find(".args");
    if (Args != KM.end() && Args->second.isArray()) {
      for (llvm::msgpack::DocNode &A : Args->second.getArray()) {
        if (!A.isMap())
          continue;
        auto &AM = A.getMap();
        AMDGPUKernelArgTy Arg;
        Arg.Offset = uint32_t(getUInt(AM, ".offset").value_or(0));
        Arg.Size = uint32_t(getUInt(AM, ".size").value_or(0));
        Arg.Kind = argKind(getString(AM, ".value_kind").value_or(""));
        if (Arg.Offset + uint64_t(Arg.Size) > Meta.KernargSegmentSize)
          return makeError(ErrorCode::InvalidImage,
                           "kernel {0}: argument at offset {1} ({2} bytes) "
                           "lies outside its {3}-byte kernarg segment",
                           Meta.Name, Arg.Offset, Arg.Size,
                           Meta.KernargSegmentSize);
        if (Arg.Kind == AMDGPUArgKindTy::Explicit)
          ++Meta.NumExplicitArgs;
        Meta.Args.push_back(Arg);
      }
    }
    std::string Key = Meta.Name;
    Out[Key] = std::move(Meta);
  }
  return Error::success();
}

} // namespace

Expected<llvm::StringMap<AMDGPUKernelMetadataTy>>
amdgpu::readKernelMetadata(StringRef Bytes) {
  llvm::StringMap<AMDGPUKernelMetadataTy> Result;
  auto File = llvm::object::ELF64LEFile::create(Bytes);
  if (!File)
    return File.takeError();
  auto Phdrs = File->program_headers();
  if (!Phdrs)
    return Phdrs.takeError();
  for (const auto &Ph : *Phdrs) {
    if (Ph.p_type != llvm::ELF::PT_NOTE)
      continue;
    Error Err = Error::success();
    for (const auto &Note : File->notes(Ph, Err)) {
      if (Note.getName() != "AMDGPU" ||
          Note.getType() != llvm::ELF::NT_AMDGPU_METADATA)
        continue;
      if (auto ParseErr =
              parseMetadataBlob(noteDescription(Note, Ph.p_align), Result)) {
        llvm::consumeError(std::move(Err));
        return std::move(ParseErr);
      }
    }
    if (Err)
      return std::move(Err);
  }
  return std::move(Result);
}

//===----------------------------------------------------------------------===//
// Executables
//===----------------------------------------------------------------------===//

Expected<std::unique_ptr<AMDGPUImageTy>>
AMDGPUImageTy::load(const HSAApiTy &Api, hsa_agent_t Agent,
                    hsa_profile_t Profile, const __tgt_device_image &TgtImage,
                    int32_t ImageId, int32_t DeviceId) {
  std::unique_ptr<AMDGPUImageTy> Image(
      new AMDGPUImageTy(Api, Agent, ImageId, TgtImage, DeviceId));
  StringRef Bytes = Image->getBytes();
  if (!readImageTarget(Bytes))
    return makeError(ErrorCode::InvalidImage,
                     "image {0} ({1} bytes at {2}) is not an AMDGPU code "
                     "object",
                     ImageId, Bytes.size(), TgtImage.ImageStart);
  auto Metadata = readKernelMetadata(Bytes);
  if (!Metadata)
    return makeError(ErrorCode::InvalidImage,
                     "image {0} on device {1}: unreadable kernel metadata: {2}",
                     ImageId, DeviceId, llvm::toString(Metadata.takeError()));
  Image->Metadata = std::move(*Metadata);

  // The image bytes stay valid for the program's lifetime (libomptarget
  // owns them), as the reader requires until the executable is frozen.
  if (auto Err = checkHSA(Api,
                          Api.hsa_code_object_reader_create_from_memory(
                              Bytes.data(), Bytes.size(), &Image->Reader),
                          "hsa_code_object_reader_create_from_memory",
                          "image {0} ({1} bytes at {2}) on device {3}", ImageId,
                          Bytes.size(), TgtImage.ImageStart, DeviceId))
    return std::move(Err);
  if (auto Err = checkHSA(Api,
                          Api.hsa_executable_create_alt(
                              Profile, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT,
                              "", &Image->Executable),
                          "hsa_executable_create_alt",
                          "image {0} on device {1}", ImageId, DeviceId))
    return std::move(Err);
  if (auto Err =
          checkHSA(Api,
                   Api.hsa_executable_load_agent_code_object(
                       Image->Executable, Agent, Image->Reader, "", nullptr),
                   "hsa_executable_load_agent_code_object",
                   "image {0} ({1} bytes) on device {2}", ImageId, Bytes.size(),
                   DeviceId))
    return std::move(Err);
  if (auto Err = checkHSA(Api, Api.hsa_executable_freeze(Image->Executable, ""),
                          "hsa_executable_freeze", "image {0} on device {1}",
                          ImageId, DeviceId))
    return std::move(Err);
  return std::move(Image);
}

AMDGPUImageTy::~AMDGPUImageTy() {
  if (Executable.handle)
    Api.hsa_executable_destroy(Executable);
  if (Reader.handle)
    Api.hsa_code_object_reader_destroy(Reader);
}

Expected<hsa_executable_symbol_t>
AMDGPUImageTy::findSymbol(StringRef Name, bool IsKernel) const {
  // Code object v3 and later name a kernel's symbol after its descriptor.
  std::string Candidates[2] = {IsKernel ? (Name + ".kd").str() : Name.str(),
                               Name.str()};
  hsa_status_t Status = HSA_STATUS_SUCCESS;
  for (const std::string &Candidate : Candidates) {
    hsa_executable_symbol_t Symbol;
    Status = Api.hsa_executable_get_symbol_by_name(
        Executable, Candidate.c_str(), &Agent, &Symbol);
    if (Status == HSA_STATUS_SUCCESS)
      return Symbol;
    if (!IsKernel)
      break;
  }
  return makeError(ErrorCode::NotFound,
                   "{0} '{1}' not found in image {2} on device {3}: {4}",
                   IsKernel ? "kernel" : "global", Name, getId(), DeviceId,
                   Api.describe(Status));
}

Expected<std::pair<void *, uint64_t>>
AMDGPUImageTy::findGlobal(StringRef Name) const {
  auto Symbol = findSymbol(Name, /*IsKernel=*/false);
  if (!Symbol)
    return Symbol.takeError();
  hsa_symbol_kind_t Kind;
  uint64_t Address = 0;
  uint32_t Size = 0;
  if (auto Err = checkHSA(Api,
                          Api.hsa_executable_symbol_get_info(
                              *Symbol, HSA_EXECUTABLE_SYMBOL_INFO_TYPE, &Kind),
                          "hsa_executable_symbol_get_info",
                          "type of '{0}' on device {1}", Name, DeviceId))
    return std::move(Err);
  if (Kind != HSA_SYMBOL_KIND_VARIABLE)
    return makeError(ErrorCode::InvalidImage,
                     "'{0}' in image {1} on device {2} is not a variable", Name,
                     getId(), DeviceId);
  if (auto Err = checkHSA(
          Api,
          Api.hsa_executable_symbol_get_info(
              *Symbol, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_ADDRESS, &Address),
          "hsa_executable_symbol_get_info", "address of '{0}' on device {1}",
          Name, DeviceId))
    return std::move(Err);
  if (auto Err = checkHSA(
          Api,
          Api.hsa_executable_symbol_get_info(
              *Symbol, HSA_EXECUTABLE_SYMBOL_INFO_VARIABLE_SIZE, &Size),
          "hsa_executable_symbol_get_info", "size of '{0}' on device {1}", Name,
          DeviceId))
    return std::move(Err);
  return std::make_pair(reinterpret_cast<void *>(Address), uint64_t(Size));
}

const AMDGPUKernelMetadataTy *AMDGPUImageTy::getMetadata(StringRef Name) const {
  auto It = Metadata.find(Name);
  return It == Metadata.end() ? nullptr : &It->second;
}

// SPDX-License-Identifier: Apache-2.0
#include "CUDAImage.h"

#include "offloadio/ImageSymbols.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/BinaryFormat/ELF.h"
#include "llvm/Object/ELF.h"

#include <array>
#include <cctype>

using namespace offloadio;
using namespace offloadio::cuda;

namespace {

/// ELF e_machine of NVIDIA GPU code.
constexpr uint16_t EMachineCUDA = 190;
/// From ELF ABI version 8 of cubins (CUDA 12.8 on), e_flags keeps the SM
/// number in bits 8..15; before, in bits 0..7.
constexpr unsigned CubinABIWithShiftedSM = 8;

} // namespace

std::optional<CUDAArchTy> cuda::parseCUDAArch(llvm::StringRef Arch) {
  if (!Arch.consume_front("sm_"))
    return std::nullopt;
  CUDAArchTy Result;
  if (Arch.consume_back("a"))
    Result.ArchSpecific = true;
  else
    Arch.consume_back("f"); // Family code runs like plain code here.
  unsigned Number;
  if (Arch.size() < 2 || Arch.getAsInteger(10, Number))
    return std::nullopt;
  // The last digit is the minor version: sm_90 is 9.0, sm_100 is 10.0.
  Result.Major = int(Number / 10);
  Result.Minor = int(Number % 10);
  return Result;
}

bool cuda::isCubin(llvm::StringRef Bytes) {
  auto File = llvm::object::ELF64LEFile::create(Bytes);
  if (!File) {
    llvm::consumeError(File.takeError());
    return false;
  }
  return File->getHeader().e_machine == EMachineCUDA;
}

std::optional<CUDAArchTy> cuda::readCubinArch(llvm::StringRef Bytes) {
  auto File = llvm::object::ELF64LEFile::create(Bytes);
  if (!File) {
    llvm::consumeError(File.takeError());
    return std::nullopt;
  }
  const auto &Header = File->getHeader();
  if (Header.e_machine != EMachineCUDA)
    return std::nullopt;
  unsigned ABIVersion = Header.e_ident[llvm::ELF::EI_ABIVERSION];
  unsigned SM = ABIVersion >= CubinABIWithShiftedSM
                    ? (Header.e_flags >> 8) & 0xff
                    : Header.e_flags & 0xff;
  if (SM < 10)
    return std::nullopt;
  CUDAArchTy Result;
  Result.Major = int(SM / 10);
  Result.Minor = int(SM % 10);
  return Result;
}

bool cuda::isArchCompatible(const CUDAArchTy &Image, int Major, int Minor) {
  if (Image.ArchSpecific)
    return Image.Major == Major && Image.Minor == Minor;
  return Image.Major == Major && Image.Minor <= Minor;
}

Expected<std::unique_ptr<CUDAImageTy>>
CUDAImageTy::load(const CUDAApiTy &Api, CUcontext Context,
                  const __tgt_device_image &TgtImage, int32_t ImageId,
                  int32_t DeviceId) {
  size_t Size = static_cast<const char *>(TgtImage.ImageEnd) -
                static_cast<const char *>(TgtImage.ImageStart);
  // The driver's log explains failures such as a cubin for another GPU or
  // unresolved symbols; a fixed buffer keeps loading allocation-free.
  std::array<char, 4096> Log;
  Log[0] = '\0';
  CUjit_option Options[] = {CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *Values[] = {Log.data(), reinterpret_cast<void *>(Log.size())};
  CUmodule Module = nullptr;
  CUresult Result =
      Api.cuModuleLoadDataEx(&Module, TgtImage.ImageStart,
                             unsigned(std::size(Options)), Options, Values);
  Log.back() = '\0';
  if (auto Err = checkCU(Api, Result, "cuModuleLoadDataEx",
                         "image {0} ({1} bytes at {2}) on device {3}{4}{5}",
                         ImageId, Size, TgtImage.ImageStart, DeviceId,
                         Log[0] ? ": " : "", Log.data()))
    return std::move(Err);
  // A cubin names the driver's printf (vprintf) among its symbols when its
  // code calls it; anything else (PTX text) is assumed to print.
  llvm::StringRef Bytes(static_cast<const char *>(TgtImage.ImageStart), Size);
  bool CallsPrintf = !isCubin(Bytes) || imageHasSymbol(Bytes, "vprintf");
  return std::unique_ptr<CUDAImageTy>(new CUDAImageTy(
      Api, Context, ImageId, DeviceId, TgtImage, Module, CallsPrintf));
}

CUDAImageTy::~CUDAImageTy() {
  // Images go away at device teardown only; nothing can report there.
  Api.cuCtxSetCurrent(Context);
  Api.cuModuleUnload(Module);
}

Expected<CUfunction> CUDAImageTy::getFunction(llvm::StringRef Name) const {
  llvm::SmallString<128> Symbol(Name);
  CUfunction Function = nullptr;
  if (auto Err = checkCU(
          Api, Api.cuModuleGetFunction(&Function, Module, Symbol.c_str()),
          "cuModuleGetFunction", "kernel '{0}' in image {1} on device {2}",
          Name, getId(), DeviceId))
    return std::move(Err);
  return Function;
}

Expected<std::optional<std::pair<CUdeviceptr, size_t>>>
CUDAImageTy::findGlobal(llvm::StringRef Name) const {
  llvm::SmallString<128> Symbol(Name);
  CUdeviceptr Ptr = 0;
  size_t Size = 0;
  CUresult Result = Api.cuModuleGetGlobal(&Ptr, &Size, Module, Symbol.c_str());
  if (Result == CUDA_ERROR_NOT_FOUND)
    return std::nullopt;
  if (auto Err = checkCU(Api, Result, "cuModuleGetGlobal",
                         "global '{0}' in image {1} on device {2}", Name,
                         getId(), DeviceId))
    return std::move(Err);
  return std::make_pair(Ptr, Size);
}

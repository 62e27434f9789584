// SPDX-License-Identifier: Apache-2.0
//
// Global constructors and destructors of GPU images under libomptarget 18
// (DeviceRuntimeABITy::runsImageConstructors). clang 18 no longer makes
// them offload entries for libomptarget to launch: the GPU backends lower
// them into one kernel each, which the plugin launches, on one thread,
// right after loading the image (constructors) and when it tears the
// device down (destructors). What the kernels are called, and how NVPTX
// images list their functions, depends on the target; the machine in the
// image's ELF header says which. Host images have none: their .init_array
// runs at dlopen.
#include "offloadio/Device.h"
#include "offloadio/ImageSymbols.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/BinaryFormat/ELF.h"

#include <algorithm>

using namespace offloadio;

namespace {

/// How a target's images run their constructors and destructors.
struct InitFiniConventionTy {
  uint16_t Machine;       ///< e_machine of its images.
  const char *InitKernel; ///< Runs the constructors.
  const char *FiniKernel; ///< Runs the destructors.
  /// NVPTX has no sections to gather the functions in at link time: each
  /// is a global __init_array_object_<...>_<priority> (or
  /// __fini_array_object_...) holding its address, and the plugin gives the
  /// kernel an array of them sorted by priority in
  /// __init_array_start/__init_array_end (__fini_...).
  bool BuildsArrays;
};

constexpr InitFiniConventionTy InitFiniConventions[] = {
    {llvm::ELF::EM_AMDGPU, "amdgcn.device.init", "amdgcn.device.fini", false},
    {llvm::ELF::EM_CUDA, "nvptx$device$init", "nvptx$device$fini", true},
};

const InitFiniConventionTy *findInitFiniConvention(llvm::StringRef Image) {
  std::optional<uint16_t> Machine = imageMachine(Image);
  if (!Machine)
    return nullptr;
  for (const InitFiniConventionTy &C : InitFiniConventions)
    if (C.Machine == *Machine)
      return &C;
  return nullptr;
}

const char *initFiniWhat(bool Init) {
  return Init ? "constructors" : "destructors";
}

/// The call of kernel \p Kernel of \p Image, with the image's function
/// globals for it by priority when \p BuildsArray.
Expected<InitFiniCallTy> describeInitFini(llvm::StringRef Image,
                                          const char *Kernel, bool BuildsArray,
                                          bool Init) {
  InitFiniCallTy Call{Kernel, BuildsArray, {}};
  if (!BuildsArray)
    return Call;
  struct FunctionTy {
    uint16_t Priority;
    std::string Global;
  };
  std::vector<FunctionTy> Functions;
  for (std::string &Name : imageSymbolsWithPrefix(
           Image, Init ? "__init_array_object_" : "__fini_array_object_")) {
    uint16_t Priority;
    if (llvm::StringRef(Name).rsplit('_').second.getAsInteger(10, Priority))
      return makeError(ErrorCode::InvalidImage,
                       "'{0}' does not end in a priority (0 to 65535)", Name);
    Functions.push_back({Priority, std::move(Name)});
  }
  // Lowest priority first; the image's order among equals.
  std::stable_sort(Functions.begin(), Functions.end(),
                   [](const FunctionTy &A, const FunctionTy &B) {
                     return A.Priority < B.Priority;
                   });
  for (FunctionTy &F : Functions)
    Call.Functions.push_back(std::move(F.Global));
  return Call;
}

/// \p Err as the failure of \p Image's constructors or destructors.
Error inInitFiniContext(Error Err, bool Init, int32_t Image,
                        int32_t DeviceId) {
  ErrorDetailsTy Details = takeErrorDetails(std::move(Err));
  return makeError(Details.Code, "global {0} of image {1} on device {2}: {3}",
                   initFiniWhat(Init), Image, DeviceId, Details.Message);
}

} // namespace

Error GenericDeviceTy::runImageConstructors(DeviceImageTy &Image) {
  if (!Services.RuntimeABI.runsImageConstructors())
    return Error::success();
  llvm::StringRef Bytes = Image.getBytes();
  const InitFiniConventionTy *C = findInitFiniConvention(Bytes);
  if (!C)
    return Error::success();
  if (imageHasSymbol(Bytes, C->FiniKernel)) {
    auto Fini = describeInitFini(Bytes, C->FiniKernel, C->BuildsArrays,
                                 /*Init=*/false);
    if (!Fini)
      return inInitFiniContext(Fini.takeError(), false, Image.getId(),
                               DeviceId);
    Image.PendingDestructors = std::move(*Fini);
  }
  if (!imageHasSymbol(Bytes, C->InitKernel))
    return Error::success();
  auto Init =
      describeInitFini(Bytes, C->InitKernel, C->BuildsArrays, /*Init=*/true);
  if (!Init)
    return inInitFiniContext(Init.takeError(), true, Image.getId(), DeviceId);
  return runInitFiniKernel(Image, *Init, /*Init=*/true);
}

Error GenericDeviceTy::runImageDestructors() {
  TeardownTy Teardown;
  runImageDestructors(Teardown);
  return Teardown.finish();
}

void GenericDeviceTy::runImageDestructors(TeardownTy &Teardown) {
  std::lock_guard<std::mutex> Guard(ImagesLock);
  // The reverse of the load order, as a program's shared objects. Each
  // runs once: those a driver that has shut down skips are dropped too.
  for (auto &Image : llvm::reverse(Images)) {
    if (!Image->PendingDestructors)
      continue;
    InitFiniCallTy Call = std::move(*Image->PendingDestructors);
    Image->PendingDestructors.reset();
    Teardown.run([&] { return runInitFiniKernel(*Image, Call, false); });
  }
}

Error GenericDeviceTy::runInitFiniKernel(DeviceImageTy &Image,
                                         const InitFiniCallTy &Call,
                                         bool Init) {
  void *Array = nullptr;
  if (Call.BuildsArray) {
    auto Built = buildInitFiniArray(Image, Call, Init);
    if (!Built)
      return inInitFiniContext(Built.takeError(), Init, Image.getId(),
                               DeviceId);
    Array = *Built;
  }
  Error Err = Error::success();
  auto Kernel = constructKernelImpl(Image, Call.Kernel);
  if (!Kernel) {
    Err = Kernel.takeError();
  } else {
    Services.Info.print(InfoPluginKernel, DeviceId,
                        "image {0}: running its global {1} ({2})",
                        Image.getId(), initFiniWhat(Init), Call.Kernel);
    AsyncInfoWrapperTy Wrapper(*this, nullptr);
    auto Stream = Wrapper.getStream();
    Err = Wrapper.finalize(Stream ? (*Kernel)->launchAlone(*this, *Stream)
                                  : Stream.takeError());
  }
  // The array is read by the kernel alone, which is done.
  if (Array)
    Err = llvm::joinErrors(std::move(Err), freeMemory(Array));
  if (Err)
    return inInitFiniContext(std::move(Err), Init, Image.getId(), DeviceId);
  return Error::success();
}

Expected<void *>
GenericDeviceTy::buildInitFiniArray(DeviceImageTy &Image,
                                    const InitFiniCallTy &Call, bool Init) {
  // Each global holds its function's device address, relocated at load.
  std::vector<void *> Addresses(Call.Functions.size());
  for (size_t I = 0; I < Call.Functions.size(); ++I) {
    auto Global =
        getGlobalAddressImpl(Image, Call.Functions[I], sizeof(void *));
    if (!Global)
      return Global.takeError();
    if (auto Err = dataRetrieve(&Addresses[I], *Global, sizeof(void *),
                                nullptr))
      return std::move(Err);
  }
  size_t Bytes = Addresses.size() * sizeof(void *);
  void *Array = nullptr;
  if (Bytes) {
    auto Allocated = allocateMemory(Bytes, AllocKindTy::Device);
    if (!Allocated)
      return Allocated.takeError();
    Array = *Allocated;
    if (auto Err = dataSubmit(Array, Addresses.data(), int64_t(Bytes),
                              nullptr)) {
      llvm::consumeError(freeMemory(Array));
      return std::move(Err);
    }
  }
  void *Bounds[2] = {Array, static_cast<char *>(Array) + Bytes};
  const char *BoundNames[2] = {
      Init ? "__init_array_start" : "__fini_array_start",
      Init ? "__init_array_end" : "__fini_array_end"};
  for (int I = 0; I < 2; ++I) {
    auto Written = writeImageGlobalImpl(Image, BoundNames[I], &Bounds[I],
                                        sizeof(void *));
    Error Err = Written ? Error::success() : Written.takeError();
    if (!Err && !*Written)
      Err = makeError(ErrorCode::InvalidImage, "the image has no '{0}'",
                      BoundNames[I]);
    if (Err) {
      if (Array)
        llvm::consumeError(freeMemory(Array));
      return std::move(Err);
    }
  }
  return Array;
}

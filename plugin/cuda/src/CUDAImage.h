// SPDX-License-Identifier: Apache-2.0
//
// An NVPTX offload image (a cubin: ELF, e_machine EM_CUDA) loaded as a
// CUmodule on one device, and the image checks done before loading.
#ifndef OFFLOADIO_CUDA_CUDAIMAGE_H
#define OFFLOADIO_CUDA_CUDAIMAGE_H

#include "CUDAApi.h"

#include "offloadio/DeviceImage.h"

#include "llvm/ADT/StringRef.h"

#include <optional>

namespace offloadio {
namespace cuda {

/// A CUDA architecture such as sm_90 or sm_90a.
struct CUDAArchTy {
  int Major = 0;
  int Minor = 0;
  /// Architecture-specific code (the "a" suffix): runs on that exact
  /// compute capability only.
  bool ArchSpecific = false;
};

/// Parse "sm_<major><minor>[a|f]" (sm_90, sm_90a, sm_100f); std::nullopt for
/// anything else.
std::optional<CUDAArchTy> parseCUDAArch(llvm::StringRef Arch);

/// The architecture recorded in a cubin's ELF header, when it can be read.
std::optional<CUDAArchTy> readCubinArch(llvm::StringRef Bytes);

/// Whether \p Bytes is an ELF image for NVIDIA GPUs.
bool isCubin(llvm::StringRef Bytes);

/// Whether code for \p Image runs on a device of compute capability
/// \p Major.\p Minor. SASS is binary compatible with later minor versions
/// of the same major version; architecture-specific SASS is not.
bool isArchCompatible(const CUDAArchTy &Image, int Major, int Minor);

/// One module loaded in one device's context.
class CUDAImageTy final : public DeviceImageTy {
public:
  /// Load \p TgtImage into \p Context (which must be current) for device
  /// \p DeviceId.
  static Expected<std::unique_ptr<CUDAImageTy>>
  load(const CUDAApiTy &Api, CUcontext Context,
       const __tgt_device_image &TgtImage, int32_t ImageId, int32_t DeviceId);
  ~CUDAImageTy() override;

  /// The kernel \p Name.
  Expected<CUfunction> getFunction(llvm::StringRef Name) const;

  /// The device address and size of global \p Name, or std::nullopt when
  /// the image has no such symbol.
  Expected<std::optional<std::pair<CUdeviceptr, size_t>>>
  findGlobal(llvm::StringRef Name) const;

  /// The module handle.
  CUmodule getModule() const { return Module; }
  /// Whether the image's code calls the device printf, whose buffer the
  /// driver copies to the host only when the host synchronises.
  bool callsPrintf() const { return CallsPrintf; }

private:
  CUDAImageTy(const CUDAApiTy &Api, CUcontext Context, int32_t ImageId,
              int32_t DeviceId, const __tgt_device_image &TgtImage,
              CUmodule Module, bool CallsPrintf)
      : DeviceImageTy(ImageId, TgtImage), Api(Api), Context(Context),
        DeviceId(DeviceId), Module(Module), CallsPrintf(CallsPrintf) {}

  const CUDAApiTy &Api;
  CUcontext Context;
  int32_t DeviceId;
  CUmodule Module;
  bool CallsPrintf;
};

} // namespace cuda
} // namespace offloadio

#endif // OFFLOADIO_CUDA_CUDAIMAGE_H

// SPDX-License-Identifier: Apache-2.0
//
// AMDGPU code objects: image checks, the kernel metadata note, and the HSA
// executable a device image becomes once loaded on an agent.
#ifndef OFFLOADIO_AMDGPU_AMDGPUIMAGE_H
#define OFFLOADIO_AMDGPU_AMDGPUIMAGE_H

#include "HSAApi.h"

#include "offloadio/DeviceImage.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace offloadio {
namespace amdgpu {

/// A target id such as "gfx90a:sramecc+:xnack-": a processor and the
/// features it pins on ('+') or off ('-'); absent features mean "any".
struct AMDGPUTargetIdTy {
  std::string Processor;
  /// Feature name -> '+' or '-'.
  std::vector<std::pair<std::string, char>> Features;

  /// Parse "gfx90a:xnack+" (an "amdgcn-amd-amdhsa--" prefix is skipped).
  static AMDGPUTargetIdTy parse(llvm::StringRef Text);
  /// Whether code built for \p Image runs on an agent of target \p Agent:
  /// same processor, and no feature set one way in the image and the other
  /// way on the agent.
  static bool isCompatible(const AMDGPUTargetIdTy &Image,
                           const AMDGPUTargetIdTy &Agent);
  /// Back to text.
  std::string str() const;
};

/// The target id of an AMDGPU ELF image from its e_flags, or nothing if
/// \p Bytes is not an AMDGPU ELF object.
std::optional<AMDGPUTargetIdTy> readImageTarget(llvm::StringRef Bytes);

/// What a kernel argument is, by its metadata .value_kind.
enum class AMDGPUArgKindTy : uint8_t {
  Explicit,            ///< by_value, global_buffer, ...: a user argument.
  HiddenGlobalOffsetX, ///< hidden_global_offset_{x,y,z}
  HiddenGlobalOffsetY,
  HiddenGlobalOffsetZ,
  HiddenBlockCountX, ///< hidden_block_count_{x,y,z} (code object v5)
  HiddenBlockCountY,
  HiddenBlockCountZ,
  HiddenGroupSizeX, ///< hidden_group_size_{x,y,z} (v5)
  HiddenGroupSizeY,
  HiddenGroupSizeZ,
  HiddenRemainderX, ///< hidden_remainder_{x,y,z} (v5)
  HiddenRemainderY,
  HiddenRemainderZ,
  HiddenGridDims,       ///< hidden_grid_dims (v5)
  HiddenDynamicLdsSize, ///< hidden_dynamic_lds_size (v5)
  HiddenQueuePtr,       ///< hidden_queue_ptr
  HiddenOther,          ///< any other hidden_* argument: passed as zero
};

/// One kernel argument from the metadata.
struct AMDGPUKernelArgTy {
  uint32_t Offset = 0;
  uint32_t Size = 0;
  AMDGPUArgKindTy Kind = AMDGPUArgKindTy::Explicit;
};

/// One kernel's entry in the NT_AMDGPU_METADATA note.
struct AMDGPUKernelMetadataTy {
  std::string Name;
  uint32_t KernargSegmentSize = 0;
  uint32_t MaxFlatWorkgroupSize = 0;
  bool UsesDynamicStack = false;
  std::vector<AMDGPUKernelArgTy> Args;
  /// Number of Explicit arguments.
  uint32_t NumExplicitArgs = 0;
};

/// Parse the metadata note of \p Bytes: kernels by name. Images without a
/// note give an empty map.
Expected<llvm::StringMap<AMDGPUKernelMetadataTy>>
readKernelMetadata(llvm::StringRef Bytes);

/// An image loaded as an HSA executable on one agent.
class AMDGPUImageTy final : public DeviceImageTy {
public:
  /// Load \p TgtImage for \p Agent (whose profile is \p Profile).
  static Expected<std::unique_ptr<AMDGPUImageTy>>
  load(const HSAApiTy &Api, hsa_agent_t Agent, hsa_profile_t Profile,
       const __tgt_device_image &TgtImage, int32_t ImageId, int32_t DeviceId);
  ~AMDGPUImageTy() override;

  /// The executable symbol \p Name (kernels: the "<name>.kd" descriptor).
  Expected<hsa_executable_symbol_t> findSymbol(llvm::StringRef Name,
                                               bool IsKernel) const;
  /// Address and size of global \p Name.
  Expected<std::pair<void *, uint64_t>> findGlobal(llvm::StringRef Name) const;
  /// The metadata of kernel \p Name, or null when the image has none.
  const AMDGPUKernelMetadataTy *getMetadata(llvm::StringRef Name) const;

private:
  AMDGPUImageTy(const HSAApiTy &Api, hsa_agent_t Agent, int32_t ImageId,
                const __tgt_device_image &TgtImage, int32_t DeviceId)
      : DeviceImageTy(ImageId, TgtImage), Api(Api), Agent(Agent),
        DeviceId(DeviceId) {}

  const HSAApiTy &Api;
  hsa_agent_t Agent;
  int32_t DeviceId;
  hsa_code_object_reader_t Reader = {0};
  hsa_executable_t Executable = {0};
  llvm::StringMap<AMDGPUKernelMetadataTy> Metadata;
};

} // namespace amdgpu
} // namespace offloadio

#endif // OFFLOADIO_AMDGPU_AMDGPUIMAGE_H

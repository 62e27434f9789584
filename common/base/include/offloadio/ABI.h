// SPDX-License-Identifier: Apache-2.0
//
// The data types that cross the libomptarget <-> plugin boundary of LLVM
// 16, 17 and 18, declared from the layouts in the ABI fact sheets; where a
// type belongs to some versions only, its comment says which. Only this
// file and the entry points (common/device/src/CApi*.cpp, abi/) know the C
// ABI; everything else uses the C++ framework.
#ifndef OFFLOADIO_ABI_H
#define OFFLOADIO_ABI_H

#include <cstddef>
#include <cstdint>

extern "C" {

/// One offload entry: a kernel (Size == 0) or a global (Size > 0).
struct __tgt_offload_entry {
  void *addr;       ///< Host address, or the handle/device address we return.
  char *name;       ///< Symbol name.
  size_t size;      ///< 0 for kernels, the byte size for globals.
  int32_t flags;    ///< LINK/CTOR/DTOR bits.
  int32_t reserved; ///< Unused.
};

/// One device image inside a binary descriptor.
struct __tgt_device_image {
  void *ImageStart;                  ///< First byte of the image.
  void *ImageEnd;                    ///< One past the last byte.
  __tgt_offload_entry *EntriesBegin; ///< The image's entries.
  __tgt_offload_entry *EntriesEnd;   ///< One past the last entry.
};

/// A whole fat binary as registered by __tgt_register_lib.
struct __tgt_bin_desc {
  int32_t NumDeviceImages;                ///< Number of images.
  __tgt_device_image *DeviceImages;       ///< The images.
  __tgt_offload_entry *HostEntriesBegin;  ///< Host entries.
  __tgt_offload_entry *HostEntriesEnd;    ///< One past the last.
};

/// The table load_binary returns: must match the image's entries 1:1.
struct __tgt_target_table {
  __tgt_offload_entry *EntriesBegin; ///< First entry.
  __tgt_offload_entry *EntriesEnd;   ///< One past the last.
};

/// Extra information clang 16 and 17 put in an OffloadBinary
/// (is_valid_binary_info; gone in 18).
struct __tgt_image_info {
  const char *Arch; ///< Target architecture, "" for x86_64.
};

/// The handle of a loaded image that load_binary answers in libomptarget
/// 18, passed back by value to get_function and get_global.
struct __tgt_device_binary {
  uintptr_t handle;
};

/// The caller's handle for asynchronous work; Queue != NULL means pending.
/// libomptarget 18's is larger (fields the plugin never reads follow):
/// only Queue may be used.
struct __tgt_async_info {
  void *Queue;
};

/// Interop information.
struct __tgt_device_info {
  void *Context; ///< Vendor context.
  void *Device;  ///< Vendor device.
};

/// Kernel launch arguments (clang-16 emits version 2; ctor/dtor use 1).
struct KernelArgsTy {
  uint32_t Version;      ///< Struct version.
  uint32_t NumArgs;      ///< Overwritten by libomptarget with the TgtArgs count.
  void **ArgBasePtrs;    ///< Host base pointers (original count).
  void **ArgPtrs;        ///< Host pointers.
  int64_t *ArgSizes;     ///< Sizes.
  int64_t *ArgTypes;     ///< Map types.
  void **ArgNames;       ///< Names.
  void **ArgMappers;     ///< User mappers.
  uint64_t Tripcount;    ///< Loop trip count of combined constructs, or 0.
  uint64_t Flags;        ///< Bit 0: nowait.
  uint32_t NumTeams[3];  ///< 0 means unspecified.
  uint32_t ThreadLimit[3]; ///< 0 means unspecified.
  uint32_t DynCGroupMem; ///< Dynamic group memory in bytes.
};

} // extern "C"

static_assert(sizeof(__tgt_offload_entry) == 32, "ABI layout");
static_assert(sizeof(__tgt_device_image) == 32, "ABI layout");
static_assert(sizeof(__tgt_bin_desc) == 32, "ABI layout");
static_assert(sizeof(KernelArgsTy) == 104, "ABI layout");
static_assert(offsetof(KernelArgsTy, NumTeams) == 72, "ABI layout");

namespace offloadio {

/// libomptarget's return codes.
enum : int32_t { OFFLOAD_SUCCESS = 0, OFFLOAD_FAIL = ~0 };

/// Allocation kinds of data_alloc/data_delete.
enum class AllocKindTy : int32_t {
  Device = 0,
  Host = 1,
  Shared = 2,
  Default = 3,
};

/// Requires flags passed to init_requires.
enum RequiresFlagsTy : int64_t {
  OMP_REQ_UNDEFINED = 0x0,
  OMP_REQ_NONE = 0x1,
  OMP_REQ_REVERSE_OFFLOAD = 0x2,
  OMP_REQ_UNIFIED_ADDRESS = 0x4,
  OMP_REQ_UNIFIED_SHARED_MEMORY = 0x8,
  OMP_REQ_DYNAMIC_ALLOCATORS = 0x10,
};

/// Offload entry flags.
enum OffloadEntryFlagsTy : int32_t {
  OMP_DECLARE_TARGET_LINK = 0x1,
  OMP_DECLARE_TARGET_CTOR = 0x2,
  OMP_DECLARE_TARGET_DTOR = 0x4,
  /// A function callable through a pointer on the device (declare target
  /// indirect, libomptarget 18): the entry's address is the host
  /// function's, its global the device function's address.
  OMP_DECLARE_TARGET_INDIRECT = 0x8,
};

/// Printable name of an allocation kind.
const char *allocKindName(AllocKindTy Kind);

/// Whether \p Kind is device memory: DEVICE, or DEFAULT (omp_target_alloc).
inline bool isDeviceKind(AllocKindTy Kind) {
  return Kind == AllocKindTy::Device || Kind == AllocKindTy::Default;
}

} // namespace offloadio

#endif // OFFLOADIO_ABI_H

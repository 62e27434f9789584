// SPDX-License-Identifier: Apache-2.0
//
// What the conformance suite must know of the libomptarget version the
// plugins under test were built for (OFFLOADIO_CONFORMANCE_LLVM_ABI, the
// build's OFFLOADIO_LLVM_ABI): the entry points that version looks up, with
// the signatures it calls them with, what init_requires answers, how a
// loaded image's kernels and globals are found, and what a kernel's first
// argument is. The only place of the suite where the versions differ; the
// cases ask these and never test a version number.
#ifndef OFFLOADIO_TEST_CONFORMANCE_CONFORMANCEABI_H
#define OFFLOADIO_TEST_CONFORMANCE_CONFORMANCEABI_H

#include "offloadio/ABI.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

#ifndef OFFLOADIO_CONFORMANCE_LLVM_ABI
#error "OFFLOADIO_CONFORMANCE_LLVM_ABI must name the libomptarget version"
#endif

namespace offloadio::conformance {

// The entry points libomptarget 16, 17 and 18 all look up, with the same
// signature (16's include/rtl.h, 17's rtl.h, 18's Shared/PluginAPI.inc).
#define OFFLOADIO_COMMON_ENTRY_POINTS(X)                                       \
  X(int32_t, init_plugin, void)                                                \
  X(int32_t, is_valid_binary, __tgt_device_image *)                            \
  X(int32_t, supports_empty_images, void)                                      \
  X(int32_t, number_of_devices, void)                                          \
  X(int64_t, init_requires, int64_t)                                           \
  X(int32_t, init_device, int32_t)                                             \
  X(void *, data_alloc, int32_t, int64_t, void *, int32_t)                     \
  X(int32_t, data_delete, int32_t, void *, int32_t)                            \
  X(int32_t, data_submit, int32_t, void *, void *, int64_t)                    \
  X(int32_t, data_submit_async, int32_t, void *, void *, int64_t,              \
    __tgt_async_info *)                                                        \
  X(int32_t, data_retrieve, int32_t, void *, void *, int64_t)                  \
  X(int32_t, data_retrieve_async, int32_t, void *, void *, int64_t,            \
    __tgt_async_info *)                                                        \
  X(int32_t, is_data_exchangable, int32_t, int32_t)                            \
  X(int32_t, data_exchange, int32_t, void *, int32_t, void *, int64_t)         \
  X(int32_t, data_exchange_async, int32_t, void *, int32_t, void *, int64_t,   \
    __tgt_async_info *)                                                        \
  X(int32_t, launch_kernel, int32_t, void *, void **, ptrdiff_t *,             \
    KernelArgsTy *, __tgt_async_info *)                                        \
  X(int32_t, synchronize, int32_t, __tgt_async_info *)                         \
  X(int32_t, query_async, int32_t, __tgt_async_info *)                         \
  X(int32_t, create_event, int32_t, void **)                                   \
  X(int32_t, record_event, int32_t, void *, __tgt_async_info *)                \
  X(int32_t, wait_event, int32_t, void *, __tgt_async_info *)                  \
  X(int32_t, sync_event, int32_t, void *)                                      \
  X(int32_t, destroy_event, int32_t, void *)                                   \
  X(void, set_info_flag, uint32_t)                                             \
  X(void, print_device_info, int32_t)                                          \
  X(int32_t, init_async_info, int32_t, __tgt_async_info **)                    \
  X(int32_t, init_device_info, int32_t, __tgt_device_info *, const char **)    \
  X(int32_t, data_lock, int32_t, void *, int64_t, void **)                     \
  X(int32_t, data_unlock, int32_t, void *)

// 16 and 17: load_binary answers the image's entry table; the image's
// architecture comes with is_valid_binary_info; deinit_plugin follows each
// unregistered library. 17 adds the notices of mapped buffers.
#define OFFLOADIO_TABLE_ENTRY_POINTS(X)                                        \
  X(int32_t, deinit_plugin, void)                                              \
  X(int32_t, is_valid_binary_info, __tgt_device_image *, __tgt_image_info *)   \
  X(int32_t, deinit_device, int32_t)                                           \
  X(__tgt_target_table *, load_binary, int32_t, __tgt_device_image *)
#define OFFLOADIO_MAP_NOTIFY_ENTRY_POINTS(X)                                   \
  X(int32_t, data_notify_mapped, int32_t, void *, int64_t)                     \
  X(int32_t, data_notify_unmapped, int32_t, void *)

#if OFFLOADIO_CONFORMANCE_LLVM_ABI == 16
#define OFFLOADIO_VERSION_ENTRY_POINTS(X) OFFLOADIO_TABLE_ENTRY_POINTS(X)
#elif OFFLOADIO_CONFORMANCE_LLVM_ABI == 17
#define OFFLOADIO_VERSION_ENTRY_POINTS(X)                                      \
  OFFLOADIO_TABLE_ENTRY_POINTS(X) OFFLOADIO_MAP_NOTIFY_ENTRY_POINTS(X)
#elif OFFLOADIO_CONFORMANCE_LLVM_ABI == 18
// 18: load_binary answers a handle, from which libomptarget asks for each
// kernel and global by name; the offset of the plugin's first device, the
// zero-copy question and record-and-replay are new.
#define OFFLOADIO_VERSION_ENTRY_POINTS(X)                                      \
  X(int32_t, load_binary, int32_t, __tgt_device_image *,                       \
    __tgt_device_binary *)                                                     \
  X(int32_t, get_function, __tgt_device_binary, const char *, void **)         \
  X(int32_t, get_global, __tgt_device_binary, uint64_t, const char *, void **) \
  X(int32_t, set_device_offset, int32_t)                                       \
  X(int32_t, use_auto_zero_copy, int32_t)                                      \
  X(int32_t, initialize_record_replay, int32_t, int64_t, void *, bool, bool,   \
    uint64_t *)                                                                \
  OFFLOADIO_MAP_NOTIFY_ENTRY_POINTS(X)
#else
#error "OFFLOADIO_CONFORMANCE_LLVM_ABI must be 16, 17 or 18"
#endif

/// Every entry point the version looks up; the stock plugins of that
/// version export exactly these (16: 33, 17: 35, 18: 37).
#define OFFLOADIO_ENTRY_POINTS(X)                                              \
  OFFLOADIO_COMMON_ENTRY_POINTS(X) OFFLOADIO_VERSION_ENTRY_POINTS(X)

/// The libomptarget version the plugins under test serve.
constexpr unsigned ConformanceABIVersion = OFFLOADIO_CONFORMANCE_LLVM_ABI;

/// What init_requires must answer for \p Flags: 16 and 17 ignore the
/// answer and the stock plugins echo the flags; 18 fails the device on
/// anything but 0.
constexpr int64_t expectedInitRequiresAnswer(int64_t Flags) {
  return ConformanceABIVersion >= 18 ? 0 : Flags;
}

/// Whether every kernel is passed libomptarget 18's launch environment as
/// an implicit first argument (the all-ones pointer when the kernel needs
/// no reduction buffer, as every host kernel).
constexpr bool kernelsTakeLaunchEnvironment() {
  return ConformanceABIVersion >= 18;
}

/// The async info as the version's libomptarget allocates it and passes it
/// to every entry point that takes one. 16 and 17: the queue alone. 18
/// (Shared/APITypes.h): the queue, then the allocations a launch leaves to
/// the plugin to free at synchronize (an llvm::SmallVector<void *, 2>,
/// empty) and the host storage of a launch's environment (16 bytes); 18's
/// stock plugins read and write those members, so an 8-byte struct would
/// hand them whatever lies past it. Not copyable: the empty vector points
/// into itself.
struct AsyncInfoTy {
  AsyncInfoTy() = default;
  AsyncInfoTy(const AsyncInfoTy &) = delete;
  AsyncInfoTy &operator=(const AsyncInfoTy &) = delete;
  __tgt_async_info *get() { return &Info; }
  void *queue() const { return Info.Queue; }

  // Public, as libomptarget's: only the plugin reads the members past Info.
  __tgt_async_info Info{nullptr};
#if OFFLOADIO_CONFORMANCE_LLVM_ABI >= 18
  void **AllocationsBegin = AllocationsInline;
  uint32_t AllocationsSize = 0;
  uint32_t AllocationsCapacity = 2;
  void *AllocationsInline[2] = {nullptr, nullptr};
  uint32_t LaunchReductionCount = 0;
  uint32_t LaunchReductionIterations = 0;
  void *LaunchReductionBuffer = nullptr;
#endif
};
#if OFFLOADIO_CONFORMANCE_LLVM_ABI >= 18
static_assert(sizeof(AsyncInfoTy) == 56, "libomptarget 18's __tgt_async_info");
#else
static_assert(sizeof(AsyncInfoTy) == 8, "libomptarget 16's and 17's __tgt_async_info");
#endif

/// A loaded image, as the version's load_binary leaves it.
struct LoadedImageTy {
  __tgt_target_table *Table = nullptr; ///< 16 and 17.
  __tgt_device_binary Binary{0};       ///< 18.
};

/// Load \p Image on device \p Dev of plugin \p P (a PluginTy with the
/// version's entry points) into \p Out; whether it loaded.
template <typename PluginT>
bool loadImage(PluginT &P, int32_t Dev, __tgt_device_image &Image,
               LoadedImageTy &Out) {
#if OFFLOADIO_CONFORMANCE_LLVM_ABI >= 18
  return P.load_binary(Dev, &Image, &Out.Binary) == OFFLOAD_SUCCESS &&
         Out.Binary.handle != 0;
#else
  Out.Table = P.load_binary(Dev, &Image);
  return Out.Table != nullptr;
#endif
}

/// The device address of entry \p Name (\p Size bytes; 0 for a kernel) of
/// a loaded image, or null: 16 and 17 from the table load_binary answered,
/// 18 from get_function or get_global.
template <typename PluginT>
void *findEntry(PluginT &P, const LoadedImageTy &Image, const char *Name,
                uint64_t Size) {
#if OFFLOADIO_CONFORMANCE_LLVM_ABI >= 18
  void *Addr = nullptr;
  int32_t Rc = Size == 0 ? P.get_function(Image.Binary, Name, &Addr)
                         : P.get_global(Image.Binary, Size, Name, &Addr);
  return Rc == OFFLOAD_SUCCESS ? Addr : nullptr;
#else
  for (__tgt_offload_entry *E = Image.Table->EntriesBegin;
       E != Image.Table->EntriesEnd; ++E)
    if (E->name && std::strcmp(E->name, Name) == 0)
      return E->addr;
  return nullptr;
#endif
}

} // namespace offloadio::conformance

#endif // OFFLOADIO_TEST_CONFORMANCE_CONFORMANCEABI_H

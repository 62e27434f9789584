// SPDX-License-Identifier: Apache-2.0
//
// Compile-time ties between the C types of include/ompx_io.h and their C++
// twins in the framework. CApiExtensions.cpp converts between them by number
// and by index; a change on one side that the other does not follow fails
// the build here instead of mislabelling counters at run time. The layout
// checks pin the public structs, whose layouts never change
// (include/ompx_io.h says how the API grows instead): programs compiled
// against an older ompx_io.h pass them to the new library, and plugins and
// libompx_io of different builds pass them to each other.
#include "offloadio/Device.h"
#include "offloadio/Error.h"
#include "offloadio/ExtensionABI.h"
#include "offloadio/io/IOPathNames.h"
#include "offloadio/PinnedBudget.h"
#include "offloadio/PinnedMemoryMap.h"
#include "offloadio/SettingTable.h"
#include "offloadio/io/IOEngine.h"

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <type_traits>

using namespace offloadio;

// enum ompx_io_path numbers the engine's paths, then the initial device's.
static_assert(unsigned(IOPathTy::HostAddressable) == OMPX_IO_PATH_DIRECT,
              "io path");
static_assert(unsigned(IOPathTy::Fastpath) == OMPX_IO_PATH_FASTPATH, "io path");
static_assert(unsigned(IOPathTy::Staged) == OMPX_IO_PATH_STAGED, "io path");
static_assert(unsigned(IOPathTy::Count) == OMPX_IO_PATH_HOST,
              "the host path follows the engine's paths");
static_assert(unsigned(IOPathTy::Count) + 1 == OMPX_IO_NUM_PATHS, "io paths");
static_assert(NumNamedIOPaths == OMPX_IO_NUM_PATHS, "every public path has a name");

// ompx_io_stats_t is filled index by index from IOStatsTy.
template <typename ArrayTy>
constexpr size_t PathSlots = std::extent_v<ArrayTy>;
static_assert(PathSlots<decltype(IOStatsTy::BytesRead)> == OMPX_IO_NUM_PATHS &&
                  PathSlots<decltype(IOStatsTy::BytesWritten)> ==
                      OMPX_IO_NUM_PATHS &&
                  PathSlots<decltype(IOStatsTy::Reads)> == OMPX_IO_NUM_PATHS &&
                  PathSlots<decltype(IOStatsTy::Writes)> == OMPX_IO_NUM_PATHS,
              "IOStatsTy has one counter per ompx_io_path");

// enum ompx_copy_path numbers TransferPathTy.
static_assert(unsigned(TransferPathTy::PinnedToDevice) ==
                  OMPX_COPY_PINNED_TO_DEVICE,
              "copy path");
static_assert(unsigned(TransferPathTy::PinnedFromDevice) ==
                  OMPX_COPY_PINNED_FROM_DEVICE,
              "copy path");
static_assert(unsigned(TransferPathTy::PageableToDevice) ==
                  OMPX_COPY_STAGED_TO_DEVICE,
              "copy path");
static_assert(unsigned(TransferPathTy::PageableFromDevice) ==
                  OMPX_COPY_STAGED_FROM_DEVICE,
              "copy path");
static_assert(unsigned(TransferPathTy::LockedToDevice) ==
                  OMPX_COPY_LOCKED_TO_DEVICE,
              "copy path");
static_assert(unsigned(TransferPathTy::LockedFromDevice) ==
                  OMPX_COPY_LOCKED_FROM_DEVICE,
              "copy path");
static_assert(unsigned(TransferPathTy::DeviceToDevice) ==
                  OMPX_COPY_DEVICE_TO_DEVICE,
              "copy path");
static_assert(unsigned(TransferPathTy::NumPaths) == OMPX_COPY_NUM_PATHS,
              "copy paths");

// ompx_lock_region_t is filled field by field from PinnedRegionInfoTy.
static_assert(std::is_same_v<decltype(PinnedRegionInfoTy::Size),
                             decltype(ompx_lock_region_t::size)> &&
                  std::is_same_v<decltype(PinnedRegionInfoTy::References),
                                 decltype(ompx_lock_region_t::references)>,
              "lock region counts");

// The extensions answer 0 for success, the value of ErrorCode::Success.
static_assert(int(ErrorCode::Success) == 0, "success is 0 on both sides");

// The public structs' layouts.
static_assert(sizeof(ompx_io_stats_t) == 4 * OMPX_IO_NUM_PATHS * 8 + 8 + 160 &&
                  offsetof(ompx_io_stats_t, fallbacks) == 128 &&
                  offsetof(ompx_io_stats_t, last_fallback) == 136,
              "ompx_io_stats_t layout");
static_assert(sizeof(ompx_lock_region_t) == 40 &&
                  offsetof(ompx_lock_region_t, references) == 24 &&
                  offsetof(ompx_lock_region_t, external) == 32,
              "ompx_lock_region_t layout");
static_assert(sizeof(ompx_io_setting_t) == 420 &&
                  offsetof(ompx_io_setting_t, source) == 416,
              "ompx_io_setting_t layout");
static_assert(sizeof(ompx_io_setting_info_t) == 680 &&
                  offsetof(ompx_io_setting_info_t, name) == 8 &&
                  offsetof(ompx_io_setting_info_t, doc) == 456 &&
                  offsetof(ompx_io_setting_info_t, origin) == 664 &&
                  offsetof(ompx_io_setting_info_t, layer) == 672,
              "ompx_io_setting_info_t layout (members are only appended)");
static_assert(SettingInfoFirstSize == 680,
              "the first version of ompx_io_setting_info_t never changes");

// ompx_io_setting_info_t's kind and layer number SettingKindTy and
// SettingLayerTy.
static_assert(unsigned(SettingKindTy::Bool) == OMPX_IO_KIND_BOOL &&
                  unsigned(SettingKindTy::Int) == OMPX_IO_KIND_INT &&
                  unsigned(SettingKindTy::Size) == OMPX_IO_KIND_SIZE &&
                  unsigned(SettingKindTy::Choice) == OMPX_IO_KIND_CHOICE &&
                  unsigned(SettingKindTy::InfoMask) == OMPX_IO_KIND_INFO_MASK &&
                  unsigned(SettingKindTy::Path) == OMPX_IO_KIND_PATH,
              "setting kinds");
static_assert(unsigned(SettingLayerTy::Plugin) == OMPX_IO_LAYER_PLUGIN &&
                  unsigned(SettingLayerTy::Device) == OMPX_IO_LAYER_DEVICE &&
                  unsigned(SettingLayerTy::IOEngine) ==
                      OMPX_IO_LAYER_IO_ENGINE &&
                  unsigned(SettingLayerTy::Host) == OMPX_IO_LAYER_HOST &&
                  unsigned(SettingLayerTy::CUDA) == OMPX_IO_LAYER_CUDA &&
                  unsigned(SettingLayerTy::AMDGPU) == OMPX_IO_LAYER_AMDGPU,
              "setting layers");

// ompx_pinned_budget_t is filled field by field from PinnedBudgetStatsTy.
static_assert(std::is_same_v<decltype(PinnedBudgetStatsTy::Cap),
                             decltype(ompx_pinned_budget_t::cap)> &&
                  std::is_same_v<decltype(PinnedBudgetStatsTy::Used),
                                 decltype(ompx_pinned_budget_t::used)> &&
                  std::is_same_v<decltype(PinnedBudgetStatsTy::Peak),
                                 decltype(ompx_pinned_budget_t::peak)> &&
                  std::is_same_v<decltype(PinnedBudgetStatsTy::Refusals),
                                 decltype(ompx_pinned_budget_t::refusals)>,
              "pinned budget fields");

// The extension table (ExtensionABI.h): its header, then one pointer per
// call, packed, in the order of OFFLOADIO_EXTENSIONS. The entries each
// version has: appending a call without raising the version, or raising
// the version without recording its entries here, fails the build.
constexpr uint32_t EntriesOfVersion[] = {0, /*1:*/ 20, /*2:*/ 21, /*3:*/ 23};
constexpr uint32_t NumExtensions = 0
#define OFFLOADIO_EXTENSION_COUNT(Field, Symbol) +1
    OFFLOADIO_EXTENSIONS(OFFLOADIO_EXTENSION_COUNT);
#undef OFFLOADIO_EXTENSION_COUNT
static_assert(std::size(EntriesOfVersion) ==
                      OFFLOADIO_EXTENSION_TABLE_VERSION + 1 &&
                  EntriesOfVersion[OFFLOADIO_EXTENSION_TABLE_VERSION] ==
                      NumExtensions,
              "a call was appended to OFFLOADIO_EXTENSIONS: raise "
              "OFFLOADIO_EXTENSION_TABLE_VERSION and record its entries");
static_assert(offsetof(ExtensionTableTy, Size) == 0 &&
                  offsetof(ExtensionTableTy, Version) == 4 &&
                  offsetof(ExtensionTableTy, ResolveDevice) ==
                      ExtensionTableHeaderSize &&
                  sizeof(ExtensionTableTy) ==
                      ExtensionTableHeaderSize + NumExtensions * sizeof(void *),
              "the extension table is its header and one pointer per call");
static_assert(std::is_standard_layout_v<ExtensionTableTy>,
              "the extension table crosses libraries as plain bytes");

// SPDX-License-Identifier: Apache-2.0
//
// A device image loaded on one device, with the entry table returned to
// libomptarget. The table must outlive every use, so the image owns it.
#ifndef OFFLOADIO_DEVICEIMAGE_H
#define OFFLOADIO_DEVICEIMAGE_H

#include "offloadio/ABI.h"
#include "offloadio/Kernel.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace offloadio {

/// A kernel that runs an image's global constructors or destructors.
struct InitFiniCallTy {
  std::string Kernel; ///< Its name.
  /// Whether the plugin hands it the array of functions to call (NVPTX).
  bool BuildsArray = false;
  /// The image's globals holding those functions, by priority.
  std::vector<std::string> Functions;
};

/// One image loaded on one device. Backends derive to hold their handle
/// (dlopen handle, CUmodule, HSA executable).
class DeviceImageTy {
public:
  DeviceImageTy(int32_t ImageId, const __tgt_device_image &TgtImage)
      : ImageId(ImageId), TgtImage(&TgtImage) {}
  virtual ~DeviceImageTy();

  /// Index of the image on its device.
  int32_t getId() const { return ImageId; }
  /// The image loaded: as libomptarget registered it, or the image the JIT
  /// compiled from it (then with the registered image's entries).
  const __tgt_device_image &getTgtImage() const { return *TgtImage; }
  /// Keep \p Compiled, the image loaded in place of the bitcode image
  /// libomptarget registered (this image's getTgtImage()), alive with it.
  void keepCompiledImage(std::unique_ptr<__tgt_device_image> Compiled) {
    CompiledImage = std::move(Compiled);
  }
  /// Whether the image was compiled from bitcode at load.
  bool isCompiledFromBitcode() const { return CompiledImage != nullptr; }
  /// The image bytes.
  llvm::StringRef getBytes() const {
    return llvm::StringRef(static_cast<const char *>(TgtImage->ImageStart),
                           static_cast<const char *>(TgtImage->ImageEnd) -
                               static_cast<const char *>(TgtImage->ImageStart));
  }

  /// Keep \p Kernel alive for the image's lifetime and return it.
  GenericKernelTy &addKernel(std::unique_ptr<GenericKernelTy> Kernel) {
    Kernels.push_back(std::move(Kernel));
    return *Kernels.back();
  }

  /// The translated entry table (kernels: kernel objects; globals: device
  /// addresses).
  std::vector<__tgt_offload_entry> Entries;
  /// What load_binary returns under libomptarget 16 and 17; points into
  /// Entries.
  __tgt_target_table Table = {nullptr, nullptr};

  /// Points Table at Entries and indexes them by name; called once all
  /// entries are in.
  void sealEntries();
  /// The translated entry named \p Name, or null (libomptarget 18 asks for
  /// each kernel and global by name).
  const __tgt_offload_entry *findEntry(llvm::StringRef Name) const;
  /// The device memory of the image's device-side malloc, or null; the
  /// device frees it when it lets go of its images.
  void *DeviceMemoryPool = nullptr;
  /// The image's table of indirectly callable functions in device memory
  /// ({host address, device address} pairs sorted by host address), or
  /// null; the device frees it when it lets go of its images.
  void *IndirectCallTable = nullptr;
  /// Pairs in IndirectCallTable.
  uint64_t IndirectCallTableSize = 0;
  /// How to run the image's global destructors, noted when it was loaded
  /// (the image's bytes are the program's, which may unregister them before
  /// the device goes down); empty when it has none or they ran
  /// (GenericDeviceTy::runImageDestructors).
  std::optional<InitFiniCallTy> PendingDestructors;

private:
  int32_t ImageId;
  const __tgt_device_image *TgtImage;
  /// Owns what TgtImage points to when the JIT compiled the image.
  std::unique_ptr<__tgt_device_image> CompiledImage;
  std::vector<std::unique_ptr<GenericKernelTy>> Kernels;
  /// Entries' indices by name.
  llvm::StringMap<size_t> EntryIndex;
};

} // namespace offloadio

#endif // OFFLOADIO_DEVICEIMAGE_H

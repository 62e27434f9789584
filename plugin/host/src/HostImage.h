// SPDX-License-Identifier: Apache-2.0
//
// An x86_64 offload image (an ELF shared object) loaded from memory through
// a memfd, so no temporary file is ever written.
#ifndef OFFLOADIO_HOST_HOSTIMAGE_H
#define OFFLOADIO_HOST_HOSTIMAGE_H

#include "offloadio/DeviceImage.h"

namespace offloadio {
namespace host {

/// Whether \p Bytes is an x86_64 ELF shared object.
bool isHostImage(llvm::StringRef Bytes);

/// A loaded image: its dlopen handle is closed on destruction.
class HostImageTy final : public DeviceImageTy {
public:
  /// Load \p TgtImage for device \p DeviceId.
  static Expected<std::unique_ptr<HostImageTy>>
  load(const __tgt_device_image &TgtImage, int32_t ImageId, int32_t DeviceId);
  ~HostImageTy() override;

  /// The address of symbol \p Name in this image.
  Expected<void *> lookup(llvm::StringRef Name) const;

private:
  HostImageTy(int32_t ImageId, const __tgt_device_image &TgtImage,
              void *Handle, int Fd)
      : DeviceImageTy(ImageId, TgtImage), Handle(Handle), Fd(Fd) {}
  void *Handle;
  /// The memfd stays open while the image is loaded: the dynamic loader
  /// recognises objects by path, and a reused /proc/self/fd/N path would
  /// hand a second device the first device's copy of the image.
  int Fd;
};

} // namespace host
} // namespace offloadio

#endif // OFFLOADIO_HOST_HOSTIMAGE_H

// SPDX-License-Identifier: Apache-2.0
//
// A host "device": its memory is host memory it tracks itself, its streams
// are worker threads, its images are dlopened from memfds.
#ifndef OFFLOADIO_HOST_HOSTDEVICE_H
#define OFFLOADIO_HOST_HOSTDEVICE_H

#include "HostStream.h"

#include "offloadio/Device.h"


namespace offloadio {
namespace host {

/// One host device.
class HostDeviceTy final : public GenericDeviceTy {
public:
  HostDeviceTy(GenericPluginTy &Plugin, int32_t DeviceId)
      : GenericDeviceTy(Plugin, DeviceId) {}
  ~HostDeviceTy() override;


protected:
  /// A host "copy" of pageable memory is a memcpy: the stream runs a small
  /// one at once on an idle stream, or captures its source.
  size_t getPageableCaptureLimit() const override {
    return HostStreamTy::PageableCaptureLimit;
  }
  Error initImpl(DeviceLimitsTy &Limits) override;
  Error deinitImpl() override;
  Expected<std::unique_ptr<DeviceImageTy>>
  loadImageImpl(const __tgt_device_image &TgtImage, int32_t ImageId) override;
  Expected<std::unique_ptr<GenericKernelTy>>
  constructKernelImpl(DeviceImageTy &Image, llvm::StringRef Name) override;
  Expected<void *> getGlobalAddressImpl(DeviceImageTy &Image,
                                        llvm::StringRef Name,
                                        size_t Size) override;
  Expected<bool> writeImageGlobalImpl(DeviceImageTy &Image,
                                      llvm::StringRef Name, const void *Data,
                                      size_t Size) override;
  Expected<void *> allocateImpl(size_t Size, AllocKindTy Kind) override;
  Error freeImpl(void *Ptr, size_t Size, AllocKindTy Kind) override;
  Expected<std::unique_ptr<StreamTy>> createStreamImpl() override;
  Expected<std::unique_ptr<EventTy>> createEventImpl() override;
  Error initDeviceInfoImpl(__tgt_device_info &DeviceInfo) override;
  void printInfoImpl(llvm::raw_ostream &OS) override;

private:
};

} // namespace host
} // namespace offloadio

#endif // OFFLOADIO_HOST_HOSTDEVICE_H

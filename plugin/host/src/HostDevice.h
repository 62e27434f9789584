// SPDX-License-Identifier: Apache-2.0
//
// A host "device": its memory is host memory it tracks itself, its streams
// are worker threads, its images are dlopened from memfds.
#ifndef OFFLOADIO_HOST_HOSTDEVICE_H
#define OFFLOADIO_HOST_HOSTDEVICE_H

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
  /// A host "copy" of pageable memory is a memcpy: the data is captured
  /// when it runs, and a small one on an idle stream runs at once.
  bool driverStagesPageableCopies() const override { return true; }
  Error initImpl(DeviceLimitsTy &Limits) override;
  Error deinitImpl() override;
  Expected<std::unique_ptr<DeviceImageTy>>
  loadImageImpl(const __tgt_device_image &TgtImage, int32_t ImageId) override;
  Expected<std::unique_ptr<GenericKernelTy>>
  constructKernelImpl(DeviceImageTy &Image, llvm::StringRef Name) override;
  Expected<void *> getGlobalAddressImpl(DeviceImageTy &Image,
                                        llvm::StringRef Name,
                                        size_t Size) override;
  Expected<void *> allocateImpl(size_t Size, AllocKindTy Kind) override;
  Error freeImpl(void *Ptr, AllocKindTy Kind) override;
  Expected<std::unique_ptr<StreamTy>> createStreamImpl() override;
  Expected<std::unique_ptr<EventTy>> createEventImpl() override;
  Error initDeviceInfoImpl(__tgt_device_info &DeviceInfo) override;
  void printInfoImpl(llvm::raw_ostream &OS) override;

private:
};

} // namespace host
} // namespace offloadio

#endif // OFFLOADIO_HOST_HOSTDEVICE_H

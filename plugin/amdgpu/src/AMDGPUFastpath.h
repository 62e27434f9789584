// SPDX-License-Identifier: Apache-2.0
//
// The file engine's fastpath on AMD GPUs: AMD Infinity Storage (AIS), which
// moves data between a file and VRAM by PCIe peer-to-peer DMA through
// hsa_amd_ais_file_read/write (HSA_AMD interface 1.14, ROCm 7, marked
// experimental; absent from the ROCm 5.2 headers we build against, so
// dynamic_hsa resolves the calls at run time and they may be null).
//
// The calls, as the shim declares them (dynamic_hsa/HSAApi.h):
//
//   hsa_status_t (hsa_amd_ais_file_handle_t Handle, void *DevicePtr,
//                 uint64_t Size, int64_t FileOffset, uint64_t *SizeCopied,
//                 int32_t *Status);
//
// Assumptions about the real API (from ROCr's header, hipFile's fastpath and
// its notes on the call chain hipAmdFileRead -> hsa_amd_ais_file_read ->
// libhsakmt hsaKmtAisReadWriteFile -> KFD kfd_ais_rw_file, none of which
// this repository holds). None is verified on hardware:
//   * There is no agent argument. The GPU is the one owning DevicePtr's
//     buffer object, so the plugin passes only memory it allocated from
//     this GPU's device pool; Handle.fd is the file descriptor (the union's
//     other bytes zeroed).
//   * KFD needs a VRAM buffer and file offset and size that are multiples
//     of 4 KiB; we also require a 4 KiB-aligned device address (hipFile
//     does) and the descriptor's O_DIRECT alignment (statx) if larger.
//   * Failure: a status other than HSA_STATUS_SUCCESS; *Status then holds
//     KFD's errno, negative as the kernel returns it (hipFile takes abs()),
//     and errno is the ioctl's. A driver without the AIS ioctl fails it with
//     ENOTTY and leaves *Status alone (hipFile's throwOnAisIoError).
//   * ENODEV (AIS not initialised, storage device not found, no P2P DMA
//     path) and EREMOTEIO (the block layer refuses P2P pages) are properties
//     of the (storage device, GPU) pair: the engine retries on the staged
//     path, and this object refuses later requests for that storage device.
//   * KFD fails a read that meets end of file with EIO, so only whole pages
//     before end of file go through AIS; the last partial page is read into
//     a bounce page and copied.
//   * At most MAX_RW_COUNT (0x7ffff000) bytes per call; we send
//     MaxIOPerCall (offloadio/io/IOCallLimit.h).
//   * Files: hipFile's acceptance rule (regular files on ext4 with
//     data=ordered or on xfs, or block devices);
//     LIBOMPTARGET_AMDGPU_AIS_ANY_FILESYSTEM=1 lifts the filesystem part.
#ifndef OFFLOADIO_AMDGPU_AMDGPUFASTPATH_H
#define OFFLOADIO_AMDGPU_AMDGPUFASTPATH_H

#include "AMDGPUSettings.h"
#include "HSAApi.h"

#include "offloadio/io/IOFastpath.h"
#include "offloadio/io/IOFastpathRules.h"
#include "offloadio/io/Sys.h"

#include <atomic>
#include <mutex>
#include <string>
#include <sys/stat.h>
#include <sys/types.h>

namespace offloadio {
namespace amdgpu {

class AMDGPUDeviceTy;

/// AIS storage <-> VRAM DMA for one GPU.
class AMDGPUFastpathTy final : public IOFastpathTy {
public:
  /// Alignment KFD requires of the file offset and size.
  static constexpr size_t PageAlignment = 4096;
  /// Whether \p Api has both AIS calls; if not, \p Why says what is missing.
  static bool isAvailable(const HSAApiTy &Api, std::string &Why);

  /// \p Api must have the AIS calls (isAvailable).
  AMDGPUFastpathTy(AMDGPUDeviceTy &Device, const HSAApiTy &Api, SysTy &Sys,
                   const AMDGPUFastpathSettingsTy &Settings);

  const char *name() const override { return "AIS"; }
  bool accepts(int Fd, const void *DevPtr, size_t Count, off_t Offset,
               std::string &Why, const IOLogTy &Log) override;
  Expected<size_t> read(int Fd, void *DevPtr, size_t Count, off_t Offset,
                        const IOLogTy &Log) override;
  Error write(int Fd, const void *DevPtr, size_t Count, off_t Offset,
              const IOLogTy &Log) override;

  /// One line for print_device_info.
  std::string describe();

private:
  enum class OpTy { Read, Write };

  /// Checks of one engine chunk before calling AIS; ENOTSUP errors (the
  /// engine falls back) for what accepts() would have refused.
  Error prepare(OpTy Op, int Fd, const void *DevPtr, size_t Count, off_t Offset,
                IOFastpathChunkTy &Chunk);
  /// Call AIS for [Offset, Offset + Count) in pieces; the bytes moved
  /// (short only if a read stopped early).
  Expected<size_t> transfer(OpTy Op, int Fd, char *DevPtr, size_t Count,
                            off_t Offset, dev_t Storage, size_t Align);
  /// The error of a failed AIS call; remembers what the failure says about
  /// the storage device or the driver.
  Error failure(OpTy Op, int Fd, size_t Size, off_t Offset, hsa_status_t Status,
                int Errno, dev_t Storage);

  AMDGPUDeviceTy &Device;
  const HSAApiTy &Api;
  SysTy &Sys;
  /// The checks every fastpath makes, with AIS's rules; they keep the
  /// verdict per storage device.
  IOFastpathChecksTy Checks;
  /// Set when the driver turned out to have no AIS at all.
  std::atomic<bool> Disabled{false};
  std::mutex Lock;
  /// Why Disabled is set, under Lock.
  std::string DisabledWhy;
};

} // namespace amdgpu
} // namespace offloadio

#endif // OFFLOADIO_AMDGPU_AMDGPUFASTPATH_H

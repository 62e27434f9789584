// SPDX-License-Identifier: Apache-2.0
//
// hsa-emu: AMD Infinity Storage (AIS), the file <-> device memory calls of
// HSA_AMD interface 1.14 (ROCm 7, experimental):
//
//   hsa_status_t hsa_amd_ais_file_read (hsa_amd_ais_file_handle_t handle,
//                                       void *devicePtr, uint64_t size,
//                                       int64_t file_offset,
//                                       uint64_t *size_copied,
//                                       int32_t *status);
//   hsa_status_t hsa_amd_ais_file_write(...same...);
//
// ROCr passes the request through libhsakmt to a KFD ioctl, and the kernel
// moves the data between the storage device and VRAM by PCIe peer-to-peer
// DMA. The emulation follows that chain's checks, in its order, and moves
// the data with pread/pwrite on the caller's descriptor into the
// allocation's host pages (an O_DIRECT descriptor really does direct IO):
//
//   ROCr      NOT_INITIALIZED; INVALID_ARGUMENT for size 0 or a null
//             pointer (also, here, for null out-parameters, which ROCr
//             would dereference).
//   libhsakmt INVALID_ALLOCATION unless [devicePtr, devicePtr + size) lies
//             inside one allocation (or locked range) the runtime knows.
//   ioctl     HSA_EMU_AIS=enotty: a kernel driver without the AIS ioctl;
//             HSA_STATUS_ERROR, errno ENOTTY, out-parameters untouched.
//   KFD       HSA_STATUS_ERROR with *status = -errno, errno = errno and
//             *size_copied = bytes moved:
//               EINVAL  fd < 0
//               ENODEV  AIS not initialised (HSA_EMU_AIS=enodev: always)
//               EREMOTEIO  the block layer refuses P2P pages
//                       (HSA_EMU_AIS=eremoteio: always)
//               EINVAL  the buffer is not VRAM (host pool or locked memory)
//               ESPIPE  size above MAX_RW_COUNT (0x7ffff000)
//               EINVAL  file offset, size or device address not 4 KiB
//                       aligned (the address rule is an assumption: KFD
//                       documents offset and size only)
//               EBADF   the descriptor is not open
//               errno   of a failing pread/pwrite (ENOSPC, EBADF, ...)
//               EIO     a short read (end of file), as KFD does
//
// Whether the calls exist at all is decided when they are looked up: they
// are GNU indirect functions whose resolver returns null under
// HSA_EMU_AIS=off (the default), so dlsym() finds nothing, exactly as with
// a ROCm 5.2 runtime. The resolver reads the environment itself because the
// plugin resolves the calls before hsa_init.
#include "Emu.h"

#include <cerrno>
#include <cinttypes>
#include <cstdlib>
#include <cstring>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace hsaemu;

#if HSA_AMD_INTERFACE_VERSION_MAJOR == 1 && HSA_AMD_INTERFACE_VERSION_MINOR < 14
extern "C" {
/// File handle of the AIS calls (hsa_ext_amd.h of interface 1.14).
typedef union hsa_amd_ais_file_handle_s {
  void *handle;
  int fd;
  uint8_t pad[8];
} hsa_amd_ais_file_handle_t;
}
#endif

AisModeTy hsaemu::aisModeFromEnv(bool Warn) {
  const char *V = std::getenv("HSA_EMU_AIS");
  if (!V || !*V || !strcasecmp(V, "off") || !std::strcmp(V, "0") ||
      !strcasecmp(V, "no") || !strcasecmp(V, "false"))
    return AisModeTy::Off;
  if (!strcasecmp(V, "on") || !std::strcmp(V, "1") || !strcasecmp(V, "yes") ||
      !strcasecmp(V, "true"))
    return AisModeTy::On;
  if (!strcasecmp(V, "enodev"))
    return AisModeTy::Enodev;
  if (!strcasecmp(V, "eremoteio"))
    return AisModeTy::Eremoteio;
  if (!strcasecmp(V, "enotty"))
    return AisModeTy::Enotty;
  if (Warn)
    warn("ignoring HSA_EMU_AIS='%s': expected off, on, enodev, eremoteio or "
         "enotty",
         V);
  return AisModeTy::Off;
}

namespace {

constexpr uint64_t AisAlignment = 4096;
/// The kernel's MAX_RW_COUNT (INT_MAX & PAGE_MASK).
constexpr uint64_t MaxRwCount = 0x7ffff000;

enum class DirectionTy { Read, Write };

/// A KFD failure: what the ioctl reports to libhsakmt and ROCr.
hsa_status_t kfdFailure(int Errno, uint64_t Moved, uint64_t *SizeCopied,
                        int32_t *Status) {
  *SizeCopied = Moved;
  *Status = -Errno;
  errno = Errno;
  return HSA_STATUS_ERROR;
}

hsa_status_t aisTransfer(DirectionTy Dir, hsa_amd_ais_file_handle_t Handle,
                         void *DevicePtr, uint64_t Size, int64_t FileOffset,
                         uint64_t *SizeCopied, int32_t *Status) {
  if (!isInitialized())
    return HSA_STATUS_ERROR_NOT_INITIALIZED;
  const char *Name = Dir == DirectionTy::Read ? "hsa_amd_ais_file_read"
                                              : "hsa_amd_ais_file_write";
  // ROCr.
  if (!Size || !DevicePtr || !SizeCopied || !Status)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  // libhsakmt: the pointer and size must name (part of) one buffer object.
  ResolvedRangeTy R = resolveRange(DevicePtr, Size, nullptr);
  if (!R.Known || !R.Usable) {
    if (config().Trace)
      warn("%s(fd %d, %p, %" PRIu64 " bytes): %s", Name, Handle.fd, DevicePtr,
           Size, R.Why.c_str());
    return HSA_STATUS_ERROR_INVALID_ALLOCATION;
  }
  // A kernel driver without the AIS ioctl rejects it before looking at the
  // arguments, and never writes the out-parameters.
  if (config().Ais == AisModeTy::Enotty) {
    errno = ENOTTY;
    return HSA_STATUS_ERROR;
  }
  // KFD.
  int Fd = Handle.fd;
  auto P = reinterpret_cast<uintptr_t>(DevicePtr);
  int Errno = 0;
  if (Fd < 0)
    Errno = EINVAL;
  else if (config().Ais == AisModeTy::Enodev)
    Errno = ENODEV;
  else if (config().Ais == AisModeTy::Eremoteio)
    Errno = EREMOTEIO;
  else if (!R.Pool || !R.Pool->Owner->isGpu() ||
           R.Pool->Segment != HSA_AMD_SEGMENT_GLOBAL)
    Errno = EINVAL;
  else if (Size > MaxRwCount)
    Errno = ESPIPE;
  else if (FileOffset < 0 || FileOffset % AisAlignment || Size % AisAlignment ||
           P % AisAlignment)
    Errno = EINVAL;
  struct stat St;
  if (!Errno && fstat(Fd, &St) != 0)
    Errno = EBADF;

  uint64_t Done = 0;
  while (!Errno && Done < Size) {
    ssize_t N =
        Dir == DirectionTy::Read
            ? pread(Fd, R.HostPtr + Done, Size - Done, off_t(FileOffset + Done))
            : pwrite(Fd, R.HostPtr + Done, Size - Done,
                     off_t(FileOffset + Done));
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0)
      Errno = errno;
    else if (N == 0)
      Errno = EIO; // KFD fails short reads (and writes that make no progress).
    else
      Done += uint64_t(N);
    // A read that stops inside a page met the end of the file; O_DIRECT
    // could not go on from an unaligned offset anyway.
    if (!Errno && Dir == DirectionTy::Read && Done < Size &&
        Done % AisAlignment)
      Errno = EIO;
  }
  if (config().Trace)
    warn("%s(fd %d, %p, %" PRIu64 " bytes, offset %" PRId64 "): %s, %" PRIu64
         " bytes",
         Name, Fd, DevicePtr, Size, FileOffset,
         Errno ? std::strerror(Errno) : "done", Done);
  if (Errno)
    return kfdFailure(Errno, Done, SizeCopied, Status);
  *SizeCopied = Done;
  *Status = 0;
  return HSA_STATUS_SUCCESS;
}

hsa_status_t aisRead(hsa_amd_ais_file_handle_t Handle, void *DevicePtr,
                     uint64_t Size, int64_t FileOffset, uint64_t *SizeCopied,
                     int32_t *Status) {
  return aisTransfer(DirectionTy::Read, Handle, DevicePtr, Size, FileOffset,
                     SizeCopied, Status);
}

hsa_status_t aisWrite(hsa_amd_ais_file_handle_t Handle, void *DevicePtr,
                      uint64_t Size, int64_t FileOffset, uint64_t *SizeCopied,
                      int32_t *Status) {
  return aisTransfer(DirectionTy::Write, Handle, DevicePtr, Size, FileOffset,
                     SizeCopied, Status);
}

} // namespace

extern "C" {

// Indirect-function resolvers: run by the dynamic linker when the symbols
// are looked up. Hidden, so only the hsa_* names are exported.
__attribute__((visibility("hidden"))) void *hsaemu_resolve_ais_file_read() {
  return aisModeFromEnv(false) == AisModeTy::Off
             ? nullptr
             : reinterpret_cast<void *>(&aisRead);
}

__attribute__((visibility("hidden"))) void *hsaemu_resolve_ais_file_write() {
  return aisModeFromEnv(false) == AisModeTy::Off
             ? nullptr
             : reinterpret_cast<void *>(&aisWrite);
}

HSA_API hsa_status_t hsa_amd_ais_file_read(hsa_amd_ais_file_handle_t Handle,
                                           void *DevicePtr, uint64_t Size,
                                           int64_t FileOffset,
                                           uint64_t *SizeCopied,
                                           int32_t *Status)
    __attribute__((ifunc("hsaemu_resolve_ais_file_read")));

HSA_API hsa_status_t hsa_amd_ais_file_write(hsa_amd_ais_file_handle_t Handle,
                                            void *DevicePtr, uint64_t Size,
                                            int64_t FileOffset,
                                            uint64_t *SizeCopied,
                                            int32_t *Status)
    __attribute__((ifunc("hsaemu_resolve_ais_file_write")));

} // extern "C"

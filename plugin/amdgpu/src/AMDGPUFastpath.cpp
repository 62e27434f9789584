// SPDX-License-Identifier: Apache-2.0
#include "AMDGPUFastpath.h"
#include "AMDGPUDevice.h"

#include "offloadio/io/IOCallLimit.h"

#include "llvm/ADT/ScopeExit.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <linux/fs.h>
#include <optional>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>

using namespace offloadio;
using namespace offloadio::amdgpu;

namespace {

const char *errnoName(int Errno) {
  switch (Errno) {
  case ENODEV:
    return "ENODEV";
  case EREMOTEIO:
    return "EREMOTEIO";
  case ENOTSUP:
    return "ENOTSUP";
  case ENOTTY:
    return "ENOTTY";
  case EINVAL:
    return "EINVAL";
  case EIO:
    return "EIO";
  case EBADF:
    return "EBADF";
  case ESPIPE:
    return "ESPIPE";
  case ENOMEM:
    return "ENOMEM";
  case ESRCH:
    return "ESRCH";
  default:
    return "errno";
  }
}

/// "254:0".
std::string deviceName(dev_t Dev) {
  return std::to_string(major(Dev)) + ":" + std::to_string(minor(Dev));
}

/// What AIS takes: hipFile's rules.
IOFastpathRulesTy aisRules(bool AnyFilesystem) {
  IOFastpathRulesTy Rules;
  Rules.Vendor = "AIS";
  Rules.Alignment = AMDGPUFastpathTy::PageAlignment;
  Rules.BlockDevices = true;
  Rules.FilesystemRule = !AnyFilesystem;
  Rules.FilesystemRuleText =
      ", and AIS serves only ext4 (data=ordered), xfs and block devices "
      "(LIBOMPTARGET_AMDGPU_AIS_ANY_FILESYSTEM=1 lifts this)";
  return Rules;
}

/// The size of the file or block device behind \p Fd.
std::optional<uint64_t> fileSize(int Fd, const struct stat &St) {
  if (!S_ISBLK(St.st_mode))
    return uint64_t(St.st_size);
  uint64_t Bytes = 0;
  if (::ioctl(Fd, BLKGETSIZE64, &Bytes) != 0)
    return std::nullopt;
  return Bytes;
}

} // namespace

bool AMDGPUFastpathTy::isAvailable(const HSAApiTy &Api, std::string &Why) {
  if (!Api.hsa_amd_ais_file_read || !Api.hsa_amd_ais_file_write) {
    Why = std::string(!Api.hsa_amd_ais_file_read ? "hsa_amd_ais_file_read"
                                                 : "hsa_amd_ais_file_write") +
          " is not in this HSA runtime (" + Api.LibraryPath +
          "; ROCm >= 7 needed)";
    return false;
  }
  return true;
}

AMDGPUFastpathTy::AMDGPUFastpathTy(AMDGPUDeviceTy &Device, const HSAApiTy &Api,
                                   SysTy &Sys,
                                   const AMDGPUFastpathSettingsTy &Settings)
    : Device(Device), Api(Api), Sys(Sys),
      Checks(Sys, aisRules(Settings.AnyFilesystem)) {}

std::string AMDGPUFastpathTy::describe() {
  if (Disabled.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> Guard(Lock);
    return "disabled: " + DisabledWhy;
  }
  std::string Line = "hsa_amd_ais_file_read/write (O_DIRECT files, 4 KiB "
                     "aligned, device memory)";
  unsigned Refused = Checks.refusedStorage();
  if (Refused)
    Line += "; " + std::to_string(Refused) + " storage device(s) refused";
  return Line;
}

bool AMDGPUFastpathTy::accepts(int Fd, const void *DevPtr, size_t Count,
                               off_t Offset, std::string &Why,
                               const IOLogTy &) {
  if (Disabled.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> Guard(Lock);
    Why = DisabledWhy;
    return false;
  }
  return Checks.accepts(Fd, DevPtr, Count, Offset,
                        Device.findAllocation(DevPtr), Device.getDeviceId(),
                        Why);
}

Error AMDGPUFastpathTy::prepare(OpTy Op, int Fd, const void *DevPtr,
                                size_t Count, off_t Offset,
                                IOFastpathChunkTy &Chunk) {
  const char *OpName = Op == OpTy::Read ? "read" : "write";
  if (Disabled.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> Guard(Lock);
    return makeErrnoError(ENOTSUP, "AIS {0} on device {1}: {2}", OpName,
                          Device.getDeviceId(), DisabledWhy);
  }
  return Checks.checkChunk(OpName, Device.getDeviceId(), Fd, DevPtr, Count,
                           Offset, Chunk);
}

Expected<size_t> AMDGPUFastpathTy::read(int Fd, void *DevPtr, size_t Count,
                                        off_t Offset, const IOLogTy &) {
  IOFastpathChunkTy Chunk;
  if (auto Err = prepare(OpTy::Read, Fd, DevPtr, Count, Offset, Chunk))
    return std::move(Err);
  size_t Align = Chunk.Alignment;
  // KFD fails a read that meets end of file with EIO: AIS reads the whole
  // pages before it, a bounce page the partial one.
  std::optional<uint64_t> Size = fileSize(Fd, Chunk.St);
  if (!Size)
    return makeErrnoError(errno,
                          "AIS read on device {0}: size of block "
                          "device fd {1}",
                          Device.getDeviceId(), Fd);
  if (uint64_t(Offset) >= *Size)
    return 0;
  size_t Avail = size_t(std::min<uint64_t>(Count, *Size - uint64_t(Offset)));
  size_t Whole = Avail - Avail % Align;
  char *Dev = static_cast<char *>(DevPtr);
  size_t Done = 0;
  if (Whole) {
    auto N = transfer(OpTy::Read, Fd, Dev, Whole, Offset, Chunk.Storage, Align);
    if (!N)
      return N.takeError();
    Done = *N;
    if (Done < Whole)
      return Done;
  }
  if (Avail == Whole)
    return Done;

  // The partial last page: O_DIRECT reads the whole page, which comes back
  // short at end of file.
  void *Page = std::aligned_alloc(Align, Align);
  if (!Page)
    return makeErrnoError(ENOMEM,
                          "AIS read on device {0}: {1}-byte bounce "
                          "page",
                          Device.getDeviceId(), Align);
  auto FreePage = llvm::make_scope_exit([&] { std::free(Page); });
  off_t TailOffset = Offset + off_t(Whole);
  ssize_t N;
  do
    N = Sys.pread(Fd, Page, Align, TailOffset);
  while (N < 0 && errno == EINTR);
  if (N < 0)
    return makeErrnoError(errno,
                          "pread(fd {0}, {1} bytes, offset {2}) of the "
                          "last partial page",
                          Fd, Align, int64_t(TailOffset));
  size_t Got = std::min(size_t(N), Count - Whole);
  if (Got)
    if (auto Err = Device.dataSubmit(Dev + Whole, Page, int64_t(Got), nullptr))
      return std::move(Err);
  return Done + Got;
}

Error AMDGPUFastpathTy::write(int Fd, const void *DevPtr, size_t Count,
                              off_t Offset, const IOLogTy &) {
  IOFastpathChunkTy Chunk;
  if (auto Err = prepare(OpTy::Write, Fd, DevPtr, Count, Offset, Chunk))
    return Err;
  // The device memory is only read; the call takes a non-const pointer.
  auto N =
      transfer(OpTy::Write, Fd, static_cast<char *>(const_cast<void *>(DevPtr)),
               Count, Offset, Chunk.Storage, Chunk.Alignment);
  if (!N)
    return N.takeError();
  return Error::success();
}

Expected<size_t> AMDGPUFastpathTy::transfer(OpTy Op, int Fd, char *DevPtr,
                                            size_t Count, off_t Offset,
                                            dev_t Storage, size_t Align) {
  HSAAisFileIOFnTy Call =
      Op == OpTy::Read ? Api.hsa_amd_ais_file_read : Api.hsa_amd_ais_file_write;
  size_t MaxPiece = MaxIOPerCall - MaxIOPerCall % Align;
  size_t Done = 0;
  while (Done < Count) {
    uint64_t Piece = std::min(Count - Done, MaxPiece);
    hsa_amd_ais_file_handle_t Handle;
    std::memset(&Handle, 0, sizeof(Handle));
    Handle.fd = Fd;
    uint64_t Copied = 0;
    int32_t Status = 0;
    errno = 0;
    hsa_status_t Result =
        Call(Handle, DevPtr + Done, Piece, int64_t(Offset) + int64_t(Done),
             &Copied, &Status);
    int CallErrno = errno;
    if (Result == HSA_STATUS_SUCCESS && Status == 0) {
      if (Copied > Piece)
        return makeErrnoError(
            EIO,
            "{0}(fd {1}, {2} bytes, offset {3}) on device {4} reported "
            "{5} bytes",
            Op == OpTy::Read ? "hsa_amd_ais_file_read"
                             : "hsa_amd_ais_file_write",
            Fd, Piece, int64_t(Offset) + int64_t(Done), Device.getDeviceId(),
            Copied);
      Done += size_t(Copied);
      if (Copied == Piece)
        continue;
      // Short: a read may go on from a page boundary; anything else ends
      // here (a read at end of file, a write that cannot progress).
      if (Copied && Copied % Align == 0)
        continue;
      if (Op == OpTy::Read)
        return Done;
      return makeErrnoError(EIO,
                            "hsa_amd_ais_file_write(fd {0}, {1} bytes, "
                            "offset {2}) on device {3} wrote {4} bytes",
                            Fd, Piece, int64_t(Offset) + int64_t(Done - Copied),
                            Device.getDeviceId(), Copied);
    }
    // KFD's errno is in Status (negative, as the kernel returns it); a
    // driver without the ioctl leaves Status alone and errno says ENOTTY.
    int Errno = Status ? std::abs(Status) : 0;
    if (!Errno && Result == HSA_STATUS_ERROR &&
        (CallErrno == ENOTTY || CallErrno == ENODEV || CallErrno == EREMOTEIO))
      Errno = CallErrno;
    if (Errno == EINTR)
      continue;
    return failure(Op, Fd, Piece, Offset + off_t(Done), Result, Errno, Storage);
  }
  return Done;
}

Error AMDGPUFastpathTy::failure(OpTy Op, int Fd, size_t Size, off_t Offset,
                                hsa_status_t Status, int Errno, dev_t Storage) {
  std::string Where =
      llvm::formatv("{0}(fd {1}, {2} bytes, offset {3}) on device {4}",
                    Op == OpTy::Read ? "hsa_amd_ais_file_read"
                                     : "hsa_amd_ais_file_write",
                    Fd, Size, int64_t(Offset), Device.getDeviceId())
          .str();
  switch (Errno) {
  case ENOTTY: {
    // The kernel driver has no AIS ioctl: nothing will ever go this way.
    std::lock_guard<std::mutex> Guard(Lock);
    DisabledWhy = "the amdgpu kernel driver has no AIS ioctl (ENOTTY; hipFile "
                  "asks for amdgpu-dkms 30.20.1 or later)";
    Disabled.store(true, std::memory_order_release);
    return makeErrnoError(ENOTSUP, "{0}: ENOTTY", Where);
  }
  case ENODEV:
  case EREMOTEIO: {
    // No P2P DMA between this storage device and the GPU (or AIS is not
    // initialised on it): true for every later request too.
    Checks.refuseStorage(Storage,
                         llvm::formatv("AIS failed with {0} for storage "
                                       "device {1} before",
                                       errnoName(Errno), deviceName(Storage))
                             .str());
    return makeErrnoError(Errno, "{0}", Where);
  }
  case ENOTSUP:
    return makeErrnoError(ENOTSUP, "{0}", Where);
  case EIO:
    // KFD's answer to a read that meets end of file: if the file shrank
    // since read() looked, the staged path reads what is left.
    if (Op == OpTy::Read) {
      struct stat St;
      std::optional<uint64_t> Now;
      if (Sys.fstat(Fd, &St) == 0)
        Now = fileSize(Fd, St);
      if (Now && *Now < uint64_t(Offset) + Size)
        return makeErrnoError(ENOTSUP, "{0}: EIO, the file now ends at {1}",
                              Where, *Now);
    }
    return makeErrnoError(EIO, "{0}", Where);
  case 0:
    // The runtime refused the call itself (no KFD errno).
    return makeErrnoError(EIO, "{0}: {1}", Where, Api.describe(Status));
  case ENOSPC:
  case EDQUOT:
  case EFBIG:
  case EROFS:
    // Errors of the file itself, as pread/pwrite would report them.
    return makeErrnoError(Errno, "{0}", Where);
  default:
    return makeErrnoError(EIO, "{0}: the driver failed it with {1} ({2})",
                          Where, errnoName(Errno), std::strerror(Errno));
  }
}

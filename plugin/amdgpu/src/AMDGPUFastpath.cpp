// SPDX-License-Identifier: Apache-2.0
#include "AMDGPUFastpath.h"
#include "AMDGPUDevice.h"

#include "offloadio/io/IOCallLimit.h"
#include "offloadio/io/IORefusedFileSystems.h"

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

/// A pointer as printf's %p writes it (as the engine's info lines do).
std::string ptrText(const void *Ptr) {
  char Buffer[32];
  std::snprintf(Buffer, sizeof(Buffer), "%p", Ptr);
  return Buffer;
}

/// "254:0".
std::string deviceName(dev_t Dev) {
  return std::to_string(major(Dev)) + ":" + std::to_string(minor(Dev));
}

/// How AIS's file-system rule ends its refusals.
constexpr const char *FilesystemRule =
    ", and AIS serves only ext4 (data=ordered), xfs and block devices "
    "(LIBOMPTARGET_AMDGPU_AIS_ANY_FILESYSTEM=1 lifts this)";

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
      AnyFilesystem(Settings.AnyFilesystem) {}

std::string AMDGPUFastpathTy::describe() {
  if (Disabled.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> Guard(Lock);
    return "disabled: " + DisabledWhy;
  }
  std::string Line = "hsa_amd_ais_file_read/write (O_DIRECT files, 4 KiB "
                     "aligned, device memory)";
  unsigned Refused = Verdicts.refused();
  if (Refused)
    Line += "; " + std::to_string(Refused) + " storage device(s) refused";
  return Line;
}

std::string AMDGPUFastpathTy::storageRefusal(int Fd, const struct stat &St) {
  dev_t Dev = IORefusedFileSystemsTy::keyOf(St);
  if (std::optional<std::string> Known = Verdicts.find(Dev))
    return *Known;
  // Block devices have no filesystem rule; regular files follow hipFile's.
  std::string Why;
  if (S_ISREG(St.st_mode) && !AnyFilesystem)
    Why = directDMAFilesystemRefusal(Fd, Dev, FilesystemRule);
  // A failure recorded meanwhile wins over the filesystem verdict.
  return Verdicts.decide(Dev, std::move(Why));
}

bool AMDGPUFastpathTy::accepts(int Fd, const void *DevPtr, size_t Count,
                               off_t Offset, std::string &Why,
                               const IOLogTy &) {
  if (Disabled.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> Guard(Lock);
    Why = DisabledWhy;
    return false;
  }
  int Flags = Sys.getFlags(Fd);
  if (Flags < 0 || !(Flags & O_DIRECT)) {
    Why = llvm::formatv("fd {0} is not open with O_DIRECT", Fd).str();
    return false;
  }
  auto Alloc = Device.findAllocation(DevPtr);
  if (!Alloc) {
    Why = llvm::formatv("buffer {0} is not memory of device {1}",
                        ptrText(DevPtr), Device.getDeviceId())
              .str();
    return false;
  }
  if (Alloc->Kind != AllocKindTy::Device && Alloc->Kind != AllocKindTy::Default) {
    Why = llvm::formatv("buffer {0} is {1} memory, AIS needs device memory",
                        ptrText(DevPtr), allocKindName(Alloc->Kind))
              .str();
    return false;
  }
  size_t Into = reinterpret_cast<uintptr_t>(DevPtr) - reinterpret_cast<uintptr_t>(Alloc->Ptr);
  if (Count > Alloc->Size - Into) {
    Why = llvm::formatv("{0} bytes at {1} run past the end of its {2}-byte "
                        "allocation",
                        Count, ptrText(DevPtr), Alloc->Size)
              .str();
    return false;
  }
  struct stat St;
  if (Sys.fstat(Fd, &St) != 0) {
    Why = llvm::formatv("fstat of fd {0} failed: {1}", Fd, std::strerror(errno))
              .str();
    return false;
  }
  if (!S_ISREG(St.st_mode) && !S_ISBLK(St.st_mode)) {
    Why =
        llvm::formatv("fd {0} is neither a regular file nor a block device", Fd)
            .str();
    return false;
  }
  size_t Align = alignmentFor(Fd);
  IOMisalignmentTy Misaligned =
      IOMisalignmentTy::of(Align, Offset, Count, DevPtr);
  if (Misaligned.any()) {
    Why = "AIS needs " + std::to_string(Align) +
          "-byte alignment; not aligned: " +
          Misaligned.describe("file offset", "buffer " + ptrText(DevPtr));
    return false;
  }
  Why = storageRefusal(Fd, St);
  return Why.empty();
}

Error AMDGPUFastpathTy::prepare(OpTy Op, int Fd, const void *DevPtr,
                                size_t Count, off_t Offset, struct stat &St,
                                size_t &Align) {
  const char *OpName = Op == OpTy::Read ? "read" : "write";
  if (Disabled.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> Guard(Lock);
    return makeErrnoError(ENOTSUP, "AIS {0} on device {1}: {2}", OpName,
                          Device.getDeviceId(), DisabledWhy);
  }
  if (Sys.fstat(Fd, &St) != 0)
    return makeErrnoError(errno, "AIS {0} on device {1}: fstat of fd {2}",
                          OpName, Device.getDeviceId(), Fd);
  // The engine splits a request into chunks; each must keep the alignment
  // the whole request had (OMPX_IO_CHUNK_SIZE may not be a multiple).
  Align = alignmentFor(Fd);
  if (IOMisalignmentTy::of(Align, Offset, Count, DevPtr).any())
    return makeErrnoError(ENOTSUP,
                          "AIS {0} on device {1}: the chunk of {2} bytes at "
                          "file offset {3} into {4} is not {5}-byte aligned",
                          OpName, Device.getDeviceId(), Count, int64_t(Offset),
                          ptrText(DevPtr), Align);
  std::string Why =
      Verdicts.find(IORefusedFileSystemsTy::keyOf(St)).value_or("");
  if (!Why.empty())
    return makeErrnoError(ENOTSUP, "AIS {0} on device {1}: {2}", OpName,
                          Device.getDeviceId(), Why);
  return Error::success();
}

Expected<size_t> AMDGPUFastpathTy::read(int Fd, void *DevPtr, size_t Count,
                                        off_t Offset, const IOLogTy &) {
  struct stat St;
  size_t Align = PageAlignment;
  if (auto Err = prepare(OpTy::Read, Fd, DevPtr, Count, Offset, St, Align))
    return std::move(Err);
  // KFD fails a read that meets end of file with EIO: AIS reads the whole
  // pages before it, a bounce page the partial one.
  std::optional<uint64_t> Size = fileSize(Fd, St);
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
    auto N = transfer(OpTy::Read, Fd, Dev, Whole, Offset,
                      IORefusedFileSystemsTy::keyOf(St), Align);
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
  struct stat St;
  size_t Align = PageAlignment;
  if (auto Err = prepare(OpTy::Write, Fd, DevPtr, Count, Offset, St, Align))
    return Err;
  // The device memory is only read; the call takes a non-const pointer.
  auto N =
      transfer(OpTy::Write, Fd, static_cast<char *>(const_cast<void *>(DevPtr)),
               Count, Offset, IORefusedFileSystemsTy::keyOf(St), Align);
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
    Verdicts.refuse(Storage,
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

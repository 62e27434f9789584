// SPDX-License-Identifier: Apache-2.0
#include "offloadio/io/IOFastpathRules.h"
#include "offloadio/io/IORefusedFileSystems.h"
#include "offloadio/io/Sys.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>

using namespace offloadio;

std::optional<IOMountTy> offloadio::findMount(dev_t Dev,
                                              const char *MountInfo) {
  FILE *F = std::fopen(MountInfo, "re");
  if (!F)
    return std::nullopt;
  auto Close = llvm::make_scope_exit([&] { std::fclose(F); });
  char *Line = nullptr;
  size_t Capacity = 0;
  auto Free = llvm::make_scope_exit([&] { std::free(Line); });
  while (getline(&Line, &Capacity, F) > 0) {
    llvm::SmallVector<llvm::StringRef, 12> Fields;
    llvm::StringRef(Line).rtrim("\n").split(Fields, ' ', -1, false);
    if (Fields.size() < 10)
      continue;
    auto [Major, Minor] = Fields[2].split(':');
    unsigned Maj = 0, Min = 0;
    if (Major.getAsInteger(10, Maj) || Minor.getAsInteger(10, Min) ||
        makedev(Maj, Min) != Dev)
      continue;
    // The optional tags end at "-"; type, source and options follow.
    for (size_t I = 6; I + 1 < Fields.size(); ++I) {
      if (Fields[I] != "-")
        continue;
      IOMountTy M;
      M.Type = Fields[I + 1].str();
      M.MountPoint = Fields[4].str();
      if (I + 3 < Fields.size())
        M.SuperOptions = Fields[I + 3].str();
      return M;
    }
  }
  return std::nullopt;
}

bool offloadio::hasMountOption(llvm::StringRef Options,
                               llvm::StringRef Option) {
  llvm::SmallVector<llvm::StringRef, 16> List;
  Options.split(List, ',');
  return llvm::is_contained(List, Option);
}

std::string offloadio::directDMAFilesystemRefusal(int Fd, dev_t Dev,
                                                  llvm::StringRef RuleText,
                                                  const char *MountInfo) {
  constexpr long Ext4Magic = 0xEF53, XfsMagic = 0x58465342;
  std::optional<IOMountTy> Mount = findMount(Dev, MountInfo);
  if (Mount) {
    if (Mount->Type == "xfs")
      return "";
    if (Mount->Type == "ext4") {
      for (const char *Mode : {"data=journal", "data=writeback"})
        if (hasMountOption(Mount->SuperOptions, Mode))
          return "the ext4 filesystem at " + Mount->MountPoint +
                 " is mounted " + Mode + RuleText.str();
      return "";
    }
    return "the file is on " + Mount->Type + " at " + Mount->MountPoint +
           RuleText.str();
  }
  // No mount table: the filesystem magic alone.
  struct statfs Fs;
  if (::fstatfs(Fd, &Fs) != 0)
    return "";
  if (long(Fs.f_type) == Ext4Magic || long(Fs.f_type) == XfsMagic)
    return "";
  char Magic[32];
  std::snprintf(Magic, sizeof(Magic), "%#lx", (unsigned long)Fs.f_type);
  return std::string("the file is on a filesystem of type ") + Magic +
         RuleText.str();
}

IOMisalignmentTy IOMisalignmentTy::of(size_t Align, off_t Offset, size_t Count,
                                      const void *Ptr) {
  IOMisalignmentTy M;
  M.Offset = Offset;
  M.Count = Count;
  M.BadOffset = uint64_t(Offset) % Align != 0;
  M.BadSize = Count % Align != 0;
  M.BadAddress = reinterpret_cast<uintptr_t>(Ptr) % Align != 0;
  return M;
}

std::string IOMisalignmentTy::describe(llvm::StringRef OffsetLabel,
                                       llvm::StringRef AddressText) const {
  std::string S;
  auto Add = [&](const std::string &Part) {
    S += S.empty() ? "" : ", ";
    S += Part;
  };
  if (BadOffset)
    Add(OffsetLabel.str() + " " + std::to_string(int64_t(Offset)));
  if (BadSize)
    Add("size " + std::to_string(Count));
  if (BadAddress)
    Add(AddressText.str());
  return S;
}

size_t offloadio::directTransferAlignment(SysTy &Sys, int Fd, size_t Minimum) {
  return std::max<size_t>(Minimum, Sys.directIOAlignment(Fd));
}

std::optional<std::string> IOStorageVerdictsTy::find(dev_t Key) const {
  std::lock_guard<std::mutex> Guard(Lock);
  auto It = Verdicts.find(Key);
  if (It == Verdicts.end())
    return std::nullopt;
  return It->second;
}

std::string IOStorageVerdictsTy::decide(dev_t Key, std::string Why) {
  std::lock_guard<std::mutex> Guard(Lock);
  return Verdicts.emplace(Key, std::move(Why)).first->second;
}

void IOStorageVerdictsTy::refuse(dev_t Key, std::string Why) {
  std::lock_guard<std::mutex> Guard(Lock);
  Verdicts[Key] = std::move(Why);
}

unsigned IOStorageVerdictsTy::refused() const {
  std::lock_guard<std::mutex> Guard(Lock);
  unsigned N = 0;
  for (auto &[Key, Why] : Verdicts)
    N += !Why.empty();
  return N;
}

namespace {

/// A pointer as printf's %p writes it (as the engine's info lines do).
std::string ptrText(const void *Ptr) {
  char Buffer[32];
  std::snprintf(Buffer, sizeof(Buffer), "%p", Ptr);
  return Buffer;
}

} // namespace

IOFastpathChecksTy::IOFastpathChecksTy(SysTy &Sys, IOFastpathRulesTy Rules)
    : Sys(Sys), Rules(std::move(Rules)) {}

std::string IOFastpathChecksTy::storageRefusal(int Fd, const struct stat &St) {
  dev_t Dev = IORefusedFileSystemsTy::keyOf(St);
  if (std::optional<std::string> Known = Verdicts.find(Dev))
    return *Known;
  // Block devices have no file-system rule.
  std::string Why;
  if (S_ISREG(St.st_mode) && Rules.FilesystemRule)
    Why = directDMAFilesystemRefusal(Fd, Dev, Rules.FilesystemRuleText,
                                     Rules.MountInfo);
  // A refusal recorded meanwhile wins over the file-system verdict.
  return Verdicts.decide(Dev, std::move(Why));
}

bool IOFastpathChecksTy::accepts(int Fd, const void *DevPtr, size_t Count,
                                 off_t Offset,
                                 const std::optional<AllocationInfoTy> &Alloc,
                                 int32_t DeviceId, std::string &Why) {
  // Nothing to move: no vendor library needs loading for it.
  if (!Count) {
    Why = "nothing to transfer";
    return false;
  }
  int Flags = Sys.getFlags(Fd);
  if (Flags < 0) {
    Why = llvm::formatv("fcntl(fd {0}, F_GETFL) failed: {1}", Fd,
                        std::strerror(errno))
              .str();
    return false;
  }
  if (!(Flags & O_DIRECT)) {
    Why = llvm::formatv("fd {0} is not open with O_DIRECT", Fd).str();
    return false;
  }
  if (!Alloc) {
    Why = llvm::formatv("buffer {0} is not memory of device {1}",
                        ptrText(DevPtr), DeviceId)
              .str();
    return false;
  }
  if (!isDeviceKind(Alloc->Kind)) {
    Why =
        llvm::formatv("buffer {0} is {1} memory, {2} needs device memory",
                      ptrText(DevPtr), allocKindName(Alloc->Kind), Rules.Vendor)
            .str();
    return false;
  }
  size_t Into = reinterpret_cast<uintptr_t>(DevPtr) -
                reinterpret_cast<uintptr_t>(Alloc->Ptr);
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
  if (!S_ISREG(St.st_mode) && !(Rules.BlockDevices && S_ISBLK(St.st_mode))) {
    Why = llvm::formatv(Rules.BlockDevices
                            ? "fd {0} is neither a regular file nor a block "
                              "device"
                            : "fd {0} is not a regular file",
                        Fd)
              .str();
    return false;
  }
  size_t Align = alignmentFor(Fd);
  IOMisalignmentTy Misaligned =
      IOMisalignmentTy::of(Align, Offset, Count, DevPtr);
  if (Misaligned.any()) {
    Why = Rules.Vendor + " needs " + std::to_string(Align) +
          "-byte alignment; not aligned: " +
          Misaligned.describe("file offset", "buffer " + ptrText(DevPtr));
    return false;
  }
  Why = storageRefusal(Fd, St);
  return Why.empty();
}

Error IOFastpathChecksTy::checkChunk(const char *Op, int32_t DeviceId, int Fd,
                                     const void *DevPtr, size_t Count,
                                     off_t Offset, IOFastpathChunkTy &Chunk) {
  if (Sys.fstat(Fd, &Chunk.St) != 0)
    return makeErrnoError(errno, "{0} {1} on device {2}: fstat of fd {3}",
                          Rules.Vendor, Op, DeviceId, Fd);
  Chunk.Storage = IORefusedFileSystemsTy::keyOf(Chunk.St);
  // The engine splits a request into chunks; each must keep the alignment
  // the whole request had (OMPX_IO_CHUNK_SIZE may not be a multiple).
  Chunk.Alignment = alignmentFor(Fd);
  if (IOMisalignmentTy::of(Chunk.Alignment, Offset, Count, DevPtr).any())
    return makeErrnoError(ENOTSUP,
                          "{0} {1} on device {2}: the chunk of {3} bytes at "
                          "file offset {4} into {5} is not {6}-byte aligned",
                          Rules.Vendor, Op, DeviceId, Count, int64_t(Offset),
                          ptrText(DevPtr), Chunk.Alignment);
  // accepts() decided on the storage; a vendor failure may have refused it
  // since.
  std::string Why = Verdicts.find(Chunk.Storage).value_or("");
  if (!Why.empty())
    return makeErrnoError(ENOTSUP, "{0} {1} on device {2}: {3}", Rules.Vendor,
                          Op, DeviceId, Why);
  return Error::success();
}

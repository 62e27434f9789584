// SPDX-License-Identifier: Apache-2.0
//
// What every fastpath (IOFastpathTy: vendor storage <-> GPU DMA) checks the
// same way whatever the vendor: which file systems direct DMA serves (the
// mount table's rule), the alignment of a transfer and its descriptor's
// O_DIRECT alignment, the fastpath's own record of the storage devices it
// decided on, and, built on these, the acceptance of a request and of each
// chunk of it (IOFastpathChecksTy). A backend states what its vendor takes
// (IOFastpathRulesTy) and adds only its vendor calls.
#ifndef OFFLOADIO_IO_IOFASTPATHRULES_H
#define OFFLOADIO_IO_IOFASTPATHRULES_H

#include "offloadio/AllocationRegistry.h"
#include "offloadio/Error.h"

#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <sys/stat.h>
#include <sys/types.h>

namespace offloadio {

class SysTy;

/// The kernel's mount table.
inline constexpr const char *ProcMountInfo = "/proc/self/mountinfo";

/// A mounted file system, from a line of a mountinfo file:
///   id parent major:minor root mount-point options [tags] - type source super
struct IOMountTy {
  std::string Type;       ///< "ext4", "xfs", ...
  std::string MountPoint; ///< Where it is mounted.
  /// The file system's own options ("rw,data=ordered").
  std::string SuperOptions;
};

/// The mount of the file system on \p Dev in \p MountInfo (a file in the
/// format of /proc/self/mountinfo), if it lists one.
std::optional<IOMountTy> findMount(dev_t Dev,
                                   const char *MountInfo = ProcMountInfo);

/// Whether the comma-separated \p Options contain \p Option.
bool hasMountOption(llvm::StringRef Options, llvm::StringRef Option);

/// The file-system rule of direct storage DMA (hipFile's): regular files on
/// xfs, or on ext4 unless mounted data=journal or data=writeback. Why files
/// of \p Fd, on \p Dev, break it, ending with \p RuleText (", and <path>
/// serves only ..."); empty if they keep it or nothing tells. Without a
/// mount for \p Dev, the file system's magic (fstatfs of \p Fd) decides.
std::string directDMAFilesystemRefusal(int Fd, dev_t Dev,
                                       llvm::StringRef RuleText,
                                       const char *MountInfo = ProcMountInfo);

/// Which of a transfer's file offset, size and memory address are not
/// multiples of an alignment.
struct IOMisalignmentTy {
  /// Check \p Offset, \p Count and \p Ptr against \p Align (a power of two
  /// or not).
  static IOMisalignmentTy of(size_t Align, off_t Offset, size_t Count,
                             const void *Ptr);
  /// Whether any part is misaligned.
  bool any() const { return BadOffset || BadSize || BadAddress; }
  /// The misaligned parts, joined by ", ": "<OffsetLabel> <offset>",
  /// "size <count>" and \p AddressText, each only if misaligned.
  std::string describe(llvm::StringRef OffsetLabel,
                       llvm::StringRef AddressText) const;

  off_t Offset = 0;
  size_t Count = 0;
  bool BadOffset = false, BadSize = false, BadAddress = false;
};

/// The alignment of offsets, sizes and addresses that direct transfers on
/// \p Fd need: \p Minimum (the vendor's), or the descriptor's O_DIRECT
/// alignment if larger.
size_t directTransferAlignment(SysTy &Sys, int Fd, size_t Minimum);

/// A fastpath's verdicts on storage devices (keys of
/// IORefusedFileSystemsTy::keyOf): empty when it may serve their files,
/// else why not. Thread-safe.
class IOStorageVerdictsTy {
public:
  /// The verdict on \p Key, if there is one.
  std::optional<std::string> find(dev_t Key) const;
  /// Record \p Why for \p Key unless a verdict is there already (one
  /// recorded meanwhile wins); returns the verdict that stands.
  std::string decide(dev_t Key, std::string Why);
  /// Refuse \p Key for \p Why, replacing any earlier verdict.
  void refuse(dev_t Key, std::string Why);
  /// Number of refused keys.
  unsigned refused() const;

private:
  mutable std::mutex Lock;
  std::map<dev_t, std::string> Verdicts;
};

/// What a vendor's storage DMA takes: the parameters of the checks every
/// fastpath shares.
struct IOFastpathRulesTy {
  /// The vendor's name of the path ("AIS"), for messages.
  std::string Vendor;
  /// The alignment the vendor needs of file offset, size and device address;
  /// the descriptor's O_DIRECT alignment is taken if larger.
  size_t Alignment = 4096;
  /// Whether block devices are served as well as regular files.
  bool BlockDevices = false;
  /// Whether the file-system rule (directDMAFilesystemRefusal) applies to
  /// regular files.
  bool FilesystemRule = false;
  /// How refusals by the file-system rule end (", and <vendor> serves
  /// only ...").
  std::string FilesystemRuleText;
  /// The mount table the file-system rule reads (tests give their own).
  const char *MountInfo = ProcMountInfo;
};

/// What the checks of one chunk found of its file.
struct IOFastpathChunkTy {
  struct stat St;
  /// The storage device (IORefusedFileSystemsTy::keyOf(St)).
  dev_t Storage = 0;
  /// The alignment its transfers need (directTransferAlignment).
  size_t Alignment = 0;
};

/// The checks every fastpath makes before a vendor call, on the syscall
/// seam it is given: whether a request can go the vendor's way at all
/// (accepts) and whether one chunk of it still can (checkChunk), with the
/// verdicts on storage devices both consult. Thread-safe.
class IOFastpathChecksTy {
public:
  IOFastpathChecksTy(SysTy &Sys, IOFastpathRulesTy Rules);

  /// Whether \p Count bytes at \p Offset of \p Fd and \p DevPtr keep the
  /// rules: something to move, an O_DIRECT descriptor of a file type the
  /// vendor serves, a buffer inside device memory (\p Alloc, its
  /// allocation on device \p DeviceId), the alignment, and storage not
  /// refused. On false, \p Why says why.
  bool accepts(int Fd, const void *DevPtr, size_t Count, off_t Offset,
               const std::optional<AllocationInfoTy> &Alloc, int32_t DeviceId,
               std::string &Why);
  /// Whether one chunk of an accepted request, which the engine cut out of
  /// it, still keeps the alignment and its storage is not refused since.
  /// \p Op ("read") and \p DeviceId name it in errors; errors whose errno
  /// is ENOTSUP send the engine to its staged path. Fills \p Chunk.
  Error checkChunk(const char *Op, int32_t DeviceId, int Fd, const void *DevPtr,
                   size_t Count, off_t Offset, IOFastpathChunkTy &Chunk);

  /// The alignment of offsets, sizes and addresses for \p Fd.
  size_t alignmentFor(int Fd) {
    return directTransferAlignment(Sys, Fd, Rules.Alignment);
  }
  /// Refuse the storage device \p Key for \p Why from now on (a vendor
  /// failure that holds for every later request).
  void refuseStorage(dev_t Key, std::string Why) {
    Verdicts.refuse(Key, std::move(Why));
  }
  /// Number of storage devices refused.
  unsigned refusedStorage() const { return Verdicts.refused(); }
  /// The syscalls the checks make.
  SysTy &sys() { return Sys; }

private:
  /// Why the storage of \p St (the file of \p Fd) is refused (file-system
  /// rule, or refuseStorage); empty if it is not.
  std::string storageRefusal(int Fd, const struct stat &St);

  SysTy &Sys;
  const IOFastpathRulesTy Rules;
  IOStorageVerdictsTy Verdicts;
};

} // namespace offloadio

#endif // OFFLOADIO_IO_IOFASTPATHRULES_H

// SPDX-License-Identifier: Apache-2.0
//
// What every fastpath (IOFastpathTy: vendor storage <-> GPU DMA) checks the
// same way whatever the vendor: which file systems direct DMA serves (the
// mount table's rule), the alignment of a transfer and its descriptor's
// O_DIRECT alignment, and the fastpath's own record of the storage devices
// it decided on.
#ifndef OFFLOADIO_IO_IOFASTPATHRULES_H
#define OFFLOADIO_IO_IOFASTPATHRULES_H

#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>
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

} // namespace offloadio

#endif // OFFLOADIO_IO_IOFASTPATHRULES_H

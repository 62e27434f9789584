// SPDX-License-Identifier: Apache-2.0
//
// Pinning for the host plugin. A GPU driver pins the pages of a locked
// range and refuses memory it cannot pin; the host analogue is mlock(2),
// which RLIMIT_MEMLOCK limits as it limits a driver's pinning. So a lock is
// refused where a device's lock would be: memory that is not mapped,
// readable and writable, or pages the process may not lock any more.
#ifndef OFFLOADIO_HOST_HOSTPINNING_H
#define OFFLOADIO_HOST_HOSTPINNING_H

#include "offloadio/Error.h"
#include "offloadio/PageRegistry.h"

#include <atomic>
#include <cstdint>
#include <sys/resource.h>
#include <sys/types.h>

namespace offloadio {
namespace host {

/// struct procmap_query of <linux/fs.h> (Linux 6.11), the argument of the
/// PROCMAP_QUERY ioctl on /proc/<pid>/maps; the headers of older systems
/// lack it, and the layout is fixed by the kernel's ABI.
struct ProcMapQueryTy {
  /// sizeof(ProcMapQueryTy).
  uint64_t Size = sizeof(ProcMapQueryTy);
  /// In: a ProcMapQueryFlagsTy combination.
  uint64_t QueryFlags = 0;
  /// In: the address looked up.
  uint64_t QueryAddr = 0;
  /// Out: the mapping's first byte.
  uint64_t VmaStart = 0;
  /// Out: one past the mapping's last byte.
  uint64_t VmaEnd = 0;
  /// Out: ProcMapQueryFlagsTy VmaReadable, VmaWritable, VmaExecutable and
  /// VmaShared.
  uint64_t VmaFlags = 0;
  /// Out: the mapping's page size (unused here).
  uint64_t VmaPageSize = 0;
  /// Out: the offset in the mapped file (unused here).
  uint64_t VmaOffset = 0;
  /// Out: the mapped file's inode (unused here).
  uint64_t Inode = 0;
  /// Out: the mapped file's device (unused here).
  uint32_t DevMajor = 0;
  /// Out: the mapped file's device (unused here).
  uint32_t DevMinor = 0;
  /// In/out: size of the name buffer; 0, no name wanted.
  uint32_t VmaNameSize = 0;
  /// In/out: size of the build id buffer; 0, no build id wanted.
  uint32_t BuildIdSize = 0;
  /// In: the name buffer.
  uint64_t VmaNameAddr = 0;
  /// In: the build id buffer.
  uint64_t BuildIdAddr = 0;
};

/// Flags of ProcMapQueryTy (enum procmap_query_flags).
enum ProcMapQueryFlagsTy : uint64_t {
  /// The mapping may be read.
  VmaReadable = 0x01,
  /// The mapping may be written.
  VmaWritable = 0x02,
  /// The mapping may be executed.
  VmaExecutable = 0x04,
  /// The mapping is shared, not private.
  VmaShared = 0x08,
  /// Without a mapping at QueryAddr, answer the next one above it.
  CoveringOrNextVma = 0x10,
};

/// The system calls of host pinning, so that tests can substitute them.
/// Each returns what the call returns and leaves errno set on failure.
class HostPinningSysTy {
public:
  virtual ~HostPinningSysTy();
  /// open(2).
  virtual int open(const char *Path, int Flags);
  /// read(2).
  virtual ssize_t read(int Fd, void *Buf, size_t Count);
  /// close(2).
  virtual int close(int Fd);
  /// ioctl(Fd, PROCMAP_QUERY, &Query) on an open /proc/self/maps; fails
  /// with ENOTTY on kernels before 6.11, ENOENT when no mapping answers.
  virtual int queryMapping(int Fd, ProcMapQueryTy &Query);
  /// mlock(2).
  virtual int mlock(const void *Ptr, size_t Size);
  /// munlock(2).
  virtual int munlock(const void *Ptr, size_t Size);
  /// getrlimit(RLIMIT_MEMLOCK, Limit).
  virtual int getMemlockLimit(struct rlimit *Limit);
};

/// Tells whether ranges are mapped readable and writable in this process.
/// Thread-safe.
class MappingCheckTy {
public:
  /// \p Sys must outlive the check.
  explicit MappingCheckTy(HostPinningSysTy &Sys) : Sys(Sys) {}
  ~MappingCheckTy();
  MappingCheckTy(const MappingCheckTy &) = delete;
  MappingCheckTy &operator=(const MappingCheckTy &) = delete;

  /// Fail with InvalidArgument unless every byte of [HstPtr, HstPtr+Size)
  /// is mapped readable and writable; the message names the first part of
  /// the range that is not, and why ("is not mapped", "is mapped without
  /// write access (r--p)"). Asks the kernel about the range's own mappings
  /// (PROCMAP_QUERY), one query per mapping it spans, so the cost does not
  /// grow with the mappings of the process; where the kernel lacks the
  /// query (before 6.11) or a sandbox refuses it, /proc/self/maps is read
  /// whole. A failed system call is an IOError naming it.
  Error check(const void *HstPtr, size_t Size);

private:
  /// The descriptor of /proc/self/maps that the queries go to, opened on
  /// first use and kept.
  Expected<int> mapsFd();
  /// check() through PROCMAP_QUERY; sets QueryUnsupported and succeeds
  /// without deciding when the kernel lacks it or refuses it.
  Error checkByQuery(int Fd, uintptr_t Start, uintptr_t End);
  /// check() by reading /proc/self/maps whole.
  Error checkByScan(uintptr_t Start, uintptr_t End);

  HostPinningSysTy &Sys;
  /// The maps descriptor, -1 until opened. It names the mappings of the
  /// process that opened it; the plugin refuses its devices to a child
  /// forked after it used them (ForkGuardTy), so no child pins through it.
  std::atomic<int> Fd{-1};
  /// The kernel lacks PROCMAP_QUERY (ENOTTY) or refuses it.
  std::atomic<bool> QueryUnsupported{false};
};

/// mlock-based pinning of byte-exact ranges. Thread-safe.
class HostPinningTy final : private PageLockOpsTy {
public:
  /// \p PageSize is the host page size (a power of two); \p Sys must outlive
  /// the pinning.
  HostPinningTy(size_t PageSize, HostPinningSysTy &Sys)
      : Sys(Sys), Mappings(Sys), Pages(*this, PageSize) {}

  /// Check the range (MappingCheckTy) and lock its pages; the same range
  /// may be pinned several times, each pin needing its own unpin.
  Error pin(void *HstPtr, size_t Size);
  /// Undo one pin of exactly that range; pages still used by other pins
  /// stay locked.
  Error unpin(void *HstPtr, size_t Size) { return Pages.unpin(HstPtr, Size); }

private:
  /// mlock. Pages the program locked itself cannot be told apart, so none
  /// is foreign.
  Expected<bool> lockPages(void *Ptr, size_t Size) override;
  /// munlock.
  Error unlockPages(void *Ptr, size_t Size) override;

  HostPinningSysTy &Sys;
  MappingCheckTy Mappings;
  PageRegistryTy Pages;
};

} // namespace host
} // namespace offloadio

#endif // OFFLOADIO_HOST_HOSTPINNING_H

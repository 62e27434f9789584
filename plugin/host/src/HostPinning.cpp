// SPDX-License-Identifier: Apache-2.0
#include "HostPinning.h"

#include "llvm/ADT/StringRef.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

using namespace offloadio;
using namespace offloadio::host;

// The kernel checks the size it is given against its own struct.
static_assert(sizeof(ProcMapQueryTy) == 104,
              "ProcMapQueryTy must match struct procmap_query");

namespace {

/// _IOWR(PROCFS_IOCTL_MAGIC, 17, struct procmap_query) of <linux/fs.h>.
constexpr unsigned long ProcMapQueryRequest = _IOWR('f', 17, ProcMapQueryTy);

constexpr const char *MapsPath = "/proc/self/maps";

/// "[0x1000, 0x2000)", as the pinned map names ranges.
std::string rangeText(uintptr_t Start, uintptr_t End) {
  return llvm::formatv("[{0:x}, {1:x})", Start, End).str();
}

Error notMapped(uintptr_t Start, uintptr_t End) {
  return makeError(ErrorCode::InvalidArgument, "{0} is not mapped",
                   rangeText(Start, End));
}

/// The refusal of [Start, End), mapped with permissions \p Perms ("r--p"
/// as /proc/self/maps writes them), or success if they allow reading and
/// writing.
Error checkPerms(uintptr_t Start, uintptr_t End, llvm::StringRef Perms) {
  bool Read = Perms.size() == 4 && Perms[0] == 'r';
  bool Write = Perms.size() == 4 && Perms[1] == 'w';
  if (Read && Write)
    return Error::success();
  return makeError(ErrorCode::InvalidArgument,
                   "{0} is mapped without {1} access ({2})",
                   rangeText(Start, End),
                   !Read && !Write ? "read and write"
                   : !Read         ? "read"
                                   : "write",
                   Perms);
}

/// The permissions of a mapping that PROCMAP_QUERY describes, as
/// /proc/self/maps writes them.
std::string permsText(uint64_t Flags) {
  std::string Perms = "----";
  if (Flags & VmaReadable)
    Perms[0] = 'r';
  if (Flags & VmaWritable)
    Perms[1] = 'w';
  if (Flags & VmaExecutable)
    Perms[2] = 'x';
  Perms[3] = Flags & VmaShared ? 's' : 'p';
  return Perms;
}

} // namespace

HostPinningSysTy::~HostPinningSysTy() = default;

int HostPinningSysTy::open(const char *Path, int Flags) {
  return ::open(Path, Flags);
}

ssize_t HostPinningSysTy::read(int Fd, void *Buf, size_t Count) {
  return ::read(Fd, Buf, Count);
}

int HostPinningSysTy::close(int Fd) { return ::close(Fd); }

int HostPinningSysTy::queryMapping(int Fd, ProcMapQueryTy &Query) {
  return ::ioctl(Fd, ProcMapQueryRequest, &Query);
}

int HostPinningSysTy::mlock(const void *Ptr, size_t Size) {
  return ::mlock(Ptr, Size);
}

int HostPinningSysTy::munlock(const void *Ptr, size_t Size) {
  return ::munlock(Ptr, Size);
}

int HostPinningSysTy::getMemlockLimit(struct rlimit *Limit) {
  return ::getrlimit(RLIMIT_MEMLOCK, Limit);
}

MappingCheckTy::~MappingCheckTy() {
  // Nobody is left to report a failed close to.
  if (int F = Fd.load(std::memory_order_acquire); F >= 0)
    Sys.close(F);
}

Expected<int> MappingCheckTy::mapsFd() {
  int F = Fd.load(std::memory_order_acquire);
  if (F >= 0)
    return F;
  F = Sys.open(MapsPath, O_RDONLY | O_CLOEXEC);
  if (F < 0)
    return makeErrnoError(errno, "open({0})", MapsPath);
  // Threads that open it at once keep the first descriptor published.
  int Published = -1;
  if (Fd.compare_exchange_strong(Published, F, std::memory_order_acq_rel))
    return F;
  if (Sys.close(F) != 0)
    return makeErrnoError(errno, "close({0}, fd {1})", MapsPath, F);
  return Published;
}

Error MappingCheckTy::check(const void *HstPtr, size_t Size) {
  uintptr_t Start = reinterpret_cast<uintptr_t>(HstPtr);
  uintptr_t End = Start + Size;
  if (!QueryUnsupported.load(std::memory_order_relaxed)) {
    auto F = mapsFd();
    if (!F)
      return F.takeError();
    if (auto Err = checkByQuery(*F, Start, End))
      return Err;
    if (!QueryUnsupported.load(std::memory_order_relaxed))
      return Error::success();
  }
  return checkByScan(Start, End);
}

Error MappingCheckTy::checkByQuery(int F, uintptr_t Start, uintptr_t End) {
  // One query per mapping of the range: each answers the mapping at Cur,
  // or the next one above it, whose start ends the hole at Cur.
  for (uintptr_t Cur = Start; Cur < End;) {
    ProcMapQueryTy Query;
    Query.QueryFlags = CoveringOrNextVma;
    Query.QueryAddr = Cur;
    if (Sys.queryMapping(F, Query) != 0) {
      int Errno = errno;
      if (Errno == ENOENT)
        return notMapped(Cur, End);
      // ENOTTY: a kernel before 6.11; EINVAL, E2BIG: one that takes another
      // form of the query; EPERM, EACCES, ENOSYS: a sandbox that refuses
      // it. The file answers the same question, only more slowly.
      if (Errno == ENOTTY || Errno == EINVAL || Errno == E2BIG ||
          Errno == EPERM || Errno == EACCES || Errno == ENOSYS) {
        QueryUnsupported.store(true, std::memory_order_relaxed);
        return Error::success();
      }
      return makeErrnoError(Errno,
                            "ioctl({0}, PROCMAP_QUERY, {1:x}) while checking "
                            "{2}",
                            MapsPath, Cur, rangeText(Start, End));
    }
    uintptr_t MapStart = Query.VmaStart, MapEnd = Query.VmaEnd;
    if (MapEnd <= Cur)
      return makeError(ErrorCode::Internal,
                       "PROCMAP_QUERY for {0:x} answered the mapping {1}, "
                       "which ends before it",
                       Cur, rangeText(MapStart, MapEnd));
    if (MapStart > Cur)
      return notMapped(Cur, std::min(MapStart, End));
    if (auto Err =
            checkPerms(Cur, std::min(MapEnd, End), permsText(Query.VmaFlags)))
      return Err;
    Cur = MapEnd;
  }
  return Error::success();
}

Error MappingCheckTy::checkByScan(uintptr_t Start, uintptr_t End) {
  int F = Sys.open(MapsPath, O_RDONLY | O_CLOEXEC);
  if (F < 0)
    return makeErrnoError(errno, "open({0})", MapsPath);
  std::string Text;
  char Buffer[16384];
  for (;;) {
    ssize_t N = Sys.read(F, Buffer, sizeof Buffer);
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0) {
      int Errno = errno;
      Sys.close(F);
      return makeErrnoError(Errno, "read({0}, {1} bytes)", MapsPath,
                            sizeof Buffer);
    }
    if (N == 0)
      break;
    Text.append(Buffer, size_t(N));
  }
  if (Sys.close(F) != 0)
    return makeErrnoError(errno, "close({0}, fd {1})", MapsPath, F);

  // Lines are "start-end perms offset dev inode path", sorted by start and
  // disjoint; walk them until the range is covered or a hole or a mapping
  // without read and write access shows up.
  uintptr_t Cur = Start;
  llvm::StringRef Rest = Text;
  while (!Rest.empty() && Cur < End) {
    auto [Line, Next] = Rest.split('\n');
    Rest = Next;
    auto [Bounds, Tail] = Line.split(' ');
    auto [StartText, EndText] = Bounds.split('-');
    uint64_t MapStart, MapEnd;
    if (StartText.getAsInteger(16, MapStart) ||
        EndText.getAsInteger(16, MapEnd))
      return makeError(ErrorCode::Internal, "cannot parse {0} line '{1}'",
                       MapsPath, Line);
    if (MapEnd <= Cur)
      continue;
    if (MapStart > Cur)
      return notMapped(Cur, std::min<uintptr_t>(MapStart, End));
    if (auto Err = checkPerms(Cur, std::min<uintptr_t>(MapEnd, End),
                              Tail.take_front(4)))
      return Err;
    Cur = MapEnd;
  }
  if (Cur < End)
    return notMapped(Cur, End);
  return Error::success();
}

Error HostPinningTy::pin(void *HstPtr, size_t Size) {
  if (auto Err = Mappings.check(HstPtr, Size))
    return Err;
  return Pages.pin(HstPtr, Size);
}

Expected<bool> HostPinningTy::lockPages(void *Ptr, size_t Size) {
  if (Sys.mlock(Ptr, Size) == 0)
    return false;
  int Errno = errno;
  std::string Why;
  if (Errno == ENOMEM || Errno == EPERM || Errno == EAGAIN) {
    // The usual cause: the limit, which root escapes with CAP_IPC_LOCK.
    struct rlimit Limit;
    if (Sys.getMemlockLimit(&Limit) == 0 && Limit.rlim_cur != RLIM_INFINITY)
      Why = llvm::formatv("; the process may lock at most {0} bytes "
                          "(RLIMIT_MEMLOCK, `ulimit -l`)",
                          uint64_t(Limit.rlim_cur))
                .str();
  }
  return makeError(ErrorCode::OutOfResources,
                   "mlock of {0} bytes at {1:x} failed: {2}{3}", Size,
                   reinterpret_cast<uintptr_t>(Ptr), std::strerror(Errno), Why);
}

Error HostPinningTy::unlockPages(void *Ptr, size_t Size) {
  // munlock of pages that were unmapped meanwhile (the program freed locked
  // memory) fails with ENOMEM; the pages are unlocked all the same.
  if (Sys.munlock(Ptr, Size) != 0 && errno != ENOMEM)
    return makeErrnoError(errno, "munlock of {0} bytes at {1:x}", Size,
                          reinterpret_cast<uintptr_t>(Ptr));
  return Error::success();
}

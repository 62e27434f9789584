// SPDX-License-Identifier: Apache-2.0
#include "HostPinning.h"

#include "llvm/ADT/StringRef.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

using namespace offloadio;
using namespace offloadio::host;

namespace {

/// "[0x1000, 0x2000)", as the pinned map names ranges.
std::string rangeText(uintptr_t Start, uintptr_t End) {
  return llvm::formatv("[{0:x}, {1:x})", Start, End).str();
}

/// The whole of /proc/self/maps.
Expected<std::string> readMaps() {
  int Fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (Fd < 0)
    return makeErrnoError(errno, "open(/proc/self/maps)");
  std::string Text;
  char Buffer[16384];
  for (;;) {
    ssize_t N = read(Fd, Buffer, sizeof Buffer);
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0) {
      int Errno = errno;
      close(Fd);
      return makeErrnoError(Errno, "read(/proc/self/maps, {0} bytes)",
                            sizeof Buffer);
    }
    if (N == 0)
      break;
    Text.append(Buffer, size_t(N));
  }
  if (close(Fd) != 0)
    return makeErrnoError(errno, "close(/proc/self/maps, fd {0})", Fd);
  return Text;
}

} // namespace

Error offloadio::host::checkReadWriteMapped(const void *HstPtr, size_t Size) {
  auto Maps = readMaps();
  if (!Maps)
    return Maps.takeError();
  uintptr_t Cur = reinterpret_cast<uintptr_t>(HstPtr);
  uintptr_t End = Cur + Size;
  // Lines are "start-end perms offset dev inode path", sorted by start and
  // disjoint; walk them until the range is covered or a hole or a mapping
  // without read and write access shows up.
  llvm::StringRef Rest = *Maps;
  while (!Rest.empty() && Cur < End) {
    auto [Line, Next] = Rest.split('\n');
    Rest = Next;
    auto [Bounds, Tail] = Line.split(' ');
    auto [StartText, EndText] = Bounds.split('-');
    uint64_t MapStart, MapEnd;
    if (StartText.getAsInteger(16, MapStart) ||
        EndText.getAsInteger(16, MapEnd))
      return makeError(ErrorCode::Internal,
                       "cannot parse /proc/self/maps line '{0}'", Line);
    if (MapEnd <= Cur)
      continue;
    if (MapStart > Cur)
      return makeError(ErrorCode::InvalidArgument, "{0} is not mapped",
                       rangeText(Cur, std::min<uintptr_t>(MapStart, End)));
    llvm::StringRef Perms = Tail.take_front(4);
    bool Read = Perms.size() == 4 && Perms[0] == 'r';
    bool Write = Perms.size() == 4 && Perms[1] == 'w';
    if (!Read || !Write)
      return makeError(ErrorCode::InvalidArgument,
                       "{0} is mapped without {1} access ({2})",
                       rangeText(Cur, std::min<uintptr_t>(MapEnd, End)),
                       !Read && !Write ? "read and write"
                       : !Read         ? "read"
                                       : "write",
                       Perms);
    Cur = MapEnd;
  }
  if (Cur < End)
    return makeError(ErrorCode::InvalidArgument, "{0} is not mapped",
                     rangeText(Cur, End));
  return Error::success();
}

Error HostPinningTy::pin(void *HstPtr, size_t Size) {
  if (auto Err = checkReadWriteMapped(HstPtr, Size))
    return Err;
  return Pages.pin(HstPtr, Size);
}

Expected<bool> HostPinningTy::lockPages(void *Ptr, size_t Size) {
  if (mlock(Ptr, Size) == 0)
    return false;
  int Errno = errno;
  std::string Why;
  if (Errno == ENOMEM || Errno == EPERM || Errno == EAGAIN) {
    // The usual cause: the limit, which root escapes with CAP_IPC_LOCK.
    struct rlimit Limit;
    if (getrlimit(RLIMIT_MEMLOCK, &Limit) == 0 &&
        Limit.rlim_cur != RLIM_INFINITY)
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
  if (munlock(Ptr, Size) != 0 && errno != ENOMEM)
    return makeErrnoError(errno, "munlock of {0} bytes at {1:x}", Size,
                          reinterpret_cast<uintptr_t>(Ptr));
  return Error::success();
}

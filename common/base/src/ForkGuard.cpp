// SPDX-License-Identifier: Apache-2.0
#include "offloadio/ForkGuard.h"

#include <new>
#include <sys/mman.h>
#include <unistd.h>

using namespace offloadio;

ForkGuardTy::ForkGuardTy() : Sentinel(&Fallback) {
  long PageSize = ::sysconf(_SC_PAGESIZE);
  size_t Size = PageSize > 0 ? size_t(PageSize) : 4096;
  void *P = ::mmap(nullptr, Size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (P == MAP_FAILED)
    return;
  // Linux 4.14 and later; without it, inForkedChildSlow() asks getpid().
  if (::madvise(P, Size, MADV_WIPEONFORK) != 0) {
    ::munmap(P, Size);
    return;
  }
  Page = P;
  Sentinel = new (P) std::atomic<int>(0);
}

ForkGuardTy::~ForkGuardTy() {
  if (!Page)
    return;
  long PageSize = ::sysconf(_SC_PAGESIZE);
  ::munmap(Page, PageSize > 0 ? size_t(PageSize) : 4096);
}

void ForkGuardTy::arm() {
  if (Page) {
    if (Sentinel->load(std::memory_order_relaxed))
      return;
    // The sentinel first: a thread that sees the pid (acquire) and then
    // reads the sentinel again finds it set, so the parent is never taken
    // for a child while arming.
    Sentinel->store(1, std::memory_order_relaxed);
  }
  OwnerPid.store(::getpid(), std::memory_order_release);
}

bool ForkGuardTy::inForkedChildSlow() const {
  pid_t Owner = OwnerPid.load(std::memory_order_acquire);
  if (!Owner)
    return false;
  if (Page)
    return Sentinel->load(std::memory_order_relaxed) == 0;
  return ::getpid() != Owner;
}

Error ForkGuardTy::makeForkedError(const llvm::Twine &What,
                                   const llvm::Twine &Detail) const {
  pid_t Owner = getOwnerPid();
  // A grandchild's parent is not the process that set the devices up.
  std::string Initialiser =
      ::getppid() == Owner
          ? llvm::formatv("the parent (pid {0})", Owner).str()
          : llvm::formatv("process {0}, an ancestor,", Owner).str();
  return makeError(ErrorCode::ForkedChild,
                   "{0} used in a child process (pid {1}) after fork(); {2} "
                   "{3}; devices cannot be shared across fork",
                   What.str(), ::getpid(), Initialiser, Detail.str());
}

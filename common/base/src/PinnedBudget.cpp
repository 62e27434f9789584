// SPDX-License-Identifier: Apache-2.0
#include "offloadio/PinnedBudget.h"
#include "offloadio/Envar.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace offloadio;

/// The account itself; in the shared page, or owned by a private handle.
struct offloadio::PinnedAccountTy {
  /// Marks a page that holds an account ("offpin01").
  static constexpr uint64_t MagicValue = 0x31306e6970666f6fULL;
  uint64_t Magic = MagicValue;
  std::atomic<uint64_t> Cap;
  std::atomic<uint64_t> Used{0};
  std::atomic<uint64_t> Peak{0};
  std::atomic<uint64_t> Refusals{0};

  explicit PinnedAccountTy(uint64_t Cap) : Cap(Cap) {}
};

// The shared page is mapped by every plugin of the process at its own
// address; the counters are updated with atomic read-modify-writes, which
// act on the memory, not the mapping.
static_assert(std::atomic<uint64_t>::is_always_lock_free,
              "the shared account needs lock-free 64-bit atomics");

/// The name memfd_create gives the account's file, as /proc/self/fd shows it.
static constexpr const char *MemfdName = "offloadio-pinned-account";

PinnedReclaimableTy::~PinnedReclaimableTy() = default;

PinnedReservationTy::PinnedReservationTy(PinnedReservationTy &&Other) noexcept
    : Account(Other.Account), Pid(Other.Pid), Bytes(Other.Bytes) {
  Other.Account = nullptr;
  Other.Bytes = 0;
}

PinnedReservationTy &
PinnedReservationTy::operator=(PinnedReservationTy &&Other) noexcept {
  if (this != &Other) {
    release();
    Account = Other.Account;
    Pid = Other.Pid;
    Bytes = Other.Bytes;
    Other.Account = nullptr;
    Other.Bytes = 0;
  }
  return *this;
}

void PinnedReservationTy::release() {
  // A forked child holds copies of its parent's reservations: their bytes
  // are the parent's to give back, not the child's.
  if (Account && Bytes && Pid == ::getpid())
    Account->Used.fetch_sub(Bytes, std::memory_order_relaxed);
  Account = nullptr;
  Bytes = 0;
}

PinnedBudgetTy::PinnedBudgetTy(uint64_t Cap)
    : OwnerPid(::getpid()), Own(std::make_unique<PinnedAccountTy>(Cap)) {
  Account = Own.get();
}

PinnedBudgetTy::PinnedBudgetTy(PinnedAccountTy *Mapping)
    : Account(Mapping), OwnerPid(::getpid()), Mapping(Mapping) {}

PinnedAccountTy &PinnedBudgetTy::accountOfThisProcess() {
  pid_t Pid = ::getpid();
  if (LLVM_LIKELY(OwnerPid.load(std::memory_order_acquire) == Pid))
    return *Account.load(std::memory_order_acquire);
  std::lock_guard<std::mutex> Guard(ForkLock);
  if (OwnerPid.load(std::memory_order_relaxed) != Pid) {
    // The page (shared or not) is the parent's now; the parent's own
    // account object must stay valid for its reservations' copies here.
    PinnedAccountTy *Parent = Account.load(std::memory_order_relaxed);
    auto Child = std::make_unique<PinnedAccountTy>(
        Parent->Cap.load(std::memory_order_relaxed));
    Account.store(Child.get(), std::memory_order_release);
    Own.release(); // Parent's private account, if any: copies point at it.
    Own = std::move(Child);
    OwnerPid.store(Pid, std::memory_order_release);
  }
  return *Account.load(std::memory_order_acquire);
}

PinnedBudgetTy::~PinnedBudgetTy() {
  // Reservations must be gone by now; the page stays valid for the other
  // plugins, which map it themselves.
  if (Mapping)
    ::munmap(Mapping, sizeof(PinnedAccountTy));
}

/// Map the account file \p Fd; null (errno set) on failure.
static PinnedAccountTy *mapAccount(int Fd) {
  void *Page = ::mmap(nullptr, sizeof(PinnedAccountTy), PROT_READ | PROT_WRITE,
                      MAP_SHARED, Fd, 0);
  return Page == MAP_FAILED ? nullptr : static_cast<PinnedAccountTy *>(Page);
}

/// The account named by the environment if it is this process's: the
/// variable holds our pid and a descriptor that is still our memfd of the
/// right size holding an account. Anything else (unset, a parent's account
/// after fork, a stale or forged value) gives null.
static PinnedAccountTy *findProcessAccount() {
  auto Raw = getEnv(PinnedBudgetTy::AccountVariable);
  if (!Raw)
    return nullptr;
  auto [PidText, FdText] = llvm::StringRef(*Raw).split(':');
  int Pid = 0, Fd = -1;
  if (PidText.getAsInteger(10, Pid) || FdText.getAsInteger(10, Fd) ||
      Pid != ::getpid() || Fd < 0)
    return nullptr;
  char Link[256];
  std::string Path = "/proc/self/fd/" + std::to_string(Fd);
  ssize_t N = ::readlink(Path.c_str(), Link, sizeof(Link) - 1);
  if (N <= 0)
    return nullptr;
  Link[N] = '\0';
  std::string Expected = std::string("/memfd:") + MemfdName;
  struct stat St;
  if (std::strncmp(Link, Expected.c_str(), Expected.size()) != 0 ||
      ::fstat(Fd, &St) != 0 || !S_ISREG(St.st_mode) ||
      size_t(St.st_size) != sizeof(PinnedAccountTy))
    return nullptr;
  PinnedAccountTy *Account = mapAccount(Fd);
  if (!Account)
    return nullptr;
  if (Account->Magic != PinnedAccountTy::MagicValue) {
    ::munmap(Account, sizeof(PinnedAccountTy));
    return nullptr;
  }
  return Account;
}

Expected<std::unique_ptr<PinnedBudgetTy>>
PinnedBudgetTy::joinProcessAccount(uint64_t Cap) {
  if (PinnedAccountTy *Account = findProcessAccount())
    return std::unique_ptr<PinnedBudgetTy>(new PinnedBudgetTy(Account));

  // The descriptor stays open for the life of the process: it is how the
  // plugins loaded after this one find the account.
  int Fd = ::memfd_create(MemfdName, MFD_CLOEXEC);
  if (Fd < 0)
    return makeErrnoError(errno, "memfd_create(\"{0}\") failed", MemfdName);
  if (::ftruncate(Fd, sizeof(PinnedAccountTy)) != 0) {
    int Errno = errno;
    ::close(Fd);
    return makeErrnoError(Errno, "ftruncate(memfd {0}, {1}) failed", Fd,
                          sizeof(PinnedAccountTy));
  }
  PinnedAccountTy *Page = mapAccount(Fd);
  if (!Page) {
    int Errno = errno;
    ::close(Fd);
    return makeErrnoError(Errno, "mmap(memfd {0}, {1} bytes) failed", Fd,
                          sizeof(PinnedAccountTy));
  }
  new (Page) PinnedAccountTy(Cap);
  std::string Name = std::to_string(::getpid()) + ":" + std::to_string(Fd);
  if (::setenv(AccountVariable, Name.c_str(), 1) != 0) {
    int Errno = errno;
    ::munmap(Page, sizeof(PinnedAccountTy));
    ::close(Fd);
    return makeErrnoError(Errno, "setenv({0}={1}) failed", AccountVariable,
                          Name);
  }
  return std::unique_ptr<PinnedBudgetTy>(new PinnedBudgetTy(Page));
}

/// Add \p Bytes to \p Account if that keeps it within its cap; \p Used gets
/// the bytes reserved before.
static bool tryCharge(PinnedAccountTy &Account, size_t Bytes, uint64_t &Used) {
  uint64_t Cap = Account.Cap.load(std::memory_order_relaxed);
  Used = Account.Used.load(std::memory_order_relaxed);
  do
    if (Bytes > Cap || Used > Cap - Bytes)
      return false;
  while (!Account.Used.compare_exchange_weak(Used, Used + Bytes,
                                             std::memory_order_relaxed));
  uint64_t Now = Used + Bytes;
  uint64_t Peak = Account.Peak.load(std::memory_order_relaxed);
  while (Peak < Now && !Account.Peak.compare_exchange_weak(
                           Peak, Now, std::memory_order_relaxed))
    ;
  return true;
}

Expected<PinnedReservationTy> PinnedBudgetTy::reserve(size_t Bytes,
                                                      llvm::StringRef Purpose,
                                                      PinnedReclaimableTy *Self,
                                                      PinnedTryTy Try) {
  PinnedAccountTy *Account = &accountOfThisProcess();
  uint64_t Used = 0;
  if (tryCharge(*Account, Bytes, Used))
    return PinnedReservationTy(*Account, ::getpid(), Bytes);
  // Full: the memory other holders keep for their next transfer goes back
  // first, whoever needs it now. Holders that are busy give nothing, so
  // this never waits for a transfer.
  if (Bytes <= Account->Cap.load(std::memory_order_relaxed)) {
    std::lock_guard<std::mutex> Guard(ReclaimLock);
    for (PinnedReclaimableTy *Holder : Reclaimables)
      if (Holder != Self)
        Holder->reclaimIdle();
  }
  if (tryCharge(*Account, Bytes, Used))
    return PinnedReservationTy(*Account, ::getpid(), Bytes);
  if (Try == PinnedTryTy::First)
    Account->Refusals.fetch_add(1, std::memory_order_relaxed);
  return makeError(ErrorCode::OutOfResources,
                   "pinned-memory budget exhausted: {0} needs {1} bytes, but "
                   "{2} of the {3} bytes that OFFLOADIO_PINNED_MAX allows the "
                   "process's plugins are pinned already",
                   Purpose, Bytes, Used,
                   Account->Cap.load(std::memory_order_relaxed));
}

void PinnedBudgetTy::addReclaimable(PinnedReclaimableTy &Holder) {
  std::lock_guard<std::mutex> Guard(ReclaimLock);
  Reclaimables.push_back(&Holder);
}

void PinnedBudgetTy::removeReclaimable(PinnedReclaimableTy &Holder) {
  std::lock_guard<std::mutex> Guard(ReclaimLock);
  Reclaimables.erase(
      std::remove(Reclaimables.begin(), Reclaimables.end(), &Holder),
      Reclaimables.end());
}

uint64_t PinnedBudgetTy::room() const {
  PinnedBudgetStatsTy Stats = getStats();
  return Stats.Used < Stats.Cap ? Stats.Cap - Stats.Used : 0;
}

bool PinnedBudgetTy::waitForRoom(size_t Bytes,
                                 const PinnedReclaimableTy *Self) {
  for (unsigned Round = 0;; ++Round) {
    size_t Busy = 0;
    {
      std::lock_guard<std::mutex> Guard(ReclaimLock);
      for (PinnedReclaimableTy *Holder : Reclaimables)
        if (Holder != Self) {
          Holder->reclaimIdle();
          Busy += Holder->busyBytes();
        }
    }
    // What is free now counts with what the busy holders will free.
    uint64_t Room = room();
    if (Room >= Bytes)
      return true;
    if (Room + Busy < Bytes)
      return false;
    // The holders go idle when their transfers end, which nothing signals
    // here: poll, backing off, as the staging pool does for copies in
    // flight.
    if (Round < 4)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(
          std::chrono::microseconds(25u << std::min(Round - 4, 6u)));
  }
}

size_t PinnedBudgetTy::fitBuffer(size_t Size) const {
  uint64_t Share = getStats().Cap / BufferShare / MinBufferSize * MinBufferSize;
  if (Size <= Share)
    return Size;
  return size_t(std::max<uint64_t>(Share, MinBufferSize));
}

PinnedBudgetStatsTy PinnedBudgetTy::getStats() const {
  const PinnedAccountTy *Account = this->Account.load(std::memory_order_acquire);
  PinnedBudgetStatsTy Stats;
  Stats.Cap = Account->Cap.load(std::memory_order_relaxed);
  Stats.Used = Account->Used.load(std::memory_order_relaxed);
  Stats.Peak = Account->Peak.load(std::memory_order_relaxed);
  Stats.Refusals = Account->Refusals.load(std::memory_order_relaxed);
  return Stats;
}

// SPDX-License-Identifier: Apache-2.0
//
// The process's budget of host memory that the plugins pin for their own
// use: staging buffers, small-download buffers, the file engine's rings,
// the host stream's captures and the AMDGPU kernel-argument arenas, each
// taken through a PinnedPoolTy (PinnedPool.h). Memory the program asks for
// itself
// (llvm_omp_target_alloc_host, locks) is the program's and is not counted.
//
// One account per process, whichever plugins are loaded: the plugins share
// no symbols, so the account lives in a memfd page that the first plugin
// creates and names in the environment (OFFLOADIO_PINNED_ACCOUNT=<pid>:<fd>);
// every later plugin of the same process maps the same page. A child after
// fork shares that page with its parent, so it never touches it: a plugin
// joining in the child sees another pid and opens an account of its own,
// a handle that joined in the parent moves to a private account at its
// first reservation in the child, and reservations made in the parent give
// nothing back in the child.
//
// A reservation that would take the account past its cap first asks the
// holders registered with this handle (PinnedReclaimableTy: the file
// engine's rings, the staging pools, the AMDGPU kernel-argument arenas
// beyond each device's first) to give back the memory they hold but
// do not use now, then tries again; only then does it fail with
// OutOfResources and a message naming OFFLOADIO_PINNED_MAX. What a holder
// does then is chosen at each of its calls (OnRefusalTy, PinnedPool.h):
// waiting while busy holders will give theirs back (waitForRoom) among
// other reactions. Holders
// never give back idle memory on their own: pinning is slow, so memory
// stays with the holder that used it last until someone else needs it.
// Holders of other plugins of the process are not asked.
#ifndef OFFLOADIO_PINNEDBUDGET_H
#define OFFLOADIO_PINNEDBUDGET_H

#include "offloadio/Error.h"

#include "llvm/ADT/StringRef.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <sys/types.h>
#include <vector>

namespace offloadio {

struct PinnedAccountTy;
class PinnedBudgetTy;

/// A snapshot of the account.
struct PinnedBudgetStatsTy {
  uint64_t Cap = 0;      ///< Most bytes the process's plugins may pin.
  uint64_t Used = 0;     ///< Bytes reserved now.
  uint64_t Peak = 0;     ///< Most bytes reserved at once so far.
  /// Requests refused for lack of room, each once however often it
  /// asked again (PinnedTryTy).
  uint64_t Refusals = 0;
};

/// Bytes reserved in a budget, given back when the reservation is destroyed
/// or released. Move-only; the budget must outlive it.
class PinnedReservationTy {
public:
  /// An empty reservation (holds nothing).
  PinnedReservationTy() = default;
  PinnedReservationTy(PinnedReservationTy &&Other) noexcept;
  PinnedReservationTy &operator=(PinnedReservationTy &&Other) noexcept;
  PinnedReservationTy(const PinnedReservationTy &) = delete;
  PinnedReservationTy &operator=(const PinnedReservationTy &) = delete;
  ~PinnedReservationTy() { release(); }

  /// Bytes held.
  size_t size() const { return Bytes; }
  /// Give the bytes back now; the reservation becomes empty.
  void release();

private:
  friend class PinnedBudgetTy;
  PinnedReservationTy(PinnedAccountTy &Account, pid_t Pid, size_t Bytes)
      : Account(&Account), Pid(Pid), Bytes(Bytes) {}

  /// Where the bytes were charged, by which process.
  PinnedAccountTy *Account = nullptr;
  pid_t Pid = 0;
  size_t Bytes = 0;
};

/// Holds pinned memory reserved in a budget, some of which may sit unused
/// between transfers; registered with the budget (addReclaimable) so that
/// a refused reservation can have it back.
class PinnedReclaimableTy {
public:
  virtual ~PinnedReclaimableTy();
  /// Free the memory held but not in use now, and give its bytes back to
  /// the budget. Waits for nothing: a holder busy at the moment gives back
  /// nothing. Called from any thread, with the budget's list of holders
  /// locked: it must not reserve in the budget. Returns the bytes given
  /// back.
  virtual size_t reclaimIdle() = 0;
  /// Bytes held in use now that the holder makes idle by itself, whatever
  /// the program does (a file worker finishing its chunks), so that a
  /// refused reservation may wait for them (PinnedBudgetTy::waitForRoom).
  /// Same calling rules as reclaimIdle().
  virtual size_t busyBytes() const { return 0; }
};

/// Which try of one request a reserve() is: the stats count a request
/// that the budget refuses once (PinnedBudgetStatsTy::Refusals), however
/// often it asks again (a smaller share, after a wait).
enum class PinnedTryTy {
  /// The request's first try: a refusal counts.
  First,
  /// The request asks again after a refusal, which counted then.
  Again,
};

/// A handle on a pinned-memory account; one per plugin instance.
class PinnedBudgetTy {
public:
  /// Name of the environment variable that names the process's account.
  static constexpr const char *AccountVariable = "OFFLOADIO_PINNED_ACCOUNT";

  /// A private account with cap \p Cap (tests; fallback when the process's
  /// account cannot be shared).
  explicit PinnedBudgetTy(uint64_t Cap);
  ~PinnedBudgetTy();
  PinnedBudgetTy(const PinnedBudgetTy &) = delete;
  PinnedBudgetTy &operator=(const PinnedBudgetTy &) = delete;

  /// Join the process's account, opening it with cap \p Cap if no plugin of
  /// this process has. Plugins are loaded one after another, so two never
  /// race to open it. An account opened earlier keeps its own cap.
  static Expected<std::unique_ptr<PinnedBudgetTy>>
  joinProcessAccount(uint64_t Cap);

  /// Reserve \p Bytes for \p Purpose (named in the error). When the
  /// account would exceed its cap, every registered holder but \p Self
  /// gives back its idle memory first; fails with OutOfResources if that
  /// does not make room, counted in the stats unless \p Try is Again. The
  /// caller must hold no lock that a holder's reclaimIdle() takes.
  Expected<PinnedReservationTy> reserve(size_t Bytes, llvm::StringRef Purpose,
                                        PinnedReclaimableTy *Self = nullptr,
                                        PinnedTryTy Try = PinnedTryTy::First);

  /// Ask \p Holder for its idle memory when a reservation is refused, until
  /// removeReclaimable(). The holder must be removed before it is destroyed
  /// and before this budget is.
  void addReclaimable(PinnedReclaimableTy &Holder);
  /// Stop asking \p Holder; waits for a reclaim that is asking it now.
  void removeReclaimable(PinnedReclaimableTy &Holder);

  /// Bytes that a reservation could take now (other threads may take them
  /// first).
  uint64_t room() const;
  /// After a refusal: wait until \p Bytes are free, asking the holders
  /// other than \p Self for their idle memory as they go idle, while they
  /// hold at least that much in use (busyBytes). Returns whether the bytes
  /// are free now (others may still take them first); false at once when
  /// nothing would free them (the memory is held by something that is not
  /// asked, or not busy), and the refusal stands. Callers that wait hold
  /// none of this budget's memory in use themselves, so that waiters never
  /// wait for each other; the caller must hold no lock that a holder's
  /// reclaimIdle() takes.
  bool waitForRoom(size_t Bytes, const PinnedReclaimableTy *Self);
  /// The size of a buffer that a holder of equal buffers (a staging pool)
  /// uses: \p Size, or a smaller one when the cap is small, so that one
  /// buffer never takes more than a share of the cap (the others' buffers
  /// must fit beside it). Never below MinBufferSize.
  size_t fitBuffer(size_t Size) const;
  /// The share of the cap that one buffer of fitBuffer() may take.
  static constexpr uint64_t BufferShare = 8;
  /// The smallest buffer fitBuffer() gives: a page.
  static constexpr size_t MinBufferSize = 4096;

  /// The account's figures now.
  PinnedBudgetStatsTy getStats() const;
  /// Whether this handle shares the process's account (else it is private).
  bool isShared() const { return Mapping != nullptr; }

private:
  /// Handle on the shared account at \p Mapping.
  explicit PinnedBudgetTy(PinnedAccountTy *Mapping);
  /// The account this process charges: after a fork, a private one.
  PinnedAccountTy &accountOfThisProcess();

  /// The account charged; replaced once in a forked child.
  std::atomic<PinnedAccountTy *> Account;
  /// The process that charges Account.
  std::atomic<pid_t> OwnerPid;
  /// Guards the move to a private account in a forked child.
  std::mutex ForkLock;
  /// The shared page, unmapped on destruction; null for a private account.
  PinnedAccountTy *Mapping = nullptr;
  /// The private account, if this handle has one.
  std::unique_ptr<PinnedAccountTy> Own;
  /// Guards Reclaimables; held while they are asked for their memory.
  std::mutex ReclaimLock;
  /// The holders asked for idle memory when a reservation is refused.
  std::vector<PinnedReclaimableTy *> Reclaimables;
};

} // namespace offloadio

#endif // OFFLOADIO_PINNEDBUDGET_H

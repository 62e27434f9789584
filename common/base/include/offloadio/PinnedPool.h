// SPDX-License-Identifier: Apache-2.0
//
// The one way the framework and its backends take pinned host memory for
// their own use: a PinnedPoolTy reserves the bytes in the process's budget
// (PinnedBudgetTy), then has the vendor's allocator (PinnedAllocatorTy)
// allocate them, and hands both out as one move-only PinnedLeaseTy that
// frees the memory and gives the bytes back when it goes.
//
// What a caller does when the budget refuses is its own choice, stated at
// each call (OnRefusalTy): fail, wait for busy holders, take less, go on
// with what it has, or move its bytes through unpinned memory. The pool
// decides nothing by itself.
//
// @code
//   PinnedPoolTy Pool(Budget, Allocator);
//   // Why: the caller has nothing to wait for and cannot work with less.
//   auto Lease = Pool.acquire(Bytes, OnRefusalTy::Fail, "a bounce buffer");
//   if (!Lease) return Lease.takeError();
//   std::memcpy(Lease->get(), Src, Bytes);
// @endcode
#ifndef OFFLOADIO_PINNEDPOOL_H
#define OFFLOADIO_PINNEDPOOL_H

#include "offloadio/Error.h"
#include "offloadio/PinnedBudget.h"

#include "llvm/ADT/StringRef.h"

#include <cstddef>

namespace offloadio {

/// What acquire() does when the budget refuses the bytes asked for.
enum class OnRefusalTy {
  /// The refusal is the caller's error.
  Fail,
  /// Wait while busy holders other than the caller will free enough
  /// (PinnedBudgetTy::waitForRoom), then try again; the refusal is the
  /// error when nothing will.
  Wait,
  /// Take less: half of the room left (whole pages), at least the request's
  /// MinBytes; the first refusal is the error when even that is refused.
  Shrink,
  /// Shrink; when even MinBytes is refused, Wait for MinBytes and shrink
  /// again.
  ShrinkThenWait,
  /// An empty lease and no error: the caller goes on with the pinned
  /// memory it already has.
  MakeDo,
  /// An empty lease and no error: the caller moves its bytes through
  /// unpinned memory instead (and waits for the copy itself).
  CopyUnpinned,
};

/// The name of \p OnRefusal, for messages and tests.
llvm::StringRef onRefusalName(OnRefusalTy OnRefusal);

/// The vendor's call that pins host memory, and its inverse; passed to the
/// pool by reference so that tests can substitute it.
class PinnedAllocatorTy {
public:
  virtual ~PinnedAllocatorTy();
  /// Allocate \p Size bytes of pinned host memory.
  virtual Expected<void *> allocatePinned(size_t Size) = 0;
  /// Free \p Ptr, \p Size bytes from allocatePinned().
  virtual Error freePinned(void *Ptr, size_t Size) = 0;
};

/// Pinned memory from a PinnedPoolTy and its bytes in the budget. Move-only;
/// the memory is freed and the bytes given back when the lease is
/// destroyed or released. The pool's allocator and budget must outlive it.
class PinnedLeaseTy {
public:
  /// An empty lease (holds nothing).
  PinnedLeaseTy() = default;
  PinnedLeaseTy(PinnedLeaseTy &&Other) noexcept;
  PinnedLeaseTy &operator=(PinnedLeaseTy &&Other) noexcept;
  PinnedLeaseTy(const PinnedLeaseTy &) = delete;
  PinnedLeaseTy &operator=(const PinnedLeaseTy &) = delete;
  /// Frees the memory; a failed free is lost (use release() to see it).
  ~PinnedLeaseTy();

  /// The memory, size() bytes; null for an empty lease.
  void *get() const { return Ptr; }
  /// Bytes held (allocated, and reserved in the budget).
  size_t size() const { return Bytes; }
  /// Whether the lease holds memory.
  explicit operator bool() const { return Ptr != nullptr; }
  /// Free the memory, then give its bytes back; the lease becomes empty.
  /// The bytes go back even if the free fails: nothing would retry it.
  Error release();
  /// Give the bytes back without freeing the memory, which went with a
  /// vendor driver that has shut down (TeardownTy): no call reaches it.
  /// The lease becomes empty.
  void abandon();

private:
  friend class PinnedPoolTy;
  PinnedLeaseTy(PinnedAllocatorTy &Allocator, void *Ptr,
                PinnedReservationTy Reservation)
      : Allocator(&Allocator), Ptr(Ptr), Bytes(Reservation.size()),
        Reservation(std::move(Reservation)) {}

  PinnedAllocatorTy *Allocator = nullptr;
  void *Ptr = nullptr;
  size_t Bytes = 0;
  PinnedReservationTy Reservation;
};

/// One request to the pool.
struct PinnedRequestTy {
  /// Bytes asked for.
  size_t Bytes = 0;
  /// What a refusal makes the pool do (see OnRefusalTy).
  OnRefusalTy OnRefusal = OnRefusalTy::Fail;
  /// What the memory is for, named in the budget's refusal.
  llvm::StringRef Purpose;
  /// The holder asking, if it is one of the budget's reclaimable holders:
  /// it is not asked for its own idle memory, nor waited for.
  PinnedReclaimableTy *Self = nullptr;
  /// Shrink and ShrinkThenWait: the least the caller can work with (0: a
  /// ShrinkGranule; never more than Bytes).
  size_t MinBytes = 0;
  /// Again when the caller asks again for what the budget refused it
  /// before (a MakeDo that then waits): the refusal counted then.
  PinnedTryTy Try = PinnedTryTy::First;
};

/// Pinned host memory of one allocator, every byte reserved in one budget.
class PinnedPoolTy {
public:
  /// The shrunk sizes of OnRefusalTy::Shrink are multiples of this.
  static constexpr size_t ShrinkGranule = PinnedBudgetTy::MinBufferSize;

  /// Reserves in \p Budget and allocates with \p Allocator; both must
  /// outlive the pool and its leases.
  PinnedPoolTy(PinnedBudgetTy &Budget, PinnedAllocatorTy &Allocator)
      : Budget(Budget), Allocator(Allocator) {}
  PinnedPoolTy(const PinnedPoolTy &) = delete;
  PinnedPoolTy &operator=(const PinnedPoolTy &) = delete;

  /// Reserve and allocate the memory of \p Request. A refusal is handled as
  /// Request.OnRefusal says; a failed allocation is returned as it is (its
  /// bytes given back). The caller must hold no lock that a holder's
  /// reclaimIdle() takes.
  Expected<PinnedLeaseTy> acquire(const PinnedRequestTy &Request);
  /// acquire() of \p Bytes for \p Purpose, reacting to a refusal as
  /// \p OnRefusal says.
  Expected<PinnedLeaseTy> acquire(size_t Bytes, OnRefusalTy OnRefusal,
                                  llvm::StringRef Purpose,
                                  PinnedReclaimableTy *Self = nullptr) {
    return acquire(PinnedRequestTy{Bytes, OnRefusal, Purpose, Self, 0,
                                   PinnedTryTy::First});
  }

  /// The budget the pool reserves in.
  PinnedBudgetTy &getBudget() { return Budget; }
  const PinnedBudgetTy &getBudget() const { return Budget; }

private:
  /// Reserve \p Bytes, or a smaller share down to \p MinBytes where the
  /// budget refuses (Shrink); \p Try as the budget's reserve() takes it.
  Expected<PinnedReservationTy> reserve(const PinnedRequestTy &Request,
                                        bool Smaller, size_t MinBytes,
                                        PinnedTryTy Try);

  PinnedBudgetTy &Budget;
  PinnedAllocatorTy &Allocator;
};

} // namespace offloadio

#endif // OFFLOADIO_PINNEDPOOL_H

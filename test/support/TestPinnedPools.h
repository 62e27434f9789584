// SPDX-License-Identifier: Apache-2.0
//
// Pinned pools (PinnedPoolTy) over a test's own allocate and free
// functions, for the tests of the pool's holders (staging pools) that care
// about the allocator only. Each pool draws on the budget the test gives,
// or on one of its own without a cap.
#ifndef OFFLOADIO_TEST_TESTPINNEDPOOLS_H
#define OFFLOADIO_TEST_TESTPINNEDPOOLS_H

#include "offloadio/PinnedPool.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

namespace offloadio {
namespace unittest {

/// Allocates one pinned buffer of the given size.
using TestPinnedAllocFnTy = std::function<Expected<void *>(size_t)>;
/// Frees a buffer from TestPinnedAllocFnTy.
using TestPinnedFreeFnTy = std::function<Error(void *)>;

/// A PinnedAllocatorTy over two functions.
class FunctionPinnedAllocatorTy final : public PinnedAllocatorTy {
public:
  FunctionPinnedAllocatorTy(TestPinnedAllocFnTy Alloc, TestPinnedFreeFnTy Free)
      : Alloc(std::move(Alloc)), Free(std::move(Free)) {}
  Expected<void *> allocatePinned(size_t Size) override { return Alloc(Size); }
  Error freePinned(void *Ptr, size_t) override { return Free(Ptr); }

private:
  TestPinnedAllocFnTy Alloc;
  TestPinnedFreeFnTy Free;
};

/// Pools made on demand, kept until this object goes: declare it before
/// the holders that use them.
class TestPinnedPoolsTy {
public:
  /// A pool over \p Alloc and \p Free, reserving in \p Budget (none: a
  /// budget of its own without a cap).
  PinnedPoolTy &make(TestPinnedAllocFnTy Alloc, TestPinnedFreeFnTy Free,
                     PinnedBudgetTy *Budget = nullptr) {
    if (!Budget) {
      Budgets.push_back(std::make_unique<PinnedBudgetTy>(UINT64_MAX));
      Budget = Budgets.back().get();
    }
    Allocators.push_back(std::make_unique<FunctionPinnedAllocatorTy>(
        std::move(Alloc), std::move(Free)));
    Pools.push_back(
        std::make_unique<PinnedPoolTy>(*Budget, *Allocators.back()));
    return *Pools.back();
  }

private:
  std::vector<std::unique_ptr<PinnedBudgetTy>> Budgets;
  std::vector<std::unique_ptr<FunctionPinnedAllocatorTy>> Allocators;
  std::vector<std::unique_ptr<PinnedPoolTy>> Pools;
};

} // namespace unittest
} // namespace offloadio

#endif // OFFLOADIO_TEST_TESTPINNEDPOOLS_H

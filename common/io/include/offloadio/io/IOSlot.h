// SPDX-License-Identifier: Apache-2.0
//
// One of the engine's OMPX_IO_MAX_REQUESTS slots, held by a request or by a
// batch share from submission until it is destroyed.
#ifndef OFFLOADIO_IO_IOSLOT_H
#define OFFLOADIO_IO_IOSLOT_H

#include <atomic>

namespace offloadio {

/// A move-only lease of one slot of a counter of outstanding requests;
/// gives the slot back when reset or destroyed.
class IOSlotTy {
public:
  IOSlotTy() = default;
  /// Hold a slot of \p Count, which the caller has already incremented.
  explicit IOSlotTy(std::atomic<unsigned> &Count) : Count(&Count) {}
  IOSlotTy(IOSlotTy &&Other) noexcept : Count(Other.Count) {
    Other.Count = nullptr;
  }
  IOSlotTy &operator=(IOSlotTy &&Other) noexcept {
    if (this != &Other) {
      reset();
      Count = Other.Count;
      Other.Count = nullptr;
    }
    return *this;
  }
  IOSlotTy(const IOSlotTy &) = delete;
  IOSlotTy &operator=(const IOSlotTy &) = delete;
  ~IOSlotTy() { reset(); }

  /// Give the slot back now, if held.
  void reset() {
    if (Count)
      Count->fetch_sub(1, std::memory_order_relaxed);
    Count = nullptr;
  }

private:
  std::atomic<unsigned> *Count = nullptr;
};

} // namespace offloadio

#endif // OFFLOADIO_IO_IOSLOT_H

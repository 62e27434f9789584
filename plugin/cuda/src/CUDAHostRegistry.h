// SPDX-License-Identifier: Apache-2.0
//
// Registration of host memory with the CUDA driver for the byte-exact
// regions the framework pins.
//
// The driver registers whole pages and refuses to register a page twice
// (CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED); the page bookkeeping that
// reconciles this with byte-exact regions is the common PageRegistryTy
// (offloadio/PageRegistry.h), of which this is the cuMemHostRegister
// backend. A region can consist of several registrations, and the driver
// refuses a cuMemcpyAsync whose host side crosses from one registration into
// another (CUDA_ERROR_INVALID_VALUE): streams ask
// contiguousBytes() and split such copies.
#ifndef OFFLOADIO_CUDA_CUDAHOSTREGISTRY_H
#define OFFLOADIO_CUDA_CUDAHOSTREGISTRY_H

#include "CUDAApi.h"

#include "offloadio/PageRegistry.h"

namespace offloadio {
namespace cuda {

/// The plugin's registrations of host memory. Thread-safe.
class CUDAHostRegistryTy final : private PageLockOpsTy {
public:
  /// \p PageSize is the host page size (a power of two).
  CUDAHostRegistryTy(const CUDAApiTy &Api, size_t PageSize)
      : Api(Api), Pages(*this, PageSize) {}
  CUDAHostRegistryTy(const CUDAHostRegistryTy &) = delete;
  CUDAHostRegistryTy &operator=(const CUDAHostRegistryTy &) = delete;

  /// Register the pages of [HstPtr, HstPtr+Size) not registered yet, count
  /// one more user of every registration they belong to, and return the
  /// device address of \p HstPtr. A context must be current (registrations
  /// are PORTABLE: valid for every context). The same range may be pinned
  /// several times; each pin needs its own unpin.
  Expected<void *> pin(void *HstPtr, size_t Size);

  /// Undo one pin() of exactly [HstPtr, HstPtr+Size); registrations left
  /// without users are unregistered. Unpinning a range that is not pinned
  /// does nothing, so a caller may repeat an unpin that failed.
  Error unpin(void *HstPtr, size_t Size) { return Pages.unpin(HstPtr, Size); }

  /// How many of the \p Size bytes from \p Ptr one driver call may treat as
  /// one host range: up to the end of the registration containing \p Ptr,
  /// or, outside our registrations, up to the next one.
  size_t contiguousBytes(const void *Ptr, size_t Size) const {
    return Pages.contiguousBytes(Ptr, Size);
  }

  /// Number of registrations (for tests and diagnostics).
  size_t numRegistrations() const { return Pages.numChunks(); }

private:
  /// cuMemHostRegister; pages registered already (by the program itself,
  /// say) are foreign.
  Expected<bool> lockPages(void *Ptr, size_t Size) override;
  /// cuMemHostUnregister.
  Error unlockPages(void *Ptr, size_t Size) override;

  const CUDAApiTy &Api;
  PageRegistryTy Pages;
};

} // namespace cuda
} // namespace offloadio

#endif // OFFLOADIO_CUDA_CUDAHOSTREGISTRY_H

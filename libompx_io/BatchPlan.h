// SPDX-License-Identifier: Apache-2.0
//
// The checks of a batch across its operations, which only libompx_io can
// make (it alone sees the whole batch, every device included): a bad
// opcode; a read whose destination overlaps another read's destination or
// a write's source on the same device; file ranges of one file (st_dev and
// st_ino) that overlap where one of the two operations writes. What each
// descriptor is comes from the caller, which asked the kernel once per
// descriptor (offloadio::inspectDescriptor): planning asks nothing more. Refused
// operations fail with EINVAL; the others are left to the plugins, whose
// checks of descriptors and buffers come after these.
//
// A refusal names one operation it conflicts with. Of the operations whose
// range (buffer, or file range) conflicts with this one's, ordered by the
// start of that range and then by index: the first that comes before this
// one in that order, else the first after it. A destination conflict is
// named before a file-range one. Planning takes O(n log n) time for n
// operations, however their ranges overlap.
#ifndef OMPX_IO_BATCHPLAN_H
#define OMPX_IO_BATCHPLAN_H

#include "ompx_io.h"
#include "offloadio/io/TransferCheck.h"

#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

namespace ompxio {

/// Why an operation is refused; Errno 0: it is not.
struct BatchRefusalTy {
  int Errno = 0;
  std::string Reason;
};

/// What the descriptors of a batch are, by number.
using BatchDescriptorsTy =
    std::unordered_map<int, offloadio::DescriptorFactsTy>;

/// The refusals of the \p Count operations \p Ops, one per operation;
/// \p Fds holds the facts of every descriptor that \p Ops name (one it
/// lacks has no file ranges, as a descriptor that is not open).
std::vector<BatchRefusalTy> planBatch(const ompx_io_op_t *Ops, size_t Count,
                                      const BatchDescriptorsTy &Fds);

} // namespace ompxio

#endif // OMPX_IO_BATCHPLAN_H

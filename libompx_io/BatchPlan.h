// SPDX-License-Identifier: Apache-2.0
//
// The checks of a batch across its operations, which only libompx_io can
// make (it alone sees the whole batch, every device included): a bad
// opcode; a read whose destination overlaps another read's destination or
// a write's source on the same device; file ranges of one file (st_dev and
// st_ino) that overlap where one of the two operations writes. Refused
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

#include <cstddef>
#include <string>
#include <vector>

namespace ompxio {

/// Why an operation is refused; Errno 0: it is not.
struct BatchRefusalTy {
  int Errno = 0;
  std::string Reason;
};

/// The refusals of the \p Count operations \p Ops, one per operation.
std::vector<BatchRefusalTy> planBatch(const ompx_io_op_t *Ops, size_t Count);

} // namespace ompxio

#endif // OMPX_IO_BATCHPLAN_H

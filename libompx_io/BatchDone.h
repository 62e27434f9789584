// SPDX-License-Identifier: Apache-2.0
//
// Completion of a batch without a waiting thread: the side of the batch
// registry (Batch.cpp) that the OpenMP-depend API (DependIO.cpp) uses.
#ifndef OMPX_IO_BATCHDONE_H
#define OMPX_IO_BATCHDONE_H

#include "ompx_io.h"

namespace ompxio {

/// Run \p Fn(\p Arg) once every operation of \p Batch, a batch in flight,
/// is done: in the plugin engine thread that finishes the last of them, or
/// before returning when all are done already. \p Fn must not block; it may
/// (and someone must) ompx_io_batch_wait the batch, which then does not
/// wait. False, and no call, when \p Batch is not in flight.
bool notifyBatchDone(ompx_io_batch_t Batch, void (*Fn)(void *), void *Arg);

/// Build the batch registry now rather than at its first use, so that an
/// object built after this call is destroyed before the registry at exit:
/// the detached tasks, which wait there for the batches they still run.
void createBatchRegistry();

} // namespace ompxio

#endif // OMPX_IO_BATCHDONE_H

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * File <-> device transfers ordered with OpenMP dependences: each call
 * creates an OpenMP task that depends on depobj_list, as
 * omp_target_memcpy_async does, and returns without waiting. The task
 * starts its transfer once the tasks it depends on completed, and completes
 * when the data has landed (a detached task, fulfilled by the transfer's
 * completion): tasks that depend on the same objects, target nowait regions
 * among them, run after it; taskwait waits for it. Compile with -fopenmp.
 */
#ifndef OMPX_IO_DEPEND_H
#define OMPX_IO_DEPEND_H

#include <omp.h>

#include "ompx_io.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Read as ompx_target_pread, in a task ordered by depobj_list (depobj_count
 *  objects made with `#pragma omp depobj`; depobj_list may be NULL when
 *  depobj_count is 0). Before the task completes, *result (may be NULL)
 *  gets the bytes read or -1, and *error (may be NULL) 0 or the errno; a
 *  failure with error NULL is printed on stderr. Returns 0 when the task
 *  was created, or -1 with errno EINVAL for a negative depobj_count or a
 *  NULL depobj_list with depobj_count > 0. */
int ompx_target_pread_depend(int fd, void *device_buf, size_t count,
                             off_t offset, int device_num, ssize_t *result,
                             int *error, int depobj_count,
                             omp_depend_t *depobj_list);
/** Write as ompx_target_pwrite, in a task; as ompx_target_pread_depend. */
int ompx_target_pwrite_depend(int fd, const void *device_buf, size_t count,
                              off_t offset, int device_num, ssize_t *result,
                              int *error, int depobj_count,
                              omp_depend_t *depobj_list);
/** Run nops operations as one batch (ompx_io_batch_submit) in a task
 *  ordered by depobj_list; the task completes when every operation is
 *  done, after their results and errors were written into ops (which must
 *  stay valid until then). *failed (may be NULL) gets the number of
 *  operations that failed, or -1 when the batch was refused as a whole
 *  (then each operation's result is -1 and its error the batch's errno;
 *  with failed NULL, a line on stderr says why).
 *  Returns 0 when the task was created, or -1 with errno EINVAL as
 *  ompx_target_pread_depend, or for ops NULL or nops 0. */
int ompx_io_batch_submit_depend(ompx_io_op_t *ops, size_t nops,
                                ssize_t *failed, int depobj_count,
                                omp_depend_t *depobj_list);

#ifdef __cplusplus
}
#endif

#endif /* OMPX_IO_DEPEND_H */

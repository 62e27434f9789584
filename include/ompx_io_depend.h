/* SPDX-License-Identifier: Apache-2.0 */
/*
 * File <-> device transfers ordered with OpenMP dependences: each call
 * creates an OpenMP task that depends on depobj_list, as
 * omp_target_memcpy_async does, and returns without waiting. The task
 * starts its transfer once the tasks it depends on completed, and completes
 * when the data has landed (a detached task, fulfilled by the transfer's
 * completion): tasks that depend on the same objects, target nowait regions
 * among them, run after it; taskwait waits for it, from any number of
 * threads of a team at once (the tasks are untied: whichever thread of the
 * team waits may run them). Compile with -fopenmp.
 *
 * Descriptors are captured at the call, as ompx_target_pread_async does at
 * submission: the call duplicates them, and the task transfers from and to
 * the files they named then, even if the program closes them, or another
 * open takes their numbers, before the task starts. Each task holds its
 * duplicate until it has submitted its transfer. Messages name the
 * program's descriptors.
 *
 * Exit: when a program returns from main or calls exit with such tasks not
 * complete, the exiting thread runs the tasks it created that did not
 * complete (those not yet started among them), as a taskwait at the end of
 * main would, then every transfer started finishes: the data lands before
 * the library and libomp shut down. Tasks that exit cannot run (created by
 * another thread that is still running, or by a task that did not wait for
 * them) never start: nothing of theirs is transferred, and a warning on
 * stderr counts them. _exit and quick_exit run nothing.
 *
 * The calls set errno and ompx_io_last_error only when they return -1. What
 * a task does, on whichever thread runs it, leaves that thread's errno and
 * ompx_io_last_error as they were: its outcome goes to *result and *error
 * (or the batch's operations).
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
 *  depobj_count is 0), from the file fd names at the call. Before the task
 *  completes, *result (may be NULL) gets the bytes read or -1, and *error
 *  (may be NULL) 0 or the errno; a failure with error NULL is printed on
 *  stderr. Returns 0 when the task was created, or -1 with errno: EINVAL
 *  for a negative depobj_count, a NULL depobj_list with depobj_count > 0 or
 *  a NULL depend object; EBADF when fd is not open (EMFILE when no
 *  descriptor is left to duplicate it); ENOSYS without libomp; ENOMEM when
 *  libomp cannot allocate the task. Every other error, of the descriptor
 *  (not open for reading, a pipe) as of the other arguments, is the task's:
 *  *result -1 and *error. */
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
 *  stay valid until then; the task submits a copy, and ops keeps its
 *  descriptors). The operations' descriptors are captured at the call, one
 *  duplicate per descriptor: an operation whose fd is not open at the call
 *  fails alone with EBADF (EMFILE when no descriptor is left), as
 *  ompx_io_batch_submit fails an operation with a bad fd, and the others
 *  run. *failed (may be NULL) gets the number of operations that failed,
 *  or -1 when the batch was refused as a whole (then each operation's
 *  result is -1 and its error the batch's errno; with failed NULL, a line
 *  on stderr says why).
 *  Returns 0 when the task was created, or -1 with errno EINVAL for ops
 *  NULL, nops 0 or a bad depend list, ENOSYS or ENOMEM, as
 *  ompx_target_pread_depend. */
int ompx_io_batch_submit_depend(ompx_io_op_t *ops, size_t nops,
                                ssize_t *failed, int depobj_count,
                                omp_depend_t *depobj_list);

#ifdef __cplusplus
}
#endif

#endif /* OMPX_IO_DEPEND_H */

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ompx_io: file <-> device transfers for OpenMP offload programs, and the
 * offload-io introspection calls. Link with -lompx_io of an installed
 * offload-io (<prefix>/lib), which also loads offload-io's plugins.
 *
 * device_num is an OpenMP device number, as for omp_target_alloc; the
 * initial device (omp_get_initial_device()) means plain host memory.
 * Semantics follow pread/pwrite, except that the full count is transferred
 * unless end of file (for writes: the file size limit) comes first. Errors
 * return -1 and set errno, in the order Linux checks them, the same on
 * every device (docs/errors-and-env.md lists the order);
 * ompx_io_last_error() then says what failed and why.
 *
 * How this API grows without a new soname (libompx_io.so.N): functions
 * are added, never changed or removed, and the structs below never change
 * layout (the build pins each one), because programs compiled against an
 * older header pass them to a newer library. New data comes through new
 * functions: per item (one path, one setting) where the data is a list,
 * or through a new struct whose first member is its size, which the
 * caller sets to its sizeof and the library fills up to. So
 * OMPX_IO_NUM_PATHS stays 4, the paths that ompx_io_stats_t holds: a path
 * added later is numbered from 4 on, and its counters come through a
 * per-path call added with it; code written for four paths keeps working
 * as it is. A call that the offload-io plugin serving a device is too old
 * to answer fails with ENOSYS, and ompx_io_last_error() names the plugin
 * and the call it lacks.
 */
#ifndef OMPX_IO_H
#define OMPX_IO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* llvm_omp_target_lock_mem, llvm_omp_target_unlock_mem and
 * ompx_target_lock_info. */
#include "ompx_lock.h"

#ifdef __cplusplus
extern "C" {
#endif

/** An asynchronous transfer in flight: an opaque handle (a request number,
 *  not memory), never NULL for a submitted request and never reused. */
typedef struct ompx_io_request *ompx_io_request_t;

/** Read count bytes of fd at offset into device memory. Returns the bytes
 *  read (short only at end of file), or -1 with errno. As with pread, the
 *  buffer past the bytes read keeps its contents, O_DIRECT or not.
 *
 *  Device memory is omp_target_alloc's, or memory the vendor runtime
 *  allocated outside OpenMP on the same device (cudaMalloc, PyTorch's or
 *  CuPy's allocators, hipMalloc), which every ompx_* transfer call checks
 *  with the vendor's pointer query: a range past the end of the vendor's
 *  allocation, and memory of another device or CUDA context, fail with
 *  EFAULT, and ompx_io_last_error() says whose memory it is. Only frees
 *  through OpenMP wait for transfers in flight: freeing such memory while
 *  a transfer uses it is the caller's responsibility, as with any
 *  buffer. */
ssize_t ompx_target_pread(int fd, void *device_buf, size_t count, off_t offset,
                          int device_num);
/** Write count bytes of device memory to fd at offset. With O_APPEND on
 *  fd the offset is ignored and the buffer is appended whole, in order;
 *  appends to one device land in the order they were submitted. */
ssize_t ompx_target_pwrite(int fd, const void *device_buf, size_t count,
                           off_t offset, int device_num);
/** Start a read; arguments are captured and fd is duplicated, so both may
 *  change or close after the call. Returns 0, or -1 with errno for errors
 *  found at submission. device_buf must stay allocated until the transfer
 *  is done; omp_target_free of it before then waits until it is. */
int ompx_target_pread_async(int fd, void *device_buf, size_t count,
                            off_t offset, int device_num,
                            ompx_io_request_t *request);
/** Start a write; as ompx_target_pread_async. */
int ompx_target_pwrite_async(int fd, const void *device_buf, size_t count,
                             off_t offset, int device_num,
                             ompx_io_request_t *request);
/** 1 when done, 0 when pending, -1 with errno on error: EINVAL when
 *  request is NULL or not in flight (see ompx_io_wait). */
int ompx_io_test(ompx_io_request_t request);
/** Wait; returns the bytes transferred or -1 with errno. Releases the
 *  request: from the moment ompx_io_wait starts, the handle is no longer in
 *  flight, and a second ompx_io_wait or ompx_io_test on it (or on any handle
 *  no submission returned) fails with -1 and errno EINVAL, touching nothing;
 *  with OMPX_IO_INFO or OFFLOADIO_INFO set, a line on stderr says so.
 *  Requests never waited for are finished and released when the program
 *  exits: exit waits for their transfers to complete and discards their
 *  results (with OMPX_IO_INFO or OFFLOADIO_INFO set, a line on stderr
 *  counts them). */
ssize_t ompx_io_wait(ompx_io_request_t request);

/** The direction of a batch operation. */
enum ompx_io_opcode {
  OMPX_IO_OP_READ = 0,  /**< File to device_buf, as ompx_target_pread. */
  OMPX_IO_OP_WRITE = 1  /**< device_buf to file, as ompx_target_pwrite. */
};

/** One operation of a batch. The caller fills the arguments; the results
 *  are written when the batch completes (ompx_io_batch_wait). */
typedef struct ompx_io_op {
  int opcode;       /**< An enum ompx_io_opcode. */
  int fd;           /**< The file; duplicated at submission. */
  void *device_buf; /**< Memory of device_num (read-only for writes). */
  size_t count;     /**< Bytes. */
  off_t offset;     /**< File offset. */
  int device_num;   /**< OpenMP device number; the initial device is host
                         memory. Any mix of devices and files per batch. */
  ssize_t result;   /**< Out: bytes transferred (short only at end of file,
                         as pread), or -1. */
  int error;        /**< Out: 0, or the errno of a failed operation. */
} ompx_io_op_t;

/** A batch in flight: an opaque handle, never NULL for a submitted batch
 *  and never reused. */
typedef struct ompx_io_batch *ompx_io_batch_t;

/** Start nops operations as one batch. Each device's share of the batch
 *  counts as one request against that device's OMPX_IO_MAX_REQUESTS,
 *  however many operations it holds; the engine splits large operations
 *  and reads or writes small ones whose file ranges touch with one system
 *  call. ops must stay valid until ompx_io_batch_wait, which writes the
 *  results there. An operation refused at submission (bad opcode, fd or
 *  buffer; its destination overlapping another operation's buffer; its file
 *  range overlapping another operation's where one of them writes) gets its
 *  error without touching the others, which still run: of two reads whose
 *  destinations overlap both fail, of a read into a write's source the read
 *  fails, of two operations whose file ranges overlap both fail. Every
 *  device's request is reserved before any operation starts, the initial
 *  device's included (those run during the call, as host transfers). Every
 *  descriptor is checked before any is duplicated: a closed one fails its
 *  operations with EBADF. A device that cannot serve at all (the parent's,
 *  in a forked child: ENODEV) fails its own operations; the others run.
 *  Returns 0, or -1 with errno when nothing was submitted (*batch is then
 *  NULL): EINVAL for ops or batch NULL or nops 0, EAGAIN when a device has
 *  no request left. */
int ompx_io_batch_submit(ompx_io_op_t *ops, size_t nops,
                         ompx_io_batch_t *batch);
/** 1 when every operation is done, 0 while some are pending, -1 with errno
 *  EINVAL when batch is NULL or not in flight. */
int ompx_io_batch_test(ompx_io_batch_t batch);
/** Wait for every operation of batch and write each one's result and
 *  error into the array given to ompx_io_batch_submit. Returns the number
 *  of operations that failed (0: all succeeded; otherwise
 *  ompx_io_last_error() names the failed operations, the first eight by
 *  index, opcode, fd, count, offset, device and reason, then "and N more"),
 *  or -1 with errno EINVAL when batch is NULL or not in flight. A small
 *  operation read or written with its neighbours in one system call that
 *  failed partway succeeds when the failure came after its last byte, as
 *  its own pread or pwrite would have. Releases the batch, as ompx_io_wait
 *  does; batches never waited for are finished at exit. */
ssize_t ompx_io_batch_wait(ompx_io_batch_t batch);

/** The transfer paths. */
enum ompx_io_path {
  OMPX_IO_PATH_DIRECT = 0,   /**< IO straight into host-addressable memory. */
  OMPX_IO_PATH_FASTPATH = 1, /**< Vendor storage <-> GPU DMA (cuFile, AIS). */
  OMPX_IO_PATH_STAGED = 2,   /**< Pinned bounce buffers and async copies. */
  OMPX_IO_PATH_HOST = 3,     /**< Initial device: plain pread/pwrite. */
  OMPX_IO_NUM_PATHS = 4
};

/** Per-device counters. Its layout is fixed: it holds the paths numbered
 *  below OMPX_IO_NUM_PATHS (see the growth rule at the top). */
typedef struct ompx_io_stats {
  uint64_t bytes_read[OMPX_IO_NUM_PATHS];    /**< By path. */
  uint64_t bytes_written[OMPX_IO_NUM_PATHS]; /**< By path. */
  uint64_t reads[OMPX_IO_NUM_PATHS];         /**< Requests by path. */
  uint64_t writes[OMPX_IO_NUM_PATHS];        /**< Requests by path. */
  uint64_t fallbacks;           /**< Requests that left their first path. */
  char last_fallback[160];      /**< Why the last fallback happened. */
} ompx_io_stats_t;

/** Name of a path ("direct", "fastpath", "staged", "host"). */
const char *ompx_io_path_name(int path);
/** Copy the counters of device_num into *stats. 0, or -1 with errno. On
 *  the initial device: its own transfers, on OMPX_IO_PATH_HOST. */
int ompx_io_get_stats(int device_num, ompx_io_stats_t *stats);
/** Which paths can serve device_num: bit (1 << path) set in *mask; for each
 *  unavailable path a line "<path>: <reason>" goes into why (may be NULL). */
int ompx_io_paths(int device_num, unsigned *mask, char *why, size_t why_len);

/** Which plugin serves an OpenMP device, and the device's number there. */
typedef struct ompx_io_device_ref {
  char target[32]; /**< The plugin's target, as its file is named: "cuda",
                        "amdgpu", "x86_64"; "host" for the initial device. */
  int32_t local;   /**< The device's number in its plugin, which is the
                        vendor's (the CUDA device ordinal, the index of the
                        HSA GPU agent); -1 for the initial device. */
} ompx_io_device_ref_t;

/** Describe device_num into *ref: how a program that holds memory of a
 *  vendor device (a CUDA ordinal) finds the OpenMP device that serves it.
 *  0, or -1 with errno: EINVAL when ref is NULL; ENODEV when no offload-io
 *  plugin serves device_num. */
int ompx_io_device_ref(int device_num, ompx_io_device_ref_t *ref);

/** The process's budget of host memory that the offload-io plugins pin
 *  for their own buffers: staging and small-download buffers, file-engine
 *  rings, host-stream captures, AMDGPU kernel-argument arenas. One account for
 * all plugins of a process, capped by OFFLOADIO_PINNED_MAX. */
typedef struct ompx_pinned_budget {
  uint64_t cap;      /**< Most bytes the plugins may hold. */
  uint64_t used;     /**< Bytes held now. */
  uint64_t peak;     /**< Most bytes held at once so far. */
  uint64_t refusals; /**< Buffers refused for lack of room. */
} ompx_pinned_budget_t;

/** Copy the process's pinned-memory budget into *budget. 0, or -1 with
 *  errno: EINVAL when budget is NULL; ENODEV when no offload-io plugin is
 *  loaded. */
int ompx_io_get_pinned_budget(ompx_pinned_budget_t *budget);

/** What this process takes of its node: the CPUs of its affinity mask,
 *  capped at its share of the node when a launcher says it is one of
 *  several ranks there, and the defaults derived from that. Each *_origin
 *  says where the value in force came from, in words: the environment, or
 *  the default and what it was derived from. Longer texts are cut to fit,
 *  always NUL-terminated. */
typedef struct ompx_io_process_budget {
  uint32_t cpus_online;  /**< Online CPUs of the node. */
  uint32_t cpus_in_mask; /**< CPUs in the process's affinity mask. */
  uint32_t local_ranks;  /**< Processes of the job on this node; 1 when no
                              launcher variable says. */
  int32_t local_rank;    /**< This process's index among them, -1 when
                              unknown. */
  uint32_t cpus;         /**< CPUs budgeted to the process. */
  uint32_t io_threads;   /**< File workers for each device in use, in one
                              pool per plugin, at most the process's
                              CPUs in all (OMPX_IO_THREADS). */
  uint32_t io_threads_running; /**< Workers of the pool started: 0 before
                                    the first transfer, more as more
                                    devices are used. */
  uint32_t copy_threads; /**< Copy helpers for each device in use, in one
                              pool per plugin, at most the process's
                              CPUs - 1 in all (OFFLOADIO_COPY_THREADS). */
  uint64_t pinned_max;   /**< The process's pinned-memory cap
                              (OFFLOADIO_PINNED_MAX). */
  char ranks_variable[32];       /**< The launcher variable local_ranks came
                                      from, "" when none. */
  char cpus_origin[128];         /**< Where cpus came from. */
  char io_threads_origin[160];   /**< Where io_threads came from. */
  char copy_threads_origin[160]; /**< Where copy_threads came from. */
  char pinned_max_origin[160];   /**< Where pinned_max came from. */
} ompx_io_process_budget_t;

/** Copy the process's budget into *budget. 0, or -1 with errno: EINVAL
 *  when budget is NULL; ENODEV when no offload-io plugin is loaded. */
int ompx_io_get_process_budget(ompx_io_process_budget_t *budget);

/** Where the value in force of an engine setting comes from. */
enum ompx_io_setting_source {
  OMPX_IO_SETTING_DEFAULT = 0,     /**< Unset: the default. */
  OMPX_IO_SETTING_ENVIRONMENT = 1, /**< The environment's valid value. */
  OMPX_IO_SETTING_INVALID = 2      /**< Set but refused (a warning on
                                        stderr says so): the default. */
};

/** One setting of the file engine (an OMPX_IO_* variable), as the engine
 *  reads it. Longer texts are cut to fit, always NUL-terminated. */
typedef struct ompx_io_setting {
  char name[32];          /**< The variable, e.g. "OMPX_IO_THREADS". */
  char value[64];         /**< The value in force ("8M", "auto", "on"). */
  char default_value[64]; /**< The default, in the same form. */
  char env_value[128];    /**< The environment's text, "" when unset. */
  char valid[128];        /**< The values the engine accepts. */
  int source;             /**< An enum ompx_io_setting_source. */
} ompx_io_setting_t;

/** The file engine's settings in force: what an engine that starts now
 *  reads from the environment (each device's engine reads them once, at its
 *  start). Fills the first min(capacity, total) entries of settings and sets
 *  *count to the total; settings may be NULL when capacity is 0. Reading an
 *  invalid value prints its warning, once per process. 0, or -1 with errno:
 *  EINVAL when count is NULL, or settings is NULL and capacity is not 0;
 *  ENODEV when no offload-io plugin is loaded. */
int ompx_io_get_settings(ompx_io_setting_t *settings, size_t capacity,
                         size_t *count);

/** How a setting's value is written (ompx_io_setting_info_t.kind). */
enum ompx_io_setting_kind {
  OMPX_IO_KIND_BOOL = 0,      /**< true/false, on/off, yes/no, 1/0. */
  OMPX_IO_KIND_INT = 1,       /**< An integer in bounds (0x hex allowed). */
  OMPX_IO_KIND_SIZE = 2,      /**< A size in bounds, K/M/G allowed. */
  OMPX_IO_KIND_CHOICE = 3,    /**< One of the words of valid. */
  OMPX_IO_KIND_INFO_MASK = 4, /**< Any integer, taken as a 32-bit mask. */
  OMPX_IO_KIND_PATH = 5       /**< A file name (unset or empty: none). */
};

/** Who reads a setting (ompx_io_setting_info_t.layer). */
enum ompx_io_setting_layer {
  OMPX_IO_LAYER_PLUGIN = 0,    /**< Every plugin, once at load. */
  OMPX_IO_LAYER_DEVICE = 1,    /**< Every plugin, once per device. */
  OMPX_IO_LAYER_IO_ENGINE = 2, /**< Each device's file engine at its start. */
  OMPX_IO_LAYER_HOST = 3,      /**< The host plugin only. */
  OMPX_IO_LAYER_CUDA = 4,      /**< The CUDA plugin only. */
  OMPX_IO_LAYER_AMDGPU = 5     /**< The AMDGPU plugin only. */
};

/** One setting of offload-io, any layer's, as it reads now. Its first
 *  member is its size (see the growth rule at the top): later versions
 *  add members at the end. Longer texts are cut to fit, always
 *  NUL-terminated. */
typedef struct ompx_io_setting_info {
  size_t size;            /**< In settings[0]: the caller's
                               sizeof(ompx_io_setting_info_t). Out, in each
                               entry filled: the bytes the library filled. */
  char name[64];          /**< The variable, e.g.
                               "LIBOMPTARGET_AMDGPU_AIS_ANY_FILESYSTEM". */
  char value[64];         /**< The value in force as read ("8M", "auto",
                               "on"): the default unless origin is
                               OMPX_IO_SETTING_ENVIRONMENT. */
  char default_value[64]; /**< The default, in the same form; where the
                               default is derived at run time (doc says
                               so), as derived now where the plugin knows
                               it, else the declared one. */
  char env_value[128];    /**< The environment's text, "" when unset. */
  char valid[128];        /**< The values accepted, in words. */
  char doc[192];          /**< One line: what it does. */
  char layer_name[16];    /**< "plugin", "device", "io-engine", "host",
                               "cuda" or "amdgpu". */
  int origin;             /**< An enum ompx_io_setting_source. */
  int kind;               /**< An enum ompx_io_setting_kind. */
  int layer;              /**< An enum ompx_io_setting_layer. */
} ompx_io_setting_info_t;

/** Every setting of offload-io (every layer's, not only the engine's), as
 *  the offload-io plugin serving device_num reads it now; for the initial
 *  device, as any offload-io plugin of the process does. A variable read
 *  by two backends with their own bounds (LIBOMPTARGET_STACK_SIZE) comes
 *  once per backend, each with its layer. Fills the first
 *  min(capacity, total) entries of settings and sets *count to the total;
 *  settings may be NULL when capacity is 0. The caller sets settings[0].size
 *  to sizeof(ompx_io_setting_info_t): the entries are that far apart, and
 *  each entry filled gets the bytes filled in its size. Reading an invalid
 *  value prints its warning, once per process. 0, or -1 with errno: EINVAL
 *  when count is NULL, settings is NULL and capacity is not 0, or
 *  settings[0].size is less than this first version's size; ENODEV when no
 *  offload-io plugin serves device_num (or, for the initial device, none is
 *  loaded); ENOSYS when that plugin is too old to answer
 *  (ompx_io_last_error() names it and the call it lacks). */
int ompx_io_get_all_settings(int device_num, ompx_io_setting_info_t *settings,
                             size_t capacity, size_t *count);

/** Host <-> device copy paths counted by the plugins. PINNED: host memory
 *  locked by the program (llvm_omp_target_lock_mem, ompx_lock.h). STAGED
 *  (named "staged-to-device", "staged-from-device"): memory that is not
 *  locked, copied without locking it: through the plugin's bounce buffers,
 *  or, for small uploads (and small downloads when no small-download buffer
 *  is free), by the vendor's own pageable copy. LOCKED: memory locked for
 *  the copy only (OFFLOADIO_PAGEABLE_PATH=lock). */
enum ompx_copy_path {
  OMPX_COPY_PINNED_TO_DEVICE, OMPX_COPY_PINNED_FROM_DEVICE,
  OMPX_COPY_STAGED_TO_DEVICE, OMPX_COPY_STAGED_FROM_DEVICE,
  OMPX_COPY_LOCKED_TO_DEVICE, OMPX_COPY_LOCKED_FROM_DEVICE,
  OMPX_COPY_DEVICE_TO_DEVICE, OMPX_COPY_NUM_PATHS
};

/** Bytes and copies per ompx_copy_path of device_num. 0, or -1 with errno. */
int ompx_target_copy_counters(int device_num,
                              uint64_t bytes[OMPX_COPY_NUM_PATHS],
                              uint64_t copies[OMPX_COPY_NUM_PATHS]);
/** Name of a copy path. */
const char *ompx_copy_path_name(int path);

/** The message of the last failed ompx_* call of this thread: the call,
 *  its device, and the reason as the plugin or library found it (e.g. which
 *  plugin library serves a device that is not offload-io's). "" when no
 *  call of this thread has failed yet. A successful call leaves it as it
 *  is, as errno. The text belongs to the thread and stays valid until its
 *  next failed ompx_* call. */
const char *ompx_io_last_error(void);

/** The version of the libompx_io the program runs with, "MAJOR.MINOR.PATCH";
 *  *major, *minor and *patch get its parts (each may be NULL). Compare with
 *  OFFLOADIO_VERSION_STRING of ompx_version.h, the headers' version. */
const char *ompx_io_version(int *major, int *minor, int *patch);

#ifdef __cplusplus
}
#endif

#endif /* OMPX_IO_H */

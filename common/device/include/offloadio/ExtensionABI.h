// SPDX-License-Identifier: Apache-2.0
//
// The offload-io extension ABI between a plugin and libompx_io: the
// extension calls (__tgt_rtl_ompx_*) that each plugin implements beside
// libomptarget's __tgt_rtl_* entry points, and the one entry point through
// which libompx_io finds them, __tgt_rtl_ompx_extensions, which fills a
// versioned table of them. common/device/src/CApi*.cpp define the calls against
// these declarations and libompx_io takes its function-pointer types from
// them, so the two sides cannot disagree on a signature. Plain C types
// only, and usable from C: libompx_io, the tools and the tests include this
// without the framework (offloadio/ExtensionLookup.h finds an object's
// table). The calls are hidden: a plugin exports the discovery entry point
// alone, and every caller reaches the calls through its table.
//
// Every extension returns 0 or an errno value and never prints an error
// (libompx_io reports through errno and ompx_io_last_error), except where
// said otherwise. The message of a failure stays with the calling thread
// until __tgt_rtl_ompx_take_last_error collects it.
//
// The rules of the table, which let a plugin and a libompx_io of different
// builds work together:
//  - The table starts with its size in bytes and its version, then one
//    function pointer per call, in the order of OFFLOADIO_EXTENSIONS.
//  - A call is added at the end of OFFLOADIO_EXTENSIONS, and the version
//    goes up by one; an entry is never removed, reordered or given another
//    signature (a changed call is a new entry under a new name).
//  - The caller sets Size to its own sizeof and Version to its own version;
//    the plugin copies min(caller's size, its own) bytes of its table and
//    answers the bytes it filled in Size and its own version in Version.
//    So an older reader gets the entries it knows, and a newer reader
//    finds the entries past the plugin's size null: it uses what the size
//    covers and names what is missing (libompx_io/PluginDirectory.cpp).
//  - The structs the calls pass are those of include/ompx_io.h, whose
//    layouts never change (common/device/src/ExtensionABI.cpp pins them).
//  - libompx_io finds the plugins by this entry point, in whatever object
//    of the process exports it: not by file name.
#ifndef OFFLOADIO_EXTENSIONABI_H
#define OFFLOADIO_EXTENSIONABI_H

#include "ompx_io.h"

#include <stdint.h>

/// The discovery entry point's visibility: the one symbol of the extension
/// ABI that a plugin exports.
#define OFFLOADIO_EXTENSION_API __attribute__((visibility("default")))
/// The calls' visibility: reached through the table only, never exported
/// (so no program or library can bind to one by name).
#define OFFLOADIO_EXTENSION_CALL __attribute__((visibility("hidden")))

#ifdef __cplusplus
extern "C" {
#endif

/// The local number of OpenMP device \p GlobalId, initialised, or -1 when
/// the device is not this plugin's.
OFFLOADIO_EXTENSION_CALL int32_t
__tgt_rtl_ompx_resolve_device(int32_t GlobalId);

/// Submit a read (\p IsWrite 0) or write of \p Count bytes of \p Fd at
/// \p Offset to or from \p DevPtr on local device \p DeviceId; the plugin's
/// request goes to \p *Request.
OFFLOADIO_EXTENSION_CALL int32_t __tgt_rtl_ompx_io_submit(
    int32_t DeviceId, int32_t IsWrite, int32_t Fd, void *DevPtr, uint64_t Count,
    int64_t Offset, void **Request);

/// 1 when \p Request is done, 0 while it is pending.
OFFLOADIO_EXTENSION_CALL int32_t __tgt_rtl_ompx_io_test(void *Request);

/// Wait for \p Request, store its byte count in \p *Bytes and release it.
OFFLOADIO_EXTENSION_CALL int32_t __tgt_rtl_ompx_io_wait(void *Request,
                                                        int64_t *Bytes);

/// Reserve one of local device \p DeviceId's OMPX_IO_MAX_REQUESTS for a
/// share of a batch: the empty share goes to \p *Batch; EAGAIN when none
/// is left. A share is started once, or released unstarted.
OFFLOADIO_EXTENSION_CALL int32_t
__tgt_rtl_ompx_io_batch_create(int32_t DeviceId, void **Batch);

/// Start the \p Count operations \p Ops (their device_num, result and
/// error are not read) in \p Batch, a share of local device \p DeviceId
/// from __tgt_rtl_ompx_io_batch_create. An operation refused at submission
/// gets its error at the wait; the others run.
OFFLOADIO_EXTENSION_CALL int32_t __tgt_rtl_ompx_io_batch_start(
    int32_t DeviceId, void *Batch, const ompx_io_op_t *Ops, uint64_t Count);

/// 1 when every operation of \p Batch is done, 0 while some are pending.
OFFLOADIO_EXTENSION_CALL int32_t __tgt_rtl_ompx_io_batch_test(void *Batch);

/// Run \p Fn(\p Arg) once every operation of \p Batch (started) is done:
/// by the engine thread that finishes the last of them, as the last thing
/// the engine does with the share, or at once, in the calling thread, when
/// all are done. \p Fn must not block; it may wait for and release the
/// share. One notification per share (EINVAL for a second).
OFFLOADIO_EXTENSION_CALL int32_t
__tgt_rtl_ompx_io_batch_notify(void *Batch, void (*Fn)(void *), void *Arg);

/// Wait for \p Batch and write each operation's result and error into
/// \p Ops, the \p Count operations given to __tgt_rtl_ompx_io_batch_start,
/// in order. The share stays until __tgt_rtl_ompx_io_batch_release.
OFFLOADIO_EXTENSION_CALL int32_t __tgt_rtl_ompx_io_batch_wait(void *Batch,
                                                              ompx_io_op_t *Ops,
                                                              uint64_t Count);

/// After the wait: the message of operation \p Index's failure into \p Buf
/// (\p Len bytes, cut to fit, NUL-terminated); its full length, 0 when the
/// operation did not fail.
OFFLOADIO_EXTENSION_CALL uint64_t __tgt_rtl_ompx_io_batch_message(
    void *Batch, uint64_t Index, char *Buf, uint64_t Len);

/// Release \p Batch, waiting for operations still in flight, and give its
/// request back.
OFFLOADIO_EXTENSION_CALL void __tgt_rtl_ompx_io_batch_release(void *Batch);
/// Run \p Fn(\p Arg) once \p Request is done: by the engine thread that
/// completes it, as the last thing the engine does with it, or at once, in
/// the calling thread, when it is done already. \p Fn must not block; it may
/// (and the owner must, some time) take the result with
/// __tgt_rtl_ompx_io_wait, which releases the request; from this call on,
/// only \p Fn may. One notification per request (EINVAL for a second).
OFFLOADIO_EXTENSION_CALL int32_t __tgt_rtl_ompx_io_notify(void *Request,
                                                          void (*Fn)(void *),
                                                          void *Arg);

/// The file engine counters of local device \p DeviceId.
OFFLOADIO_EXTENSION_CALL int32_t __tgt_rtl_ompx_io_stats(int32_t DeviceId,
                                                         ompx_io_stats_t *Out);

/// The paths local device \p DeviceId can use, as bits (1 << path) in
/// \p *Mask; one line per unavailable path into \p Why (may be null).
OFFLOADIO_EXTENSION_CALL int32_t __tgt_rtl_ompx_io_paths(int32_t DeviceId,
                                                         uint32_t *Mask,
                                                         char *Why,
                                                         uint64_t WhyLen);

/// The file engine's settings as IOConfigTy::fromEnv reads them now: the
/// first min(\p Capacity, total) into \p Out, the total into \p *Count.
OFFLOADIO_EXTENSION_CALL int32_t __tgt_rtl_ompx_io_settings(
    ompx_io_setting_t *Out, uint64_t Capacity, uint64_t *Count);

/// The process's pinned-memory budget, into \p *Out.
OFFLOADIO_EXTENSION_CALL int32_t
__tgt_rtl_ompx_pinned_budget(ompx_pinned_budget_t *Out);

/// The process's CPU share, thread counts and pinned cap, with their
/// origins, into \p *Out.
OFFLOADIO_EXTENSION_CALL int32_t
__tgt_rtl_ompx_process_budget(ompx_io_process_budget_t *Out);

/// 1 and \p *Out filled when \p Ptr is inside a region locked in the
/// plugin's map, 0 when it is not.
OFFLOADIO_EXTENSION_CALL int32_t
__tgt_rtl_ompx_lock_info(const void *Ptr, ompx_lock_region_t *Out);

/// Lock \p Size bytes at \p Ptr for local device \p DeviceId, as
/// __tgt_rtl_data_lock does for a global device number, its
/// device-accessible address into \p *Locked (null on failure).
OFFLOADIO_EXTENSION_CALL int32_t __tgt_rtl_ompx_lock_mem(int32_t DeviceId,
                                                         void *Ptr,
                                                         uint64_t Size,
                                                         void **Locked);

/// Release one lock taken at \p Ptr for local device \p DeviceId, as
/// __tgt_rtl_data_unlock does for a global device number.
OFFLOADIO_EXTENSION_CALL int32_t __tgt_rtl_ompx_unlock_mem(int32_t DeviceId,
                                                           void *Ptr);

/// Bytes and copies per ompx_copy_path of local device \p DeviceId.
OFFLOADIO_EXTENSION_CALL int32_t __tgt_rtl_ompx_copy_counters(int32_t DeviceId,
                                                              uint64_t *Bytes,
                                                              uint64_t *Copies);

/// Copy the message of this thread's last failed extension call into
/// \p Buf (\p Len bytes, cut to fit, NUL-terminated) and forget it; the
/// message's full length, 0 when there is none. Collected right after the
/// failing call, so a message never outlives the failure it explains.
OFFLOADIO_EXTENSION_CALL uint64_t __tgt_rtl_ompx_take_last_error(char *Buf,
                                                                 uint64_t Len);

/// Every setting of Settings.def as this plugin reads it now: the first
/// min(\p Capacity, total) into \p Out, whose entries are \p EntrySize
/// bytes apart (the caller's sizeof(ompx_io_setting_info_t), at least this
/// first version's): each gets min(\p EntrySize, the plugin's size) bytes
/// and that number in its size; the total into \p *Count. EINVAL for a
/// null \p Count, a null \p Out with a nonzero \p Capacity, or an
/// \p EntrySize below the first version's.
OFFLOADIO_EXTENSION_CALL int32_t
__tgt_rtl_ompx_settings_info(ompx_io_setting_info_t *Out, uint64_t EntrySize,
                             uint64_t Capacity, uint64_t *Count);

#ifdef __cplusplus
} // extern "C"
#endif

/// Every extension as X(Field, Symbol), in the order of the table's entries:
/// the one list of what an offload-io plugin answers beyond libomptarget's
/// entry points. Append only (see the rules above).
#define OFFLOADIO_EXTENSIONS(X)                                                \
  X(ResolveDevice, __tgt_rtl_ompx_resolve_device)                              \
  X(IOSubmit, __tgt_rtl_ompx_io_submit)                                        \
  X(IOTest, __tgt_rtl_ompx_io_test)                                            \
  X(IOWait, __tgt_rtl_ompx_io_wait)                                            \
  X(IOBatchCreate, __tgt_rtl_ompx_io_batch_create)                             \
  X(IOBatchStart, __tgt_rtl_ompx_io_batch_start)                               \
  X(IOBatchTest, __tgt_rtl_ompx_io_batch_test)                                 \
  X(IOBatchNotify, __tgt_rtl_ompx_io_batch_notify)                             \
  X(IOBatchWait, __tgt_rtl_ompx_io_batch_wait)                                 \
  X(IOBatchMessage, __tgt_rtl_ompx_io_batch_message)                           \
  X(IOBatchRelease, __tgt_rtl_ompx_io_batch_release)                           \
  X(IONotify, __tgt_rtl_ompx_io_notify)                                        \
  X(IOStats, __tgt_rtl_ompx_io_stats)                                          \
  X(IOPaths, __tgt_rtl_ompx_io_paths)                                          \
  X(IOSettings, __tgt_rtl_ompx_io_settings)                                    \
  X(PinnedBudget, __tgt_rtl_ompx_pinned_budget)                                \
  X(ProcessBudget, __tgt_rtl_ompx_process_budget)                              \
  X(LockInfo, __tgt_rtl_ompx_lock_info)                                        \
  X(CopyCounters, __tgt_rtl_ompx_copy_counters)                                \
  X(TakeLastError, __tgt_rtl_ompx_take_last_error)                             \
  X(SettingsInfo, __tgt_rtl_ompx_settings_info)                                \
  X(LockMem, __tgt_rtl_ompx_lock_mem)                                          \
  X(UnlockMem, __tgt_rtl_ompx_unlock_mem)

/// The version of the table that OFFLOADIO_EXTENSIONS describes: one more
/// for each set of calls appended together. 1: the 20 calls up to
/// TakeLastError; 2: SettingsInfo; 3: LockMem and UnlockMem.
#define OFFLOADIO_EXTENSION_TABLE_VERSION 3u

/// A plugin's extension table, as C and C++ see it: the header (its size
/// and version), then one pointer per entry of OFFLOADIO_EXTENSIONS, typed
/// from its declaration above.
struct offloadio_extension_table {
  /// Bytes of the table: the caller's capacity on the way in, what the
  /// plugin filled on the way out (the header included).
  uint32_t Size;
  /// The caller's OFFLOADIO_EXTENSION_TABLE_VERSION on the way in, the
  /// plugin's on the way out.
  uint32_t Version;
#define OFFLOADIO_EXTENSION_FIELD(Field, Symbol) __typeof__(&Symbol) Field;
  OFFLOADIO_EXTENSIONS(OFFLOADIO_EXTENSION_FIELD)
#undef OFFLOADIO_EXTENSION_FIELD
};

/// The bytes of the table's header; a smaller Size is refused (EINVAL).
#define OFFLOADIO_EXTENSION_TABLE_HEADER_SIZE (2 * sizeof(uint32_t))

/// The name of the discovery entry point.
#define OFFLOADIO_DISCOVERY_SYMBOL "__tgt_rtl_ompx_extensions"

#ifdef __cplusplus
extern "C" {
#endif

/// The discovery entry point: fill \p *Table, whose Size and Version the
/// caller set to its own, with min(Table->Size, the plugin's size) bytes of
/// the plugin's table, then answer the bytes filled in Table->Size and the
/// plugin's version in Table->Version. 0, or EINVAL when \p Table is null
/// or its Size is below OFFLOADIO_EXTENSION_TABLE_HEADER_SIZE.
OFFLOADIO_EXTENSION_API int32_t
__tgt_rtl_ompx_extensions(struct offloadio_extension_table *Table);

#ifdef __cplusplus
} // extern "C"

namespace offloadio {

/// The table for C++: made by the default constructor, a request for the
/// whole table of this header's version, all entries null.
struct ExtensionTableTy : offloadio_extension_table {
  ExtensionTableTy() : offloadio_extension_table() {
    Size = sizeof(ExtensionTableTy);
    Version = OFFLOADIO_EXTENSION_TABLE_VERSION;
  }
};

/// The bytes of the table's header; a smaller Size is refused (EINVAL).
constexpr uint32_t ExtensionTableHeaderSize =
    OFFLOADIO_EXTENSION_TABLE_HEADER_SIZE;

/// The size of the first version of ompx_io_setting_info_t: the least
/// entry size that ompx_io_get_all_settings and
/// __tgt_rtl_ompx_settings_info accept.
constexpr uint64_t SettingInfoFirstSize = 680;

/// The name of each entry's call, for messages: ExtensionNames::IOSubmit
/// is "__tgt_rtl_ompx_io_submit".
struct ExtensionNames {
#define OFFLOADIO_EXTENSION_NAME(Field, Symbol)                                \
  static constexpr const char *Field = #Symbol;
  OFFLOADIO_EXTENSIONS(OFFLOADIO_EXTENSION_NAME)
#undef OFFLOADIO_EXTENSION_NAME
};

} // namespace offloadio
#endif // __cplusplus

#endif // OFFLOADIO_EXTENSIONABI_H

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ompx_lock: page-locking host memory for an OpenMP device, and asking
 * offload-io which regions are locked.
 *
 * llvm_omp_target_lock_mem and llvm_omp_target_unlock_mem are libomptarget's
 * own entry points (libomptarget.so.16, linked by -fopenmp); LLVM 16 ships no
 * header for them, so they are declared here with libomptarget's prototypes.
 * ompx_target_lock_mem, ompx_target_unlock_mem and ompx_target_lock_info are
 * offload-io's and live in libompx_io (-lompx_io).
 * ompx_io.h includes this header.
 */
#ifndef OMPX_LOCK_H
#define OMPX_LOCK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Lock (pin) size bytes of host memory at ptr for OpenMP device device_num,
 *  so that copies between it and the device run as DMA without staging.
 *  Initialises the device if needed. Returns the device-accessible address
 *  of ptr, or NULL when size is 0, the device is not ready, or the plugin
 *  refuses the lock (the memory is not mapped, or it overlaps a locked
 *  region without lying inside it). Locks of the same region count: each
 *  needs its llvm_omp_target_unlock_mem, at the same ptr. Whether memory
 *  really is pinned depends on the plugin that serves the device;
 *  ompx_target_lock_info tells for offload-io's. */
void *llvm_omp_target_lock_mem(void *ptr, size_t size, int device_num);

/** Release one lock taken at ptr with llvm_omp_target_lock_mem on
 *  device_num: a lock of the region that starts at ptr, or of a sub-buffer
 *  locked at ptr inside a region (which shares that region's pinning); the
 *  region's last lock unpins it. Does nothing when device_num is not a
 *  device. Other errors change nothing and are reported on stderr: ptr is
 *  in no locked region, or no outstanding lock was taken at ptr (another
 *  byte of a region, or a lock released already), as after locking
 *  [h, h + 1 MiB) an unlock of h + 4096 is refused and h still locked. */
void llvm_omp_target_unlock_mem(void *ptr, int device_num);

/** llvm_omp_target_lock_mem through offload-io's plugin directly: the same
 *  map, rules and pinning, on every libomptarget version. Use it where
 *  libomptarget's own call does not reach the plugin: libomptarget 18.1.8's
 *  llvm_omp_target_lock_mem returns NULL without asking any plugin. Locks
 *  taken either way are one map: llvm_omp_target_unlock_mem releases one
 *  taken here and the other way round. Returns the device-accessible
 *  address of ptr, or NULL with errno and ompx_io_last_error set: EINVAL
 *  when ptr is NULL or size is 0, ENODEV when device_num is not served by
 *  an offload-io plugin, or the plugin's refusal (the memory is not mapped,
 *  or it overlaps a locked region without lying inside it). */
void *ompx_target_lock_mem(void *ptr, size_t size, int device_num);

/** llvm_omp_target_unlock_mem through offload-io's plugin directly: release
 *  one lock taken at ptr on device_num. 0, or -1 with errno and
 *  ompx_io_last_error set, and nothing changed: EINVAL for a NULL ptr,
 *  ENODEV when device_num is not served by offload-io, ENOENT when ptr is
 *  in no locked region or no outstanding lock was taken at it. */
int ompx_target_unlock_mem(void *ptr, int device_num);

/** A locked host region, as the plugin's map holds it. */
typedef struct ompx_lock_region {
  void *host_ptr;     /**< Start of the region. */
  void *device_ptr;   /**< Its device-accessible address. */
  size_t size;        /**< Exact size in bytes. */
  uint64_t references;/**< Locks held. */
  int external;       /**< 1 for runtime-pinned memory (alloc_host). */
} ompx_lock_region_t;

/** Is ptr inside a locked region of device_num's plugin? 1 and *region
 *  filled, 0 if not, -1 with errno on error: EINVAL when ptr or region is
 *  NULL, ENODEV when device_num is not served by an offload-io plugin
 *  (ompx_io_last_error says which plugin serves it). */
int ompx_target_lock_info(const void *ptr, int device_num,
                          ompx_lock_region_t *region);

#ifdef __cplusplus
}
#endif

#endif /* OMPX_LOCK_H */

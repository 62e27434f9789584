/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ompx_safetensors: safetensors checkpoints straight into device memory.
 * Part of libompx_io (link as for ompx_io.h).
 *
 * A safetensors file is an 8-byte little-endian header length N, N bytes
 * of JSON header, then the data section; the header maps each tensor name
 * to its dtype, shape and [begin, end) byte offsets in the data section,
 * and "__metadata__" to string metadata. A sharded checkpoint is a
 * model.safetensors.index.json whose "weight_map" maps each tensor name to
 * the shard file (relative to the index's directory) that holds it.
 *
 * ompx_safetensors_open reads and checks the header of a file, or the index
 * and every shard's header, and keeps them; nothing of the data section is
 * read until ompx_safetensors_load, which reads any subset of the tensors
 * into buffers of any devices with one ompx_io batch;
 * ompx_safetensors_load_split and ompx_safetensors_load_mapped allocate the
 * buffers too, on several devices, and load them with one batch. A
 * header is refused (errno, and ompx_io_last_error() naming the file, the
 * tensor and the problem) unless it is UTF-8 JSON (RFC 8259) of at most
 * OMPX_SAFETENSORS_MAX_HEADER_BYTES, nested at most OMPX_SAFETENSORS_MAX_DEPTH
 * deep, whose every tensor has a known dtype, a shape of non-negative
 * integers and offsets that lie inside the data section, hold exactly
 * product(shape) times the dtype's size bytes and overlap no other tensor
 * (docs/checkpoints.md lists every check).
 *
 * Errors return -1 and set errno, as ompx_io.h; the structs below never
 * change layout, and new data comes through new functions.
 */
#ifndef OMPX_SAFETENSORS_H
#define OMPX_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Longest JSON header (and index file) accepted, in bytes: a header
 *  length above it is refused with EOVERFLOW as a corrupt or foreign file,
 *  before anything is allocated for it. */
#define OMPX_SAFETENSORS_MAX_HEADER_BYTES (100u << 20)
/** Deepest nesting of JSON arrays and objects accepted in a header or an
 *  index (real headers nest 3 deep); deeper is refused with EOVERFLOW. */
#define OMPX_SAFETENSORS_MAX_DEPTH 128

/** The element types of the format, by their header spelling. */
enum ompx_safetensors_dtype {
  OMPX_SAFETENSORS_BOOL = 0,    /**< "BOOL", 1 byte. */
  OMPX_SAFETENSORS_U8 = 1,      /**< "U8", 1 byte. */
  OMPX_SAFETENSORS_I8 = 2,      /**< "I8", 1 byte. */
  OMPX_SAFETENSORS_F8_E4M3 = 3, /**< "F8_E4M3", 1 byte. */
  OMPX_SAFETENSORS_F8_E5M2 = 4, /**< "F8_E5M2", 1 byte. */
  OMPX_SAFETENSORS_I16 = 5,     /**< "I16", 2 bytes. */
  OMPX_SAFETENSORS_U16 = 6,     /**< "U16", 2 bytes. */
  OMPX_SAFETENSORS_F16 = 7,     /**< "F16", 2 bytes. */
  OMPX_SAFETENSORS_BF16 = 8,    /**< "BF16", 2 bytes. */
  OMPX_SAFETENSORS_I32 = 9,     /**< "I32", 4 bytes. */
  OMPX_SAFETENSORS_U32 = 10,    /**< "U32", 4 bytes. */
  OMPX_SAFETENSORS_F32 = 11,    /**< "F32", 4 bytes. */
  OMPX_SAFETENSORS_F64 = 12,    /**< "F64", 8 bytes. */
  OMPX_SAFETENSORS_I64 = 13,    /**< "I64", 8 bytes. */
  OMPX_SAFETENSORS_U64 = 14,    /**< "U64", 8 bytes. */
  OMPX_SAFETENSORS_NUM_DTYPES = 15 /**< How many there are. */
};

/** The header spelling of dtype ("BF16"), or NULL for a number that is no
 *  enum ompx_safetensors_dtype. */
const char *ompx_safetensors_dtype_name(int dtype);
/** Bytes of one element of dtype, or 0 for a number that is no enum
 *  ompx_safetensors_dtype. */
size_t ompx_safetensors_dtype_size(int dtype);

/** An open checkpoint: one safetensors file, or the shards of an index. */
typedef struct ompx_safetensors *ompx_safetensors_t;

/** One tensor, as ompx_safetensors_tensor describes it. The pointers stay
 *  valid until ompx_safetensors_close. */
typedef struct ompx_safetensors_tensor {
  const char *name;     /**< The tensor's name (UTF-8, NUL-terminated; a
                             name holding U+0000 is cut there). */
  int dtype;            /**< An enum ompx_safetensors_dtype. */
  size_t ndim;          /**< Dimensions of shape (0 for a scalar). */
  const uint64_t *shape;/**< ndim dimensions. */
  uint64_t nbytes;      /**< data_end - data_begin: product(shape) times
                             the dtype's size. */
  uint64_t data_begin;  /**< data_offsets[0], relative to the data section. */
  uint64_t data_end;    /**< data_offsets[1]. */
  uint64_t file_offset; /**< Offset of the first byte in its file: 8 + N +
                             data_begin. */
  size_t file;          /**< Index of its file (ompx_safetensors_file_path). */
} ompx_safetensors_tensor_t;

/** Open path and read and check its header. A path whose name ends in
 *  ".json" is an index (model.safetensors.index.json): its "weight_map"
 *  names the tensors and their shards, each shard file relative to the
 *  index's directory (absolute names and ".." are refused); every shard is
 *  opened and its header checked, and each tensor of the weight map must be
 *  in the shard it names (tensors of a shard that the map does not name
 *  are not listed). Any other path is one safetensors file. The files stay
 *  open (read-only) until ompx_safetensors_close. Returns 0 with *checkpoint
 *  set, or -1 with errno (and *checkpoint NULL): EINVAL for path or
 *  checkpoint NULL or a malformed header or index, EOVERFLOW for a header
 *  or index over OMPX_SAFETENSORS_MAX_HEADER_BYTES, nested over
 *  OMPX_SAFETENSORS_MAX_DEPTH, or a size over 64 bits, EIO for a file that
 *  ends before its header does, ENOMEM, and open's and pread's errno
 *  (ENOENT, EACCES, ...). ompx_io_last_error() names the file and, where
 *  there is one, the tensor. */
int ompx_safetensors_open(const char *path, ompx_safetensors_t *checkpoint);
/** Close the files and free what ompx_safetensors_open kept. 0, or -1 with
 *  errno EINVAL for NULL. */
int ompx_safetensors_close(ompx_safetensors_t checkpoint);

/** Number of files: 1, or the shards of an index. 0 for NULL. */
size_t ompx_safetensors_num_files(ompx_safetensors_t checkpoint);
/** Path of file index (as opened: the shard's directory is the index's),
 *  or NULL with errno EINVAL when out of range. */
const char *ompx_safetensors_file_path(ompx_safetensors_t checkpoint,
                                       size_t file);
/** Bytes of the file's JSON header (N); its data section starts at 8 + N.
 *  -1 with errno EINVAL when out of range. */
int64_t ompx_safetensors_header_bytes(ompx_safetensors_t checkpoint,
                                      size_t file);
/** Number of "__metadata__" entries of file. 0 when out of range. */
size_t ompx_safetensors_num_metadata(ompx_safetensors_t checkpoint,
                                     size_t file);
/** Entry index of file's "__metadata__", sorted by key (of a key given
 *  twice, the last value): *key and *value (either may be NULL) point to
 *  NUL-terminated strings valid until close. 0, or -1 with errno EINVAL. */
int ompx_safetensors_metadata(ompx_safetensors_t checkpoint, size_t file,
                              size_t index, const char **key,
                              const char **value);

/** Number of tensors: of the file, or of the index's weight map. 0 for
 *  NULL. */
size_t ompx_safetensors_num_tensors(ompx_safetensors_t checkpoint);
/** Describe tensor index into *tensor. Tensors are numbered by file, then
 *  in the order of their data in the file. 0, or -1 with errno EINVAL when
 *  an argument is NULL or index is out of range. */
int ompx_safetensors_tensor(ompx_safetensors_t checkpoint, size_t index,
                            ompx_safetensors_tensor_t *tensor);
/** The index of the tensor named name (compared byte for byte), or -1 with
 *  errno ENOENT when there is none (EINVAL for NULL arguments). */
ssize_t ompx_safetensors_find(ompx_safetensors_t checkpoint, const char *name);

/** One tensor to load by ompx_safetensors_load. */
typedef struct ompx_safetensors_load {
  const char *name;  /**< The tensor's name; NULL: the tensor numbered index. */
  size_t index;      /**< The tensor's number when name is NULL. */
  void *device_buf;  /**< Memory of device_num, at least nbytes. */
  size_t buf_size;   /**< Bytes of device_buf; less than the tensor's
                          nbytes fails the entry with EINVAL. */
  int device_num;    /**< OpenMP device number; the initial device is host
                          memory. Any mix of devices per call. */
  ssize_t result;    /**< Out: bytes loaded (the tensor's nbytes), or -1. */
  int error;         /**< Out: 0, or the errno of a failed entry. */
} ompx_safetensors_load_t;

/** Read the tensors that loads names into their buffers, all with one
 *  ompx_io_batch (ompx_io.h); an empty tensor needs no buffer and reads
 *  nothing. Each entry gets its own result and error: ENOENT for a name the
 *  checkpoint lacks, EINVAL for an index out of range or a buffer NULL or
 *  smaller than the tensor, EIO for a file that ends before the tensor does
 *  (changed since open), and otherwise the batch operation's error (such
 *  as ENODEV, or EINVAL for buffers that overlap); the other entries still
 *  load. Returns the number of entries that failed (0: all loaded; then
 *  ompx_io_last_error() names the failed tensors, their files and why, the
 *  first eight, then "and N more"), or -1 with errno when nothing was
 *  attempted: EINVAL for checkpoint NULL or loads NULL with nloads > 0,
 *  EAGAIN when a device has no request left. */
ssize_t ompx_safetensors_load(ompx_safetensors_t checkpoint,
                              ompx_safetensors_load_t *loads, size_t nloads);

/** Device memory that ompx_safetensors_load_split or
 *  ompx_safetensors_load_mapped allocated and loaded: one entry per tensor,
 *  each owning its memory until ompx_safetensors_placement_free. It does
 *  not refer to the checkpoint, which may be closed before it is freed. */
typedef struct ompx_safetensors_placement *ompx_safetensors_placement_t;

/** One tensor of a placement, as ompx_safetensors_placement_tensor
 *  describes it. The name stays valid until ompx_safetensors_placement_free. */
typedef struct ompx_safetensors_placed {
  const char *name;   /**< The tensor's name (as ompx_safetensors_tensor). */
  size_t index;       /**< The tensor's number in the checkpoint. */
  int device_num;     /**< The OpenMP device it was loaded onto. */
  void *device_ptr;   /**< Its memory there (omp_target_alloc on device_num),
                           nbytes long; NULL for an empty tensor. */
  uint64_t nbytes;    /**< The tensor's bytes. */
} ompx_safetensors_placed_t;

/** Load tensors of checkpoint onto several devices in one call, split
 *  evenly: allocate each tensor's memory with omp_target_alloc on its
 *  device and read all of them with one ompx_io batch (as
 *  ompx_safetensors_load). names (nnames entries) are the tensors, in the
 *  order of the placement's entries; names NULL (nnames 0): every tensor of
 *  the checkpoint, in its order. devices (ndevices entries, each an OpenMP
 *  device number, at most once; the initial device is host memory) are
 *  balanced by bytes: the tensors are taken largest first (equal sizes in
 *  their order) and each goes to the device with the fewest bytes so far
 *  (the earlier in devices on a tie), so the split depends only on the
 *  tensors and the list, and the bytes of any two devices differ by at
 *  most the largest tensor. An empty tensor gets a device but no memory.
 *  All or nothing: returns 0 with *placement set when every tensor loaded,
 *  or -1 with errno, *placement NULL and nothing left allocated: EINVAL for
 *  checkpoint or placement NULL, names NULL with nnames > 0, a name given
 *  twice, an empty device list, a device that does not exist or is listed
 *  twice; ENOENT for a name the checkpoint lacks; ENODEV for a device that
 *  no offload-io plugin serves; ENOMEM when a device allocation fails (the
 *  message names the tensor, its file, the size and the device); EAGAIN
 *  when a device has no request left; and the errno of the first tensor
 *  that failed to load (as ompx_safetensors_load's entries: EIO for a file
 *  cut since open, ...). ompx_io_last_error() names the tensor, its file
 *  and the device. */
int ompx_safetensors_load_split(ompx_safetensors_t checkpoint,
                                const char *const *names, size_t nnames,
                                const int *devices, size_t ndevices,
                                ompx_safetensors_placement_t *placement);

/** As ompx_safetensors_load_split, with the device of each tensor given:
 *  device_map[i] is the OpenMP device of names[i] (names NULL: of tensor
 *  i, device_map then holding ompx_safetensors_num_tensors entries). Any
 *  device may take any number of tensors. EINVAL (naming the tensor, its
 *  file and the device) for device_map NULL with tensors to place or an
 *  entry that is no device; otherwise the errors of
 *  ompx_safetensors_load_split. */
int ompx_safetensors_load_mapped(ompx_safetensors_t checkpoint,
                                 const char *const *names, size_t nnames,
                                 const int *device_map,
                                 ompx_safetensors_placement_t *placement);

/** Number of tensors of placement. 0 for NULL. */
size_t ompx_safetensors_placement_count(ompx_safetensors_placement_t placement);
/** Describe entry index of placement (the order of the names given, or of
 *  the checkpoint) into *placed. 0, or -1 with errno EINVAL when an
 *  argument is NULL or index is out of range. */
int ompx_safetensors_placement_tensor(ompx_safetensors_placement_t placement,
                                      size_t index,
                                      ompx_safetensors_placed_t *placed);
/** The entry of placement for the tensor named name, or -1 with errno
 *  ENOENT when it has none (EINVAL for NULL arguments). */
ssize_t ompx_safetensors_placement_find(ompx_safetensors_placement_t placement,
                                        const char *name);
/** Free the device memory of every tensor of placement (omp_target_free on
 *  its device) and the placement. 0, or -1 with errno EINVAL for NULL. */
int ompx_safetensors_placement_free(ompx_safetensors_placement_t placement);

#ifdef __cplusplus
}
#endif

#endif /* OMPX_SAFETENSORS_H */

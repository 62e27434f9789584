// SPDX-License-Identifier: Apache-2.0
//
// The few cuFile (GPUDirect Storage) entry points the plugin's file fastpath
// calls, as a table filled at run time from libcufile.so.0. Like libcuda,
// libcufile is never linked: most machines have no GDS, and the plugin must
// load (and read files through staging) without it.
//
// The types are declared here rather than taken from cufile.h, which is not
// part of every CUDA toolkit. Their layout follows the cuFile API reference:
//   CUfileError_t   { CUfileOpError err; CUresult cu_err; }   (two ints)
//   CUfileDescr_t   { CUfileFileHandleType type;
//                     union { int fd; void *handle; } handle;
//                     const CUfileFSOps_t *fs_ops; }
//   CUfileHandle_t  void *
// and the calls:
//   CUfileError_t cuFileDriverOpen(void);
//   CUfileError_t cuFileDriverClose_v2(void);   (cuFileDriverClose before)
//   CUfileError_t cuFileHandleRegister(CUfileHandle_t *, CUfileDescr_t *);
//   void          cuFileHandleDeregister(CUfileHandle_t);
//   ssize_t       cuFileRead(CUfileHandle_t, void *base, size_t size,
//                            off_t file_offset, off_t buf_offset);
//   ssize_t       cuFileWrite(CUfileHandle_t, const void *base, size_t size,
//                             off_t file_offset, off_t buf_offset);
// cuFileRead/Write return a byte count, -1 with errno set, or the negated
// CUfileOpError.
#ifndef OFFLOADIO_CUDA_CUFILEAPI_H
#define OFFLOADIO_CUDA_CUFILEAPI_H

#include "offloadio/Error.h"

#include <cuda.h>

#include <memory>
#include <string>
#include <sys/types.h>

namespace offloadio {
namespace cuda {

class CUDAApiTy;

/// CUfileOpError values the plugin tells apart; the rest are reported by
/// number. cuFile numbers its own errors from 5000.
enum CUFileOpErrorTy : int {
  CUFileSuccess = 0,
  CUFileErrorBase = 5000,
  CUFileCUDADriverError = 5011,   ///< CU_FILE_CUDA_DRIVER_ERROR.
  CUFileDriverAlreadyOpen = 5026, ///< CU_FILE_DRIVER_ALREADY_OPEN.
};

/// CUfileError_t.
struct CUFileErrorTy {
  int Err;        ///< CUfileOpError.
  CUresult CuErr; ///< The CUDA driver's error when Err is CUDA_DRIVER_ERROR.
};

/// CUfileFileHandleType: a POSIX descriptor.
constexpr int CUFileHandleTypeOpaqueFd = 1;

/// CUfileDescr_t.
struct CUFileDescrTy {
  int Type; ///< CUfileFileHandleType.
  union {
    int Fd;
    void *Handle;
  } Handle;
  const void *FSOps; ///< const CUfileFSOps_t *; null for kernel file systems.
};

/// CUfileHandle_t.
using CUFileHandleTy = void *;

/// The libcufile entry points. A default-constructed table holds null
/// pointers; load() fills one from the library, and tests may fill one with
/// their own functions. Member names differ from the C names on purpose:
/// cufile.h #defines some of those (cuFileDriverClose).
class CUFileApiTy {
public:
  CUFileApiTy() = default;
  CUFileApiTy(const CUFileApiTy &) = delete;
  CUFileApiTy &operator=(const CUFileApiTy &) = delete;

  /// dlopen \p Library and resolve the table. Fails with ErrorCode::NotFound
  /// when the library or a required function is missing; the message says
  /// which ("libcufile.so.0 not found").
  static Expected<std::unique_ptr<CUFileApiTy>>
  load(const char *Library = "libcufile.so.0");

  CUFileErrorTy (*DriverOpen)() = nullptr;
  /// Optional (may stay null).
  CUFileErrorTy (*DriverClose)() = nullptr;
  CUFileErrorTy (*HandleRegister)(CUFileHandleTy *, CUFileDescrTy *) = nullptr;
  void (*HandleDeregister)(CUFileHandleTy) = nullptr;
  ssize_t (*Read)(CUFileHandleTy, void *, size_t, off_t, off_t) = nullptr;
  ssize_t (*Write)(CUFileHandleTy, const void *, size_t, off_t,
                   off_t) = nullptr;

private:
  /// The library handle; never closed (libcufile keeps threads and driver
  /// state for the life of the process).
  void *Handle = nullptr;
};

/// The symbolic name of a CUfileOpError ("CU_FILE_HANDLE_NOT_REGISTERED"),
/// or null for a number the plugin does not know.
const char *cuFileOpErrorName(int Code);

/// "CU_FILE_HANDLE_NOT_REGISTERED (5027)"; for CUDA_DRIVER_ERROR the CUDA
/// error's name is added (from \p Api when given).
std::string describeCUFileError(CUFileErrorTy Err, const CUDAApiTy *Api);

/// The errno a failed cuFile operation maps to. Errors that mean "cuFile
/// cannot serve this file, buffer or platform" give ENOTSUP, so that the
/// file engine retries on its staged path; others give EIO, EINVAL, ENOMEM
/// or EACCES.
int cuFileOpErrorErrno(int Code);

} // namespace cuda
} // namespace offloadio

#endif // OFFLOADIO_CUDA_CUFILEAPI_H

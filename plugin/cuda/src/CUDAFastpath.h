// SPDX-License-Identifier: Apache-2.0
//
// The file engine's fastpath on CUDA devices: cuFile (GPUDirect Storage)
// reads and writes between an O_DIRECT file and device memory.
//
// Nothing is loaded until a request could use the path: the library is
// dlopened and the driver opened on the first request that passes the
// checks every fastpath shares (IOFastpathChecksTy: O_DIRECT regular file,
// device memory, 4 KiB or the descriptor's O_DIRECT alignment). A
// machine without libcufile, or whose driver does not open, keeps the
// reason and every later request says it. Registration of the descriptor
// happens per read or write, on the engine's own descriptor: a failure
// there (cuFile error 5027 where the nvidia-fs module is not loaded)
// returns ENOTSUP, so the engine moves the request to its staged path, and
// the engine remembers the file system so that later requests are not tried
// again.
#ifndef OFFLOADIO_CUDA_CUDAFASTPATH_H
#define OFFLOADIO_CUDA_CUDAFASTPATH_H

#include "CUFileApi.h"

#include "offloadio/io/IOFastpath.h"
#include "offloadio/io/IOFastpathRules.h"

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <sys/types.h>

namespace offloadio {
namespace cuda {

class CUDAApiTy;
class CUDADeviceTy;

/// The process's cuFile library and driver, opened at most once. cuFile's
/// driver state is per process, so every device of the plugin shares it.
class CUFileDriverTy {
public:
  using LoaderTy = std::function<Expected<std::unique_ptr<CUFileApiTy>>()>;

  /// \p Loader supplies the entry points (CUFileApiTy::load by default;
  /// tests pass a table of their own).
  explicit CUFileDriverTy(LoaderTy Loader);
  ~CUFileDriverTy();
  CUFileDriverTy(const CUFileDriverTy &) = delete;
  CUFileDriverTy &operator=(const CUFileDriverTy &) = delete;

  /// The instance the plugin uses. Never destroyed: libcufile tears its
  /// driver down itself at exit, and closing it from a static destructor
  /// could run after CUDA is gone.
  static CUFileDriverTy &process();

  /// The entry points once the driver is open, or null with \p Why. The
  /// first call loads the library and calls cuFileDriverOpen after
  /// \p SetContext (a CUDA context current on the calling thread); later
  /// calls return what it found. \p Decided is set on the one call that
  /// opened the driver or found it unusable, for a one-time info line. A
  /// failure of \p SetContext is this caller's and is not remembered.
  const CUFileApiTy *open(const std::function<Error()> &SetContext,
                          const CUDAApiTy *CUDA, std::string &Why,
                          bool &Decided);

  /// The entry points if the driver is open, null otherwise (not tried yet,
  /// or failed, with the reason in \p Why when failed). Does not open.
  const CUFileApiTy *peek(std::string &Why) const;

private:
  enum StateTy : int { Untried, Open, Failed };

  LoaderTy Loader;
  mutable std::mutex Lock;
  std::atomic<int> State{Untried};
  std::unique_ptr<CUFileApiTy> Api; ///< Set while Open.
  std::string Failure;              ///< Why, once Failed.
};

/// cuFile as the fastpath of one CUDA device.
class CUDAFastpathTy final : public IOFastpathTy {
public:
  /// The required alignment of file offset, size and device address.
  static constexpr size_t Alignment = 4096;

  /// The shared checks make their syscalls on \p Sys.
  CUDAFastpathTy(CUDADeviceTy &Device, const CUDAApiTy &CUDA,
                 CUFileDriverTy &Driver, SysTy &Sys);
  ~CUDAFastpathTy() override;

  const char *name() const override { return "cuFile"; }
  bool accepts(int Fd, const void *DevPtr, size_t Count, off_t Offset,
               std::string &Why, const IOLogTy &Log) override;
  Expected<size_t> read(int Fd, void *DevPtr, size_t Count, off_t Offset,
                        const IOLogTy &Log) override;
  Error write(int Fd, const void *DevPtr, size_t Count, off_t Offset,
              const IOLogTy &Log) override;

private:
  /// A registered descriptor, shared by the workers serving chunks of one
  /// request (the engine gives all of them the request's own descriptor).
  struct HandleTy {
    CUFileHandleTy Handle = nullptr;
    unsigned Users = 0;
  };

  /// Everything a read or write does before the transfer: the driver, the
  /// chunk's checks (IOFastpathChecksTy::checkChunk), the context and the
  /// handle. Returns the handle (with a reference taken) or an error whose
  /// errno is ENOTSUP where the staged path should take over.
  Expected<CUFileHandleTy> prepare(const CUFileApiTy *&Api, const char *Op,
                                   int Fd, const void *DevPtr, size_t Count,
                                   off_t Offset, const IOLogTy &Log);
  /// Drop the reference prepare() took; the last one deregisters.
  void release(const CUFileApiTy &Api, int Fd);
  /// The error for a failed cuFileRead/cuFileWrite that returned \p Ret with
  /// \p SavedErrno.
  Error ioError(const char *Call, ssize_t Ret, int SavedErrno, size_t Count,
                off_t Offset);
  /// Print \p Msg when OFFLOADIO_INFO asks, else through the engine's
  /// \p Log (OMPX_IO_INFO).
  void note(const std::string &Msg, const IOLogTy &Log) const;

  CUDADeviceTy &Device;
  const CUDAApiTy &CUDA;
  CUFileDriverTy &Driver;
  /// The checks every fastpath makes, with cuFile's rules.
  IOFastpathChecksTy Checks;

  mutable std::mutex Lock; ///< Guards Handles.
  std::map<int, HandleTy> Handles;
};

} // namespace cuda
} // namespace offloadio

#endif // OFFLOADIO_CUDA_CUDAFASTPATH_H

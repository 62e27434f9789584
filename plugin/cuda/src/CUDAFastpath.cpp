// SPDX-License-Identifier: Apache-2.0
#include "CUDAFastpath.h"
#include "CUDAApi.h"
#include "CUDADevice.h"

#include "offloadio/Plugin.h"
#include "offloadio/io/IOCallLimit.h"
#include "offloadio/io/IOFastpathRules.h"

#include <algorithm>
#include <cerrno>
#include <sys/sysmacros.h>

using namespace offloadio;
using namespace offloadio::cuda;

//===----------------------------------------------------------------------===//
// The driver
//===----------------------------------------------------------------------===//

CUFileDriverTy::CUFileDriverTy(LoaderTy Loader) : Loader(std::move(Loader)) {}

CUFileDriverTy::~CUFileDriverTy() {
  if (State.load() == Open && Api->DriverClose)
    (void)Api->DriverClose();
}

CUFileDriverTy &CUFileDriverTy::process() {
  static CUFileDriverTy *Driver =
      new CUFileDriverTy([] { return CUFileApiTy::load(); });
  return *Driver;
}

const CUFileApiTy *CUFileDriverTy::peek(std::string &Why) const {
  int S = State.load(std::memory_order_acquire);
  if (S == Open)
    return Api.get();
  if (S == Failed) {
    std::lock_guard<std::mutex> Guard(Lock);
    Why = Failure;
  }
  return nullptr;
}

const CUFileApiTy *
CUFileDriverTy::open(const std::function<Error()> &SetContext,
                     const CUDAApiTy *CUDA, std::string &Why, bool &Decided) {
  Decided = false;
  // Api is written before State becomes Open (release) and never again.
  if (State.load(std::memory_order_acquire) == Open)
    return Api.get();
  std::lock_guard<std::mutex> Guard(Lock);
  switch (State.load(std::memory_order_relaxed)) {
  case Open:
    return Api.get();
  case Failed:
    Why = Failure;
    return nullptr;
  default:
    break;
  }
  auto Fail = [&](std::string Reason) -> const CUFileApiTy * {
    Failure = std::move(Reason);
    Why = Failure;
    Decided = true;
    State.store(Failed, std::memory_order_release);
    return nullptr;
  };
  auto Loaded = Loader();
  if (!Loaded)
    return Fail(takeErrorMessage(Loaded.takeError()));
  if (auto Err = SetContext()) {
    // This thread's problem, not the driver's: the next caller tries again.
    Why = "no CUDA context for cuFileDriverOpen: " +
          takeErrorMessage(std::move(Err));
    return nullptr;
  }
  CUFileErrorTy Result = (*Loaded)->DriverOpen();
  // ALREADY_OPEN: the program opened the driver itself; it is usable.
  if (Result.Err != CUFileSuccess && Result.Err != CUFileDriverAlreadyOpen)
    return Fail("cuFileDriverOpen failed: " +
                describeCUFileError(Result, CUDA));
  Api = std::move(*Loaded);
  Decided = true;
  State.store(Open, std::memory_order_release);
  return Api.get();
}

//===----------------------------------------------------------------------===//
// The fastpath of one device
//===----------------------------------------------------------------------===//

namespace {

bool isAligned(uint64_t Value) {
  return Value % CUDAFastpathTy::Alignment == 0;
}

/// What cuFile takes: O_DIRECT regular files; which file systems is for
/// handle registration to say.
IOFastpathRulesTy cuFileRules() {
  IOFastpathRulesTy Rules;
  Rules.Vendor = "cuFile";
  Rules.Alignment = CUDAFastpathTy::Alignment;
  return Rules;
}

} // namespace

CUDAFastpathTy::CUDAFastpathTy(CUDADeviceTy &Device, const CUDAApiTy &CUDA,
                               CUFileDriverTy &Driver, SysTy &Sys)
    : Device(Device), CUDA(CUDA), Driver(Driver), Checks(Sys, cuFileRules()) {}

CUDAFastpathTy::~CUDAFastpathTy() {
  // The engine (and so every read and write) has stopped by now; handles
  // are released by the calls that took them, so none is left.
}

void CUDAFastpathTy::note(const std::string &Msg, const IOLogTy &Log) const {
  const InfoTy &Info = Device.getServices().Info;
  if (Info.any())
    Info.print(~0u, Device.getDeviceId(), "{0}", Msg);
  else
    Log.print(Msg);
}

bool CUDAFastpathTy::accepts(int Fd, const void *DevPtr, size_t Count,
                             off_t Offset, std::string &Why,
                             const IOLogTy &Log) {
  // A machine without cuFile says so on every request once it is known.
  std::string DriverWhy;
  if (!Driver.peek(DriverWhy) && !DriverWhy.empty()) {
    Why = DriverWhy;
    return false;
  }

  // The shared checks come before anything is loaded, so that programs
  // that cannot use the path never load libcufile.
  if (!Checks.accepts(Fd, DevPtr, Count, Offset, Device.findAllocation(DevPtr),
                      Device.getDeviceId(), Why))
    return false;

  bool Decided = false;
  const CUFileApiTy *Api = Driver.open([this] { return Device.setContext(); },
                                       &CUDA, DriverWhy, Decided);
  if (Decided)
    note(Api ? "cuFile driver open: GPUDirect Storage fastpath for O_DIRECT "
               "files"
             : "cuFile fastpath off: " + DriverWhy,
         Log);
  if (!Api) {
    Why = DriverWhy;
    return false;
  }
  return true;
}

Expected<CUFileHandleTy> CUDAFastpathTy::prepare(const CUFileApiTy *&Api,
                                                 const char *Op, int Fd,
                                                 const void *DevPtr,
                                                 size_t Count, off_t Offset,
                                                 const IOLogTy &Log) {
  std::string Why;
  Api = Driver.peek(Why);
  if (!Api)
    return makeErrnoError(ENOTSUP, "cuFile is not open{0}{1}",
                          Why.empty() ? "" : ": ", Why);
  IOFastpathChunkTy Chunk;
  if (auto Err = Checks.checkChunk(Op, Device.getDeviceId(), Fd, DevPtr, Count,
                                   Offset, Chunk))
    return std::move(Err);
  if (auto Err = Device.setContext())
    return std::move(Err);

  std::lock_guard<std::mutex> Guard(Lock);
  auto It = Handles.find(Fd);
  if (It != Handles.end()) {
    ++It->second.Users;
    return It->second.Handle;
  }
  CUFileDescrTy Descr = {};
  Descr.Type = CUFileHandleTypeOpaqueFd;
  Descr.Handle.Fd = Fd;
  Descr.FSOps = nullptr;
  CUFileHandleTy Handle = nullptr;
  CUFileErrorTy Result = Api->HandleRegister(&Handle, &Descr);
  if (Result.Err != CUFileSuccess) {
    std::string Reason =
        llvm::formatv("cuFileHandleRegister(fd {0}) failed: {1}", Fd,
                      describeCUFileError(Result, &CUDA))
            .str();
    // Registration fails for reasons of the platform (no nvidia-fs, compat
    // mode off) or of the file system: ENOTSUP makes the engine remember
    // the file system and send its files through staging from now on.
    note(llvm::formatv("cuFile fastpath off for file system {0}:{1}: {2}; "
                       "its files go through staging",
                       major(Chunk.Storage), minor(Chunk.Storage), Reason)
             .str(),
         Log);
    return makeErrnoError(ENOTSUP, "{0}", Reason);
  }
  Handles.emplace(Fd, HandleTy{Handle, 1});
  return Handle;
}

void CUDAFastpathTy::release(const CUFileApiTy &Api, int Fd) {
  std::lock_guard<std::mutex> Guard(Lock);
  auto It = Handles.find(Fd);
  if (It == Handles.end() || --It->second.Users)
    return;
  // Deregistered before the engine closes its descriptor: a later file
  // that gets the same number is registered afresh.
  Api.HandleDeregister(It->second.Handle);
  Handles.erase(It);
}

Error CUDAFastpathTy::ioError(const char *Call, ssize_t Ret, int SavedErrno,
                              size_t Count, off_t Offset) {
  int Errno = EIO;
  std::string What;
  if (Ret == -1) {
    // A POSIX failure, with errno set.
    Errno = SavedErrno ? SavedErrno : EIO;
  } else {
    int Code = int(-Ret);
    if (Code >= CUFileErrorBase) {
      Errno = cuFileOpErrorErrno(Code);
      What = ": " + describeCUFileError({Code, CUDA_SUCCESS}, &CUDA);
    } else {
      // Some versions return a negated errno.
      Errno = Code;
    }
  }
  // Short: the engine keeps 160 characters of a fallback's reason, and its
  // info line already names the buffer.
  return makeErrnoError(Errno, "{0} of {1} bytes at offset {2}{3}", Call, Count,
                        int64_t(Offset), What);
}

Expected<size_t> CUDAFastpathTy::read(int Fd, void *DevPtr, size_t Count,
                                      off_t Offset, const IOLogTy &Log) {
  const CUFileApiTy *Api = nullptr;
  auto Handle = prepare(Api, "read", Fd, DevPtr, Count, Offset, Log);
  if (!Handle)
    return Handle.takeError();
  auto Transfer = [&]() -> Expected<size_t> {
    size_t Done = 0;
    while (Done < Count) {
      size_t Want = std::min(Count - Done, MaxIOPerCall);
      off_t At = Offset + off_t(Done);
      errno = 0;
      ssize_t N = Api->Read(*Handle, DevPtr, Want, At, off_t(Done));
      int SavedErrno = errno;
      if (N > 0) {
        Done += size_t(N);
        // O_DIRECT reads come up short only at the end of the file; one
        // that leaves an unaligned position is that (and the next read
        // would be unaligned).
        if (size_t(N) < Want && !isAligned(uint64_t(Offset) + Done))
          break;
      } else if (N == 0) { // End of file.
        break;
      } else if (N != -1 || SavedErrno != EINTR)
        return ioError("cuFileRead", N, SavedErrno, Want, At);
    }
    return Done;
  };
  auto Result = Transfer();
  release(*Api, Fd);
  return Result;
}

Error CUDAFastpathTy::write(int Fd, const void *DevPtr, size_t Count,
                            off_t Offset, const IOLogTy &Log) {
  const CUFileApiTy *Api = nullptr;
  auto Handle = prepare(Api, "write", Fd, DevPtr, Count, Offset, Log);
  if (!Handle)
    return Handle.takeError();
  auto Transfer = [&]() -> Error {
    size_t Done = 0;
    while (Done < Count) {
      size_t Want = std::min(Count - Done, MaxIOPerCall);
      off_t At = Offset + off_t(Done);
      errno = 0;
      ssize_t N = Api->Write(*Handle, DevPtr, Want, At, off_t(Done));
      int SavedErrno = errno;
      if (N > 0)
        Done += size_t(N);
      else if (N == 0)
        return makeErrnoError(EIO,
                              "cuFileWrite of {0} bytes at offset {1} "
                              "wrote nothing",
                              Want, int64_t(At));
      else if (N != -1 || SavedErrno != EINTR)
        return ioError("cuFileWrite", N, SavedErrno, Want, At);
    }
    return Error::success();
  };
  Error Result = Transfer();
  release(*Api, Fd);
  return Result;
}

// SPDX-License-Identifier: Apache-2.0
//
// libompx_io: resolve the OpenMP device number to the offload-io plugin that
// owns it, then call that plugin's extension entry points. Requests on the
// initial device (plain host memory) are served here with pread/pwrite.
#include "ompx_io.h"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <dlfcn.h>
#include <fcntl.h>
#include <mutex>
#include <new>
#include <unistd.h>
#include <unordered_map>

#define OMPX_API extern "C" __attribute__((visibility("default")))

namespace {

/// The extension entry points of one offload-io plugin.
struct PluginFnsTy {
  int32_t (*Resolve)(int32_t);
  int32_t (*Submit)(int32_t, int32_t, int32_t, void *, uint64_t, int64_t,
                    void **);
  int32_t (*Test)(void *);
  int32_t (*Wait)(void *, int64_t *);
  int32_t (*Stats)(int32_t, ompx_io_stats_t *);
  int32_t (*Paths)(int32_t, uint32_t *, char *, uint64_t);
  int32_t (*LockInfo)(const void *, ompx_lock_region_t *);
  int32_t (*CopyCounters)(int32_t, uint64_t *, uint64_t *);
};

/// A device: its plugin and local number.
struct DeviceRefTy {
  const PluginFnsTy *Fns;
  int32_t Local;
};

/// The library's state: the plugins found and the devices resolved.
class IOLibTy {
public:
  /// Resolve OpenMP device \p Device; errno-style failure as nullptr.
  bool resolve(int Device, DeviceRefTy &Ref) {
    std::lock_guard<std::mutex> Guard(Lock);
    auto It = Devices.find(Device);
    if (It != Devices.end()) {
      Ref = It->second;
      return true;
    }
    loadPlugins();
    for (unsigned I = 0; I < NumPlugins; ++I) {
      int32_t Local = Plugins[I].Resolve(Device);
      if (Local >= 0) {
        Ref = {&Plugins[I], Local};
        Devices[Device] = Ref;
        return true;
      }
    }
    return false;
  }

  /// The initial device number of the running OpenMP program.
  int initialDevice() {
    using FnTy = int (*)();
    auto *Fn = reinterpret_cast<FnTy>(dlsym(RTLD_DEFAULT,
                                            "omp_get_initial_device"));
    return Fn ? Fn() : -1;
  }

private:
  void loadPlugins() {
    if (Loaded)
      return;
    Loaded = true;
    // libomptarget loaded the plugins already; we only look them up.
    static const char *const Names[] = {
        "libomptarget.rtl.x86_64.nextgen.so",
        "libomptarget.rtl.cuda.nextgen.so",
        "libomptarget.rtl.amdgpu.nextgen.so"};
    for (const char *Name : Names) {
      void *H = dlopen(Name, RTLD_LAZY | RTLD_NOLOAD);
      if (!H)
        continue;
      PluginFnsTy F;
      bool Ok = true;
      auto Get = [&](auto &Slot, const char *Sym) {
        Slot = reinterpret_cast<std::remove_reference_t<decltype(Slot)>>(
            dlsym(H, Sym));
        Ok &= Slot != nullptr;
      };
      Get(F.Resolve, "__tgt_rtl_ompx_resolve_device");
      Get(F.Submit, "__tgt_rtl_ompx_io_submit");
      Get(F.Test, "__tgt_rtl_ompx_io_test");
      Get(F.Wait, "__tgt_rtl_ompx_io_wait");
      Get(F.Stats, "__tgt_rtl_ompx_io_stats");
      Get(F.Paths, "__tgt_rtl_ompx_io_paths");
      Get(F.LockInfo, "__tgt_rtl_ompx_lock_info");
      Get(F.CopyCounters, "__tgt_rtl_ompx_copy_counters");
      // A stock plugin of the same name has none of our extensions.
      if (Ok && NumPlugins < 3)
        Plugins[NumPlugins++] = F;
    }
  }

  std::mutex Lock;
  bool Loaded = false;
  PluginFnsTy Plugins[3];
  unsigned NumPlugins = 0;
  std::unordered_map<int, DeviceRefTy> Devices;
};

/// The library's one instance.
IOLibTy &lib() {
  static IOLibTy Lib;
  return Lib;
}

/// Host-memory transfer (initial device), POSIX-exact: full count unless
/// end of file, EINTR retried.
ssize_t hostTransfer(bool IsWrite, int Fd, void *Buf, size_t Count,
                     off_t Offset) {
  if (Offset < 0 || Count > size_t(SSIZE_MAX)) {
    errno = EINVAL;
    return -1;
  }
  if (Count && !Buf) {
    errno = EFAULT;
    return -1;
  }
  size_t Done = 0;
  while (Done < Count) {
    size_t Want = std::min<size_t>(Count - Done, size_t(1) << 30);
    char *P = static_cast<char *>(Buf) + Done;
    ssize_t N = IsWrite ? ::pwrite(Fd, P, Want, Offset + off_t(Done))
                        : ::pread(Fd, P, Want, Offset + off_t(Done));
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0)
      return -1;
    if (N == 0) {
      if (!IsWrite)
        break;
      errno = EIO;
      return -1;
    }
    Done += size_t(N);
  }
  if (Count == 0 && ::fcntl(Fd, F_GETFL) < 0) {
    errno = EBADF;
    return -1;
  }
  return ssize_t(Done);
}

} // namespace

/// A request as the user holds it.
struct ompx_io_request {
  const PluginFnsTy *Fns; ///< Null for host requests, done at submission.
  void *Inner;
  ssize_t HostResult;
  int HostErrno;
};

static int submit(bool IsWrite, int Fd, void *Buf, size_t Count, off_t Offset,
                  int Device, ompx_io_request_t *Request) {
  if (!Request) {
    errno = EINVAL;
    return -1;
  }
  *Request = nullptr;
  auto *R = new (std::nothrow) ompx_io_request{nullptr, nullptr, 0, 0};
  if (!R) {
    errno = ENOMEM;
    return -1;
  }
  if (Device == lib().initialDevice()) {
    // Host memory: done now; the request only carries the result.
    R->HostResult = hostTransfer(IsWrite, Fd, Buf, Count, Offset);
    R->HostErrno = R->HostResult < 0 ? errno : 0;
    if (R->HostResult < 0 && (R->HostErrno == EBADF || R->HostErrno == EINVAL ||
                              R->HostErrno == EFAULT)) {
      delete R;
      errno = R->HostErrno;
      return -1;
    }
    *Request = R;
    return 0;
  }
  DeviceRefTy Ref;
  if (Device < 0 || !lib().resolve(Device, Ref)) {
    delete R;
    errno = ENODEV;
    return -1;
  }
  int32_t Err = Ref.Fns->Submit(Ref.Local, IsWrite, Fd, Buf, Count,
                                int64_t(Offset), &R->Inner);
  if (Err) {
    delete R;
    errno = Err;
    return -1;
  }
  R->Fns = Ref.Fns;
  *Request = R;
  return 0;
}

OMPX_API int ompx_target_pread_async(int Fd, void *Buf, size_t Count,
                                     off_t Offset, int Device,
                                     ompx_io_request_t *Request) {
  return submit(false, Fd, Buf, Count, Offset, Device, Request);
}

OMPX_API int ompx_target_pwrite_async(int Fd, const void *Buf, size_t Count,
                                      off_t Offset, int Device,
                                      ompx_io_request_t *Request) {
  return submit(true, Fd, const_cast<void *>(Buf), Count, Offset, Device,
                Request);
}

OMPX_API int ompx_io_test(ompx_io_request_t Request) {
  if (!Request) {
    errno = EINVAL;
    return -1;
  }
  if (!Request->Fns)
    return 1;
  return Request->Fns->Test(Request->Inner);
}

OMPX_API ssize_t ompx_io_wait(ompx_io_request_t Request) {
  if (!Request) {
    errno = EINVAL;
    return -1;
  }
  ssize_t Result;
  int Errno = 0;
  if (!Request->Fns) {
    Result = Request->HostResult;
    Errno = Request->HostErrno;
  } else {
    int64_t Bytes = 0;
    Errno = Request->Fns->Wait(Request->Inner, &Bytes);
    Result = Errno ? -1 : ssize_t(Bytes);
  }
  delete Request;
  if (Result < 0)
    errno = Errno;
  return Result;
}

OMPX_API ssize_t ompx_target_pread(int Fd, void *Buf, size_t Count,
                                   off_t Offset, int Device) {
  ompx_io_request_t R;
  if (ompx_target_pread_async(Fd, Buf, Count, Offset, Device, &R))
    return -1;
  return ompx_io_wait(R);
}

OMPX_API ssize_t ompx_target_pwrite(int Fd, const void *Buf, size_t Count,
                                    off_t Offset, int Device) {
  ompx_io_request_t R;
  if (ompx_target_pwrite_async(Fd, Buf, Count, Offset, Device, &R))
    return -1;
  return ompx_io_wait(R);
}

OMPX_API const char *ompx_io_path_name(int Path) {
  static const char *const Names[] = {"direct", "fastpath", "staged", "host"};
  return Path >= 0 && Path < OMPX_IO_NUM_PATHS ? Names[Path] : "unknown";
}

OMPX_API int ompx_io_get_stats(int Device, ompx_io_stats_t *Stats) {
  DeviceRefTy Ref;
  if (!Stats) {
    errno = EINVAL;
    return -1;
  }
  if (!lib().resolve(Device, Ref)) {
    errno = ENODEV;
    return -1;
  }
  if (int32_t Err = Ref.Fns->Stats(Ref.Local, Stats)) {
    errno = Err;
    return -1;
  }
  return 0;
}

OMPX_API int ompx_io_paths(int Device, unsigned *Mask, char *Why,
                           size_t WhyLen) {
  DeviceRefTy Ref;
  if (!Mask) {
    errno = EINVAL;
    return -1;
  }
  if (Device == lib().initialDevice()) {
    *Mask = 1u << OMPX_IO_PATH_HOST;
    if (Why && WhyLen)
      std::snprintf(Why, WhyLen, "initial device: plain pread/pwrite\n");
    return 0;
  }
  if (!lib().resolve(Device, Ref)) {
    errno = ENODEV;
    return -1;
  }
  uint32_t M = 0;
  if (int32_t Err = Ref.Fns->Paths(Ref.Local, &M, Why, WhyLen)) {
    errno = Err;
    return -1;
  }
  *Mask = M;
  return 0;
}

OMPX_API int ompx_target_lock_info(const void *Ptr, int Device,
                                   ompx_lock_region_t *Region) {
  DeviceRefTy Ref;
  if (!Region || !Ptr) {
    errno = EINVAL;
    return -1;
  }
  if (!lib().resolve(Device, Ref)) {
    errno = ENODEV;
    return -1;
  }
  return Ref.Fns->LockInfo(Ptr, Region);
}

OMPX_API int ompx_target_copy_counters(int Device,
                                       uint64_t Bytes[OMPX_COPY_NUM_PATHS],
                                       uint64_t Copies[OMPX_COPY_NUM_PATHS]) {
  DeviceRefTy Ref;
  if (!Bytes || !Copies) {
    errno = EINVAL;
    return -1;
  }
  if (!lib().resolve(Device, Ref)) {
    errno = ENODEV;
    return -1;
  }
  if (int32_t Err = Ref.Fns->CopyCounters(Ref.Local, Bytes, Copies)) {
    errno = Err;
    return -1;
  }
  return 0;
}

OMPX_API const char *ompx_copy_path_name(int Path) {
  static const char *const Names[] = {
      "pinned-to-device", "pinned-from-device", "staged-to-device",
      "staged-from-device", "locked-to-device", "locked-from-device",
      "device-to-device"};
  return Path >= 0 && Path < OMPX_COPY_NUM_PATHS ? Names[Path] : "unknown";
}

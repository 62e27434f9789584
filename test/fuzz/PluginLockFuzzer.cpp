// SPDX-License-Identifier: Apache-2.0
//
// Fuzzes the lock/unlock C entry points of the real host plugin
// (libomptarget.rtl.x86_64.nextgen.so, dlopened as libomptarget does) and
// the copy entry points that consult its map, against the reference model of
// test/support/PinnedMemoryModel.h and a shadow copy of every byte involved.
//
// Not loaded by libomptarget, the plugin finds no omp_target_alloc to probe
// and takes the global device numbers of data_lock/data_unlock as its local
// ones (GenericPluginTy::resolveGlobalDeviceId), which is what this fuzzer
// expects. The device-accessible address of a byte the host plugin locked is
// the byte itself, so the model runs with device offset 0; the plugin pins
// (mlock) only memory mapped readable and writable, so a lock that would
// make a new region elsewhere is refused with InvalidArgument, which this
// fuzzer decides from /proc/self/maps.
//
// The input is decoded into up to MaxOps operations over three devices with
// different pageable-copy policies (auto, staged through small bounce
// buffers, lock for the copy):
//  - data_lock / data_unlock of ranges inside real host buffers, around
//    existing regions, at the top of the address space, near null or in the
//    kernel half, with sizes of 0, negative, to a region's end and past it,
//    near INT64_MAX; on valid and invalid device numbers;
//  - __tgt_rtl_ompx_lock_info lookups;
//  - data_submit / data_retrieve (sync and async) between a real host buffer
//    and a device buffer: the bytes must arrive, the bytes around them must
//    not change, the plugin's copy counters must put exactly the locked bytes
//    (per the model) on the pinned path and the rest on the device's
//    pageable path, and an async submit must have captured the unlocked
//    bytes before it returned (they are overwritten before synchronize);
//  - HOST allocations, which the plugin registers as external regions, and
//    their deletion, refused while user locks inside remain and on any
//    device but the one that allocated the memory;
//  - invalid calls (null out-pointer, negative size, null buffer).
// Every result must match the model, every failure must print exactly one
// error line naming the entry point (a refused overlap prints nothing), and
// every success must print nothing. Each input ends by unlocking and freeing
// everything, so the next one starts from an empty map.
//
// OFFLOADIO_FUZZ_PLUGIN overrides the plugin path. The plugin's output is
// captured to be checked; OFFLOADIO_FUZZ_VERBOSE=1 lets it through instead
// (and skips those checks), to read what a crashing input printed.
#include "offloadio/ABI.h"
#include "offloadio/ExtensionLookup.h"

#include "FuzzCheck.h"
#include "PinnedMemoryModel.h"

#include "ompx_io.h"

#include <fuzzer/FuzzedDataProvider.h>
#include <sanitizer/common_interface_defs.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <dlfcn.h>
#include <unistd.h>

#ifndef OFFLOADIO_FUZZ_HOST_PLUGIN
#error "OFFLOADIO_FUZZ_HOST_PLUGIN must name the host plugin"
#endif

using namespace offloadio;
using offloadio::test::PinnedMemoryModelTy;

namespace {

constexpr int32_t NumDevices = 3;
constexpr int32_t KindDevice = 0;
constexpr int32_t KindHost = 1;
constexpr int32_t KindDefault = 3;
/// Host buffers that live as long as the process: a small one where ranges
/// collide often, and one past the 64 KiB under which the host plugin copies
/// pageable memory directly, so that staged copies in chunks (and, on
/// device 0, the copy threads) run too.
constexpr size_t ArenaSizes[] = {24 << 10, 160 << 10};
constexpr size_t NumArenas = std::size(ArenaSizes);
/// Each device's buffer, as large as the largest host buffer.
constexpr size_t DeviceBufferSize = 160 << 10;
/// HOST allocations alive at once.
constexpr size_t MaxHostAllocs = 4;
constexpr size_t MaxOps = 128;
/// Bytes checked on each side of a copy's destination.
constexpr size_t Margin = 64;

void *ptr(uintptr_t Addr) { return reinterpret_cast<void *>(Addr); }
uintptr_t addr(const void *Ptr) { return reinterpret_cast<uintptr_t>(Ptr); }

//===----------------------------------------------------------------------===//
// The plugin, loaded once
//===----------------------------------------------------------------------===//

/// The entry points used, as LLVM 16's libomptarget declares them.
struct PluginTy {
  int32_t (*InitPlugin)();
  int32_t (*NumberOfDevices)();
  int32_t (*InitDevice)(int32_t);
  void *(*DataAlloc)(int32_t, int64_t, void *, int32_t);
  int32_t (*DataDelete)(int32_t, void *, int32_t);
  int32_t (*DataSubmit)(int32_t, void *, void *, int64_t);
  int32_t (*DataSubmitAsync)(int32_t, void *, void *, int64_t,
                             __tgt_async_info *);
  int32_t (*DataRetrieve)(int32_t, void *, void *, int64_t);
  int32_t (*DataRetrieveAsync)(int32_t, void *, void *, int64_t,
                               __tgt_async_info *);
  int32_t (*Synchronize)(int32_t, __tgt_async_info *);
  int32_t (*DataLock)(int32_t, void *, int64_t, void **);
  int32_t (*DataUnlock)(int32_t, void *);
  int32_t (*LockInfo)(const void *, ompx_lock_region_t *);
  int32_t (*CopyCounters)(int32_t, uint64_t *, uint64_t *);

  /// Each device's buffer.
  char *DeviceBuffers[NumDevices] = {};
  /// The long-lived host buffers.
  std::unique_ptr<char[]> Arenas[NumArenas];
  /// What each arena and each device buffer holds when an input starts.
  std::vector<char> ArenaPatterns[NumArenas];
  std::vector<char> DevicePatterns[NumDevices];
  /// Whether the plugin's output is captured and checked.
  bool Capture = true;
  /// Where it is captured.
  std::unique_ptr<test::StderrCaptureTy> Output;
};

template <typename FnTy>
void resolve(void *Handle, const char *Name, FnTy &Fn) {
  Fn = reinterpret_cast<FnTy>(dlsym(Handle, Name));
  OFFLOADIO_FUZZ_CHECK(Fn, "the plugin does not export {0}", Name);
}

/// Device settings, read by the plugin when the device is initialised.
struct DeviceEnvTy {
  const char *PageablePath;
  const char *StagingBufferSize;
  const char *StagingBuffers;
  const char *ParallelStagingThreshold;
};
constexpr DeviceEnvTy DeviceEnv[NumDevices] = {
    // Copies of unlocked memory above 64 KiB are staged in 16 KiB chunks,
    // from 96 KiB on by the copy threads.
    {"auto", "16K", "4", "96K"},
    // Every unlocked byte goes through two 4 KiB bounce buffers.
    {"staged", "4K", "2", "1M"},
    // Unlocked memory is locked for the copy.
    {"lock", "4M", "16", "1M"},
};

PluginTy &loadPlugin() {
  static PluginTy P = [] {
    PluginTy P;
    // Sanitizer reports must not vanish into a capture.
    __sanitizer_set_report_fd(reinterpret_cast<void *>(intptr_t(dup(2))));
    const char *Verbose = std::getenv("OFFLOADIO_FUZZ_VERBOSE");
    P.Capture = !(Verbose && *Verbose && std::strcmp(Verbose, "0") != 0);
    P.Output = std::make_unique<test::StderrCaptureTy>();
    OFFLOADIO_FUZZ_CHECK(P.Output->works(), "cannot capture stderr: {0}",
                         std::strerror(errno));
    // Read when the plugin is created.
    setenv("OFFLOADIO_HOST_NUM_DEVICES", "3", 1);
    setenv("OFFLOADIO_COPY_THREADS", "2", 1);
    unsetenv("LIBOMPTARGET_INFO");
    unsetenv("LIBOMPTARGET_LOCK_MAPPED_HOST_BUFFERS");

    const char *Path = std::getenv("OFFLOADIO_FUZZ_PLUGIN");
    if (!Path || !*Path)
      Path = OFFLOADIO_FUZZ_HOST_PLUGIN;
    void *Handle = dlopen(Path, RTLD_NOW | RTLD_LOCAL);
    OFFLOADIO_FUZZ_CHECK(Handle, "dlopen({0}): {1}", Path, dlerror());
    // No libomptarget in this process: global device ids must be local.
    OFFLOADIO_FUZZ_CHECK(!dlsym(RTLD_DEFAULT, "omp_target_alloc"),
                         "omp_target_alloc is loaded: the plugin would probe "
                         "libomptarget for device ids");
    resolve(Handle, "__tgt_rtl_init_plugin", P.InitPlugin);
    resolve(Handle, "__tgt_rtl_number_of_devices", P.NumberOfDevices);
    resolve(Handle, "__tgt_rtl_init_device", P.InitDevice);
    resolve(Handle, "__tgt_rtl_data_alloc", P.DataAlloc);
    resolve(Handle, "__tgt_rtl_data_delete", P.DataDelete);
    resolve(Handle, "__tgt_rtl_data_submit", P.DataSubmit);
    resolve(Handle, "__tgt_rtl_data_submit_async", P.DataSubmitAsync);
    resolve(Handle, "__tgt_rtl_data_retrieve", P.DataRetrieve);
    resolve(Handle, "__tgt_rtl_data_retrieve_async", P.DataRetrieveAsync);
    resolve(Handle, "__tgt_rtl_synchronize", P.Synchronize);
    resolve(Handle, "__tgt_rtl_data_lock", P.DataLock);
    resolve(Handle, "__tgt_rtl_data_unlock", P.DataUnlock);
    // The extension calls, through the plugin's table.
    offloadio_extension_table Table;
    OFFLOADIO_FUZZ_CHECK(offloadio_extensions_of(Handle, &Table) == 0,
                         "the plugin answers no extension table");
    P.LockInfo = Table.LockInfo;
    P.CopyCounters = Table.CopyCounters;
    OFFLOADIO_FUZZ_CHECK(P.LockInfo && P.CopyCounters,
                         "the plugin's extension table lacks lock_info or "
                         "copy_counters");

    OFFLOADIO_FUZZ_CHECK(P.InitPlugin() == OFFLOAD_SUCCESS, "init_plugin");
    OFFLOADIO_FUZZ_CHECK(P.NumberOfDevices() == NumDevices,
                         "{0} devices, expected {1}", P.NumberOfDevices(),
                         NumDevices);
    for (int32_t D = 0; D < NumDevices; ++D) {
      setenv("OFFLOADIO_PAGEABLE_PATH", DeviceEnv[D].PageablePath, 1);
      setenv("OFFLOADIO_STAGING_BUFFER_SIZE", DeviceEnv[D].StagingBufferSize,
             1);
      setenv("OFFLOADIO_STAGING_BUFFERS", DeviceEnv[D].StagingBuffers, 1);
      setenv("OFFLOADIO_PARALLEL_STAGING_THRESHOLD",
             DeviceEnv[D].ParallelStagingThreshold, 1);
      OFFLOADIO_FUZZ_CHECK(P.InitDevice(D) == OFFLOAD_SUCCESS,
                           "init_device({0})", D);
      P.DeviceBuffers[D] = static_cast<char *>(
          P.DataAlloc(D, DeviceBufferSize, nullptr, KindDevice));
      OFFLOADIO_FUZZ_CHECK(P.DeviceBuffers[D], "data_alloc on device {0}", D);
    }
    for (const char *Name :
         {"OFFLOADIO_PAGEABLE_PATH", "OFFLOADIO_STAGING_BUFFER_SIZE",
          "OFFLOADIO_STAGING_BUFFERS",
          "OFFLOADIO_PARALLEL_STAGING_THRESHOLD"})
      unsetenv(Name);
    for (size_t I = 0; I < NumArenas; ++I) {
      P.Arenas[I].reset(new char[ArenaSizes[I]]);
      P.ArenaPatterns[I].resize(ArenaSizes[I]);
      for (size_t J = 0; J < ArenaSizes[I]; ++J)
        P.ArenaPatterns[I][J] = char(J * 13 + I + 1);
    }
    for (int32_t D = 0; D < NumDevices; ++D) {
      P.DevicePatterns[D].resize(DeviceBufferSize);
      for (size_t J = 0; J < DeviceBufferSize; ++J)
        P.DevicePatterns[D][J] = char(J * 29 + D + 7);
    }
    return P;
  }();
  return P;
}

//===----------------------------------------------------------------------===//
// One input
//===----------------------------------------------------------------------===//

/// A real host buffer and what it must hold.
struct HostBufferTy {
  char *Ptr;
  size_t Size;
  std::vector<char> Shadow;
  /// The device that allocated it (HOST memory), or -1 for an arena.
  int32_t Owner;
};

/// Whether every byte of [Start, Start+Size) is mapped readable and
/// writable in this process, as /proc/self/maps says (sorted, disjoint
/// "start-end perms ..." lines).
bool mappedReadWrite(uintptr_t Start, size_t Size) {
  FILE *Maps = std::fopen("/proc/self/maps", "r");
  OFFLOADIO_FUZZ_CHECK(Maps, "cannot open /proc/self/maps: {0}",
                       std::strerror(errno));
  uintptr_t Cur = Start, End = Start + Size;
  char Line[4096];
  while (Cur < End && std::fgets(Line, sizeof Line, Maps)) {
    unsigned long MapStart, MapEnd;
    char Perms[5];
    if (std::sscanf(Line, "%lx-%lx %4s", &MapStart, &MapEnd, Perms) != 3 ||
        MapEnd <= Cur)
      continue;
    if (MapStart > Cur || Perms[0] != 'r' || Perms[1] != 'w')
      break;
    Cur = MapEnd;
  }
  std::fclose(Maps);
  return Cur >= End;
}

/// What a call must print.
enum class ReportTy { Nothing, ErrorLine };

class PluginFuzzerTy {
public:
  PluginFuzzerTy(const uint8_t *Data, size_t Size)
      : P(loadPlugin()), Input(Data, Size), Model(0) {}

  void run();

private:
  /// Call \p Fn with the plugin's output captured, and check the output.
  template <typename FnTy>
  auto call(const char *Entry, ReportTy Report, FnTy Fn);

  int32_t pickDevice(bool AllowInvalid);
  uintptr_t pickAddr();
  int64_t pickSize(uintptr_t Start);
  /// A range [Off, Off+Len) of a buffer of \p Size bytes.
  std::pair<size_t, size_t> pickWindow(size_t Size);

  /// One copy between a window of a host buffer and device memory, and the
  /// device's copy counters before it.
  struct CopyTy {
    int32_t Device;
    HostBufferTy *B;
    size_t Off, Len, DevOff;
    bool Async;
    char *Dev;       ///< The device side.
    uintptr_t Start; ///< The host side.
    uint64_t Before[OMPX_COPY_NUM_PATHS];
  };
  CopyTy pickCopy();

  void lock(int32_t Device, uintptr_t Start, int64_t Size);
  void lockSubBuffer();
  void unlock(int32_t Device, uintptr_t Addr);
  void lockInfo(uintptr_t Addr);
  void submit();
  void retrieve();
  void allocHost();
  void freeHost(size_t Index, int32_t Device, int32_t Kind);
  void invalidCall();

  /// The locked bytes of [Start, Start+Len) went pinned, the rest by the
  /// device's pageable path (\p ToDevice: submit).
  void checkCounters(int32_t Device, bool ToDevice, uintptr_t Start, size_t Len,
                     const uint64_t *Before);
  /// Every region of the model is the plugin's, with its references.
  void checkRegions();
  void checkBytes(const char *What, const char *Mem,
                  const std::vector<char> &Shadow, size_t Begin, size_t End);
  void cleanUp();

  PluginTy &P;
  FuzzedDataProvider Input;
  PinnedMemoryModelTy Model;
  /// The arenas, then the live HOST allocations.
  std::vector<HostBufferTy> Buffers;
  std::vector<char> DeviceShadows[NumDevices];
};

template <typename FnTy>
auto PluginFuzzerTy::call(const char *Entry, ReportTy Report, FnTy Fn) {
  if (!P.Capture)
    return Fn();
  std::string Out;
  auto Result = P.Output->run(Fn, Out);
  if (Report == ReportTy::Nothing) {
    OFFLOADIO_FUZZ_CHECK(Out.empty(), "{0} printed: {1}", Entry,
                         llvm::StringRef(Out));
    return Result;
  }
  // "offload-io(x86_64)[ device N]: error: <entry>: <message>\n"
  llvm::StringRef Text(Out);
  OFFLOADIO_FUZZ_CHECK(
      Text.starts_with("offload-io(x86_64)") &&
          Text.contains(std::string(": error: ") + Entry + ": ") &&
          Text.ends_with("\n") && Text.count('\n') == 1,
      "{0} must report one error line, printed: '{1}'", Entry, Text);
  return Result;
}

int32_t PluginFuzzerTy::pickDevice(bool AllowInvalid) {
  uint8_t B = Input.ConsumeIntegral<uint8_t>();
  if (!AllowInvalid || B >= 16)
    return B % NumDevices;
  static const int32_t Invalid[] = {-1, NumDevices, 64, INT32_MIN, INT32_MAX};
  return Invalid[B % std::size(Invalid)];
}

uintptr_t PluginFuzzerTy::pickAddr() {
  switch (Input.ConsumeIntegralInRange<unsigned>(0, 8)) {
  case 0:
  case 1:
  case 2:
  case 3: {
    const HostBufferTy &B =
        Buffers[Input.ConsumeIntegralInRange<size_t>(0, Buffers.size() - 1)];
    return addr(B.Ptr) + Input.ConsumeIntegralInRange<size_t>(0, B.Size);
  }
  case 4:
  case 5:
    return pickNearRegion(Input, Model.Regions, addr(Buffers[0].Ptr));
  case 6:
    // The kernel half: never memory of this process, so a lock there is
    // refused as unmapped and never collides with a HOST allocation.
    return Input.ConsumeIntegral<uintptr_t>() | (uintptr_t(1) << 63);
  case 7:
    return UINTPTR_MAX - Input.ConsumeIntegral<uint16_t>();
  default:
    return Input.ConsumeIntegralInRange<uintptr_t>(0, 64);
  }
}

int64_t PluginFuzzerTy::pickSize(uintptr_t Start) {
  switch (Input.ConsumeIntegralInRange<unsigned>(0, 7)) {
  case 0:
  case 1:
    return 1 + Input.ConsumeIntegral<uint8_t>();
  case 2: {
    // To the end of the containing region or buffer, or a little short or
    // past it.
    uintptr_t End = Start + 1 + Input.ConsumeIntegral<uint8_t>();
    int I = Model.containing(Start);
    if (I >= 0) {
      End = Model.Regions[I].End;
    } else {
      for (const HostBufferTy &B : Buffers)
        if (addr(B.Ptr) <= Start && Start < addr(B.Ptr) + B.Size)
          End = addr(B.Ptr) + B.Size;
    }
    // Unsigned, so that a wrap is the test's and not undefined.
    return int64_t(uint64_t(End - Start) +
                   uint64_t(Input.ConsumeIntegralInRange<int64_t>(-2, 2)));
  }
  case 3:
    return Input.ConsumeIntegral<uint16_t>();
  case 4:
    return 0;
  case 5:
    return -int64_t(Input.ConsumeIntegral<uint8_t>()) - 1;
  case 6:
    return INT64_MAX - Input.ConsumeIntegral<uint8_t>();
  default:
    // Up to the top of the address space, or past it; as int64_t this is
    // negative for low addresses, which the plugin must refuse too.
    return int64_t(uint64_t(UINTPTR_MAX - Start) +
                   uint64_t(Input.ConsumeIntegralInRange<int64_t>(-1, 2)));
  }
}

std::pair<size_t, size_t> PluginFuzzerTy::pickWindow(size_t Size) {
  size_t Off, Len;
  switch (Input.ConsumeIntegralInRange<unsigned>(0, 3)) {
  case 0:
    Off = 0;
    Len = Size;
    break;
  case 1:
    Off = Input.ConsumeIntegralInRange<size_t>(0, Size);
    Len = Size - Off;
    break;
  default:
    Off = Input.ConsumeIntegralInRange<size_t>(0, Size);
    Len = Input.ConsumeIntegralInRange<size_t>(
        0, std::min<size_t>(Size - Off, 4096));
    break;
  }
  return {Off, Len};
}

void PluginFuzzerTy::lock(int32_t Device, uintptr_t Start, int64_t Size) {
  ErrorCode Want = ErrorCode::InvalidDevice;
  uintptr_t WantPtr = 0;
  if (Device >= 0 && Device < NumDevices) {
    size_t RegionsBefore = Model.Regions.size();
    if (Size <= 0)
      Want = ErrorCode::InvalidArgument;
    else
      Want = Model.lock(Start, size_t(Size), false, WantPtr);
    // A new region is pinned, which the plugin refuses for memory that is
    // not mapped read-write.
    if (Model.Regions.size() > RegionsBefore &&
        !mappedReadWrite(Start, size_t(Size))) {
      Model.Regions.pop_back();
      Want = ErrorCode::InvalidArgument;
      WantPtr = 0;
    }
  }
  void *Locked = ptr(0x5a5a);
  // A refused overlap is an answer, not an error: nothing is printed.
  ReportTy Report = Want == ErrorCode::Success || Want == ErrorCode::Overlap
                        ? ReportTy::Nothing
                        : ReportTy::ErrorLine;
  int32_t Rc = call("data_lock", Report, [&] {
    return P.DataLock(Device, ptr(Start), Size, &Locked);
  });
  OFFLOADIO_FUZZ_CHECK((Rc == OFFLOAD_SUCCESS) == (Want == ErrorCode::Success),
                       "data_lock({0}, {1:x}, {2}) returned {3}; model '{4}'",
                       Device, Start, Size, Rc, describe(Want));
  OFFLOADIO_FUZZ_CHECK(addr(Locked) == WantPtr,
                       "data_lock({0}, {1:x}, {2}) gave {3:x}, model {4:x}",
                       Device, Start, Size, addr(Locked), WantPtr);
}

void PluginFuzzerTy::lockSubBuffer() {
  if (Model.Regions.empty())
    return;
  const auto &R = Model.Regions[Input.ConsumeIntegralInRange<size_t>(
      0, Model.Regions.size() - 1)];
  uintptr_t Offset =
      Input.ConsumeIntegralInRange<uintptr_t>(0, R.End - R.Start - 1);
  size_t Size = Input.ConsumeIntegralInRange<size_t>(
      1, std::min<size_t>(R.End - R.Start - Offset, INT64_MAX));
  lock(pickDevice(false), R.Start + Offset, int64_t(Size));
}

void PluginFuzzerTy::unlock(int32_t Device, uintptr_t Addr) {
  ErrorCode Want = Device >= 0 && Device < NumDevices
                       ? Model.unlock(Addr, false)
                       : ErrorCode::InvalidDevice;
  int32_t Rc =
      call("data_unlock",
           Want == ErrorCode::Success ? ReportTy::Nothing : ReportTy::ErrorLine,
           [&] { return P.DataUnlock(Device, ptr(Addr)); });
  OFFLOADIO_FUZZ_CHECK((Rc == OFFLOAD_SUCCESS) == (Want == ErrorCode::Success),
                       "data_unlock({0}, {1:x}) returned {2}; model '{3}'",
                       Device, Addr, Rc, describe(Want));
}

void PluginFuzzerTy::lockInfo(uintptr_t Addr) {
  ompx_lock_region_t Info;
  std::memset(&Info, 0xa5, sizeof(Info));
  int32_t Found = call("ompx_lock_info", ReportTy::Nothing,
                       [&] { return P.LockInfo(ptr(Addr), &Info); });
  int I = Model.containing(Addr);
  OFFLOADIO_FUZZ_CHECK(Found == (I >= 0 ? 1 : 0),
                       "lock_info({0:x}) returned {1}; model region {2}", Addr,
                       Found, I);
  if (I < 0)
    return;
  const auto &R = Model.Regions[I];
  OFFLOADIO_FUZZ_CHECK(
      addr(Info.host_ptr) == R.Start && Info.size == R.End - R.Start &&
          addr(Info.device_ptr) == R.Dev && Info.references == R.References &&
          bool(Info.external) == R.External,
      "lock_info({0:x}): [{1:x}, +{2:x}) dev {3:x} refs {4} "
      "ext {5}; model [{6:x}, {7:x}) refs {8} ext {9}",
      Addr, addr(Info.host_ptr), Info.size, addr(Info.device_ptr),
      Info.references, Info.external, R.Start, R.End, R.References, R.External);
}

void PluginFuzzerTy::checkCounters(int32_t Device, bool ToDevice,
                                   uintptr_t Start, size_t Len,
                                   const uint64_t *Before) {
  uint64_t After[OMPX_COPY_NUM_PATHS], Copies[OMPX_COPY_NUM_PATHS];
  OFFLOADIO_FUZZ_CHECK(P.CopyCounters(Device, After, Copies) == 0,
                       "copy_counters({0})", Device);
  uint64_t Delta[OMPX_COPY_NUM_PATHS];
  for (unsigned I = 0; I < OMPX_COPY_NUM_PATHS; ++I)
    Delta[I] = After[I] - Before[I];
  uint64_t Locked = Model.lockedBytes(Start, Len);
  int Pinned =
      ToDevice ? OMPX_COPY_PINNED_TO_DEVICE : OMPX_COPY_PINNED_FROM_DEVICE;
  int Staged =
      ToDevice ? OMPX_COPY_STAGED_TO_DEVICE : OMPX_COPY_STAGED_FROM_DEVICE;
  int LockedPath =
      ToDevice ? OMPX_COPY_LOCKED_TO_DEVICE : OMPX_COPY_LOCKED_FROM_DEVICE;
  // Device 2 locks unlocked memory for the copy; the others stage it.
  int Pageable = Device == 2 ? LockedPath : Staged;
  for (int I = 0; I < OMPX_COPY_NUM_PATHS; ++I) {
    uint64_t Want = I == Pinned ? Locked : I == Pageable ? Len - Locked : 0;
    OFFLOADIO_FUZZ_CHECK(Delta[I] == Want,
                         "{0} of {1} bytes at {2:x} on device {3} ({4} "
                         "locked): {5} bytes counted on path {6}, expected {7}",
                         ToDevice ? "submit" : "retrieve", Len, Start, Device,
                         Locked, Delta[I], I, Want);
  }
}

void PluginFuzzerTy::checkBytes(const char *What, const char *Mem,
                                const std::vector<char> &Shadow, size_t Begin,
                                size_t End) {
  Begin = Begin > Margin ? Begin - Margin : 0;
  End = std::min(Shadow.size(), End + Margin);
  if (Begin >= End ||
      std::memcmp(Mem + Begin, Shadow.data() + Begin, End - Begin) == 0)
    return;
  size_t I = Begin;
  while (Mem[I] == Shadow[I])
    ++I;
  OFFLOADIO_FUZZ_CHECK(false, "{0}: byte {1} is {2}, expected {3}", What, I,
                       int(uint8_t(Mem[I])), int(uint8_t(Shadow[I])));
}

PluginFuzzerTy::CopyTy PluginFuzzerTy::pickCopy() {
  CopyTy C;
  C.Device = pickDevice(false);
  C.B = &Buffers[Input.ConsumeIntegralInRange<size_t>(0, Buffers.size() - 1)];
  std::tie(C.Off, C.Len) = pickWindow(C.B->Size);
  C.DevOff = Input.ConsumeIntegralInRange<size_t>(0, DeviceBufferSize - C.Len);
  C.Async = Input.ConsumeBool();
  C.Dev = P.DeviceBuffers[C.Device] + C.DevOff;
  C.Start = addr(C.B->Ptr) + C.Off;
  uint64_t Copies[OMPX_COPY_NUM_PATHS];
  OFFLOADIO_FUZZ_CHECK(P.CopyCounters(C.Device, C.Before, Copies) == 0,
                       "copy_counters({0})", C.Device);
  return C;
}

void PluginFuzzerTy::submit() {
  CopyTy C = pickCopy();
  __tgt_async_info AsyncInfo{nullptr};
  int32_t Rc = call("data_submit", ReportTy::Nothing, [&] {
    return C.Async ? P.DataSubmitAsync(C.Device, C.Dev, C.B->Ptr + C.Off, C.Len,
                                       &AsyncInfo)
                   : P.DataSubmit(C.Device, C.Dev, C.B->Ptr + C.Off, C.Len);
  });
  OFFLOADIO_FUZZ_CHECK(Rc == OFFLOAD_SUCCESS,
                       "data_submit{0}({1}, {2} bytes at {3:x}) failed",
                       C.Async ? "_async" : "", C.Device, C.Len, C.Start);
  if (C.Async) {
    // Unlocked bytes were captured (staged, or locked and waited for)
    // before the call returned: the caller may reuse them at once. Locked
    // ones are the DMA's until synchronize.
    for (const PinnedSegmentTy &Seg : Model.segments(C.Start, C.Len, SIZE_MAX))
      if (!Seg.DevAccessiblePtr)
        for (size_t I = 0; I < Seg.Size; ++I)
          const_cast<char *>(Seg.HstPtr)[I] ^= 0x5a;
    if (AsyncInfo.Queue)
      OFFLOADIO_FUZZ_CHECK(call("synchronize", ReportTy::Nothing,
                                [&] {
                                  return P.Synchronize(C.Device, &AsyncInfo);
                                }) == OFFLOAD_SUCCESS &&
                               !AsyncInfo.Queue,
                           "synchronize({0}) after a submit", C.Device);
    std::memcpy(C.B->Ptr + C.Off, C.B->Shadow.data() + C.Off, C.Len);
  }
  std::memcpy(DeviceShadows[C.Device].data() + C.DevOff,
              C.B->Shadow.data() + C.Off, C.Len);
  checkBytes("device memory after a submit", P.DeviceBuffers[C.Device],
             DeviceShadows[C.Device], C.DevOff, C.DevOff + C.Len);
  checkCounters(C.Device, true, C.Start, C.Len, C.Before);
}

void PluginFuzzerTy::retrieve() {
  CopyTy C = pickCopy();
  __tgt_async_info AsyncInfo{nullptr};
  int32_t Rc = call("data_retrieve", ReportTy::Nothing, [&] {
    return C.Async ? P.DataRetrieveAsync(C.Device, C.B->Ptr + C.Off, C.Dev,
                                         C.Len, &AsyncInfo)
                   : P.DataRetrieve(C.Device, C.B->Ptr + C.Off, C.Dev, C.Len);
  });
  OFFLOADIO_FUZZ_CHECK(Rc == OFFLOAD_SUCCESS,
                       "data_retrieve{0}({1}, {2} bytes to {3:x}) failed",
                       C.Async ? "_async" : "", C.Device, C.Len, C.Start);
  if (AsyncInfo.Queue)
    OFFLOADIO_FUZZ_CHECK(call("synchronize", ReportTy::Nothing,
                              [&] {
                                return P.Synchronize(C.Device, &AsyncInfo);
                              }) == OFFLOAD_SUCCESS &&
                             !AsyncInfo.Queue,
                         "synchronize({0}) after a retrieve", C.Device);
  std::memcpy(C.B->Shadow.data() + C.Off,
              DeviceShadows[C.Device].data() + C.DevOff, C.Len);
  checkBytes("host memory after a retrieve", C.B->Ptr, C.B->Shadow, C.Off,
             C.Off + C.Len);
  checkCounters(C.Device, false, C.Start, C.Len, C.Before);
}

void PluginFuzzerTy::allocHost() {
  if (Buffers.size() >= NumArenas + MaxHostAllocs)
    return;
  int32_t Device = pickDevice(false);
  int64_t Size = Input.ConsumeIntegralInRange<int64_t>(0, 8192);
  // The address is only known afterwards; the plugin prints an error only
  // when the new memory collides with a region locked before (which only a
  // region outside the fuzzer's buffers can do).
  bool Foreign = false;
  for (const auto &R : Model.Regions) {
    bool Known = false;
    for (const HostBufferTy &B : Buffers)
      Known |= addr(B.Ptr) <= R.Start && R.End <= addr(B.Ptr) + B.Size;
    Foreign |= !Known;
  }
  std::string Out;
  auto Alloc = [&] { return P.DataAlloc(Device, Size, nullptr, KindHost); };
  void *Ptr = P.Capture ? P.Output->run(Alloc, Out) : Alloc();
  if (!Ptr) {
    OFFLOADIO_FUZZ_CHECK(Foreign,
                         "data_alloc({0}, {1}, HOST) failed with no region "
                         "it could collide with: {2}",
                         Device, Size, llvm::StringRef(Out));
    return;
  }
  OFFLOADIO_FUZZ_CHECK(Out.empty() || !P.Capture, "data_alloc printed: {0}",
                       llvm::StringRef(Out));
  // A zero-length allocation still gets one byte.
  size_t Bytes = Size ? size_t(Size) : 1;
  ErrorCode Want = Model.registerExternal(addr(Ptr), addr(Ptr), Bytes);
  OFFLOADIO_FUZZ_CHECK(Want == ErrorCode::Success,
                       "data_alloc({0}, {1}, HOST) gave {2:x}, which the model "
                       "cannot register: '{3}'",
                       Device, Size, addr(Ptr), describe(Want));
  HostBufferTy B{static_cast<char *>(Ptr), Bytes, std::vector<char>(Bytes),
                 Device};
  for (size_t I = 0; I < Bytes; ++I)
    B.Shadow[I] = char(I * 7 + 3);
  std::memcpy(B.Ptr, B.Shadow.data(), Bytes);
  Buffers.push_back(std::move(B));
}

void PluginFuzzerTy::freeHost(size_t Index, int32_t Device, int32_t Kind) {
  HostBufferTy &B = Buffers[Index];
  // Only the device that allocated the memory can free it; another one
  // must refuse without touching the registration.
  ErrorCode Want = Device == B.Owner ? Model.unregisterExternal(addr(B.Ptr))
                                     : ErrorCode::NotFound;
  int32_t Rc =
      call("data_delete",
           Want == ErrorCode::Success ? ReportTy::Nothing : ReportTy::ErrorLine,
           [&] { return P.DataDelete(Device, B.Ptr, Kind); });
  OFFLOADIO_FUZZ_CHECK((Rc == OFFLOAD_SUCCESS) == (Want == ErrorCode::Success),
                       "data_delete({0}, {1:x}, kind {2}) of memory of device "
                       "{3} returned {4}; model '{5}'",
                       Device, addr(B.Ptr), Kind, B.Owner, Rc, describe(Want));
  if (Rc == OFFLOAD_SUCCESS)
    Buffers.erase(Buffers.begin() + Index);
}

void PluginFuzzerTy::invalidCall() {
  int32_t Device = pickDevice(false);
  const HostBufferTy &B =
      Buffers[Input.ConsumeIntegralInRange<size_t>(0, Buffers.size() - 1)];
  char *Dev = P.DeviceBuffers[Device];
  int32_t Rc = OFFLOAD_SUCCESS;
  const char *What = "";
  switch (Input.ConsumeIntegralInRange<unsigned>(0, 4)) {
  case 0:
    What = "data_lock with a null out-pointer";
    Rc = call("data_lock", ReportTy::ErrorLine,
              [&] { return P.DataLock(Device, B.Ptr, 16, nullptr); });
    break;
  case 1:
    What = "data_submit of a negative size";
    Rc = call("data_submit", ReportTy::ErrorLine,
              [&] { return P.DataSubmit(Device, Dev, B.Ptr, -16); });
    break;
  case 2:
    What = "data_submit from null";
    Rc = call("data_submit", ReportTy::ErrorLine,
              [&] { return P.DataSubmit(Device, Dev, nullptr, 16); });
    break;
  case 3:
    What = "data_retrieve into null";
    Rc = call("data_retrieve", ReportTy::ErrorLine,
              [&] { return P.DataRetrieve(Device, nullptr, Dev, 16); });
    break;
  default:
    What = "data_unlock of null";
    Rc = call("data_unlock", ReportTy::ErrorLine,
              [&] { return P.DataUnlock(Device, nullptr); });
    break;
  }
  OFFLOADIO_FUZZ_CHECK(Rc != OFFLOAD_SUCCESS, "{0} succeeded", What);
}

void PluginFuzzerTy::checkRegions() {
  for (const auto &R : Model.Regions) {
    ompx_lock_region_t Info;
    OFFLOADIO_FUZZ_CHECK(P.LockInfo(ptr(R.Start), &Info) == 1 &&
                             addr(Info.host_ptr) == R.Start &&
                             Info.size == R.End - R.Start &&
                             Info.references == R.References,
                         "the plugin lost or changed region [{0:x}, {1:x}) "
                         "with {2} references",
                         R.Start, R.End, R.References);
  }
}

void PluginFuzzerTy::cleanUp() {
  // Drop every lock, then every HOST allocation, so that the next input
  // starts from an empty map.
  while (!Model.Regions.empty()) {
    const auto &R = Model.Regions.front();
    if (!R.External || R.References > 1) {
      unlock(0, R.LockStarts.back());
      continue;
    }
    size_t Index = Buffers.size();
    for (size_t I = NumArenas; I < Buffers.size(); ++I)
      if (addr(Buffers[I].Ptr) == R.Start)
        Index = I;
    OFFLOADIO_FUZZ_CHECK(Index < Buffers.size(),
                         "external region {0:x} is no HOST allocation",
                         R.Start);
    freeHost(Index, Buffers[Index].Owner, KindHost);
  }
  OFFLOADIO_FUZZ_CHECK(Buffers.size() == NumArenas,
                       "{0} HOST allocations were not registered",
                       Buffers.size() - NumArenas);
  for (size_t I = 0; I < NumArenas; ++I)
    checkBytes("an arena at the end", Buffers[I].Ptr, Buffers[I].Shadow, 0,
               Buffers[I].Size);
  for (int32_t D = 0; D < NumDevices; ++D)
    checkBytes("a device buffer at the end", P.DeviceBuffers[D],
               DeviceShadows[D], 0, DeviceBufferSize);
  for (const HostBufferTy &B : Buffers) {
    ompx_lock_region_t Info;
    OFFLOADIO_FUZZ_CHECK(P.LockInfo(B.Ptr, &Info) == 0 &&
                             P.LockInfo(B.Ptr + B.Size - 1, &Info) == 0,
                         "a region is left in the plugin's map");
  }
}

void PluginFuzzerTy::run() {
  // Known contents everywhere, so that a byte that moves when it should not
  // is caught.
  for (size_t I = 0; I < NumArenas; ++I) {
    std::memcpy(P.Arenas[I].get(), P.ArenaPatterns[I].data(), ArenaSizes[I]);
    Buffers.push_back(
        HostBufferTy{P.Arenas[I].get(), ArenaSizes[I], P.ArenaPatterns[I], -1});
  }
  for (int32_t D = 0; D < NumDevices; ++D) {
    std::memcpy(P.DeviceBuffers[D], P.DevicePatterns[D].data(),
                DeviceBufferSize);
    DeviceShadows[D] = P.DevicePatterns[D];
  }

  for (size_t Step = 0; Step < MaxOps && Input.remaining_bytes() > 1; ++Step) {
    switch (Input.ConsumeIntegralInRange<unsigned>(0, 12)) {
    case 0:
    case 1: {
      int32_t Device = pickDevice(true);
      uintptr_t Start = pickAddr();
      lock(Device, Start, pickSize(Start));
      break;
    }
    case 2:
      lockSubBuffer();
      break;
    case 3:
    case 4: {
      int32_t Device = pickDevice(true);
      unlock(Device, pickAddr());
      break;
    }
    case 5:
      lockInfo(pickAddr());
      break;
    case 6:
    case 7:
      submit();
      break;
    case 8:
    case 9:
      retrieve();
      break;
    case 10:
      allocHost();
      break;
    case 11:
      if (Buffers.size() > NumArenas) {
        size_t Index =
            Input.ConsumeIntegralInRange<size_t>(NumArenas, Buffers.size() - 1);
        int32_t Device = Input.ConsumeIntegral<uint8_t>() < 32
                             ? pickDevice(false)
                             : Buffers[Index].Owner;
        freeHost(Index, Device, Input.ConsumeBool() ? KindHost : KindDefault);
      }
      break;
    default:
      invalidCall();
      break;
    }
    checkRegions();
  }
  cleanUp();
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *Argc, char ***Argv) {
  loadPlugin();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  PluginFuzzerTy(Data, Size).run();
  return 0;
}

// SPDX-License-Identifier: Apache-2.0
//
// The file engine's settings, read once from OMPX_IO_* when a device's
// engine is created; their names, defaults and valid values are declared in
// Settings.def.
#ifndef OFFLOADIO_IO_IOCONFIG_H
#define OFFLOADIO_IO_IOCONFIG_H

#include "offloadio/SettingTable.h"

#include <cstddef>
#include <string>

namespace offloadio {

struct ProcessShareTy;

/// The paths, numbered as enum ompx_io_path.
enum class IOPathTy : unsigned {
  /// pread/pwrite straight into memory the host addresses (named "direct").
  HostAddressable = 0,
  Fastpath = 1, ///< The vendor's storage DMA.
  Staged = 2,   ///< Through pinned bounce buffers.
  /// Number of the engine's paths, not a path: its number is
  /// OMPX_IO_PATH_HOST, the initial device's transfers, which libompx_io
  /// makes without any engine.
  Count
};

/// Printable name of a path; "unknown" for Count.
const char *ioPathName(IOPathTy Path);

/// When the aligned middle of a request is read or written with O_DIRECT.
enum class IODirectPolicyTy : unsigned {
  Auto = 0, ///< When the caller's descriptor has O_DIRECT.
  On = 1,   ///< Also through an O_DIRECT reopen of a buffered descriptor.
  Off = 2,  ///< Never; an O_DIRECT descriptor is reopened without it.
};

/// Engine settings.
struct IOConfigTy {
  /// OMPX_IO_THREADS: workers for each device in use, in one pool shared
  /// by the plugin's devices (IOWorkerPool.h), 1 to 256; from the
  /// environment the default is min(16, the process's CPUs)
  /// (ProcessShare.h).
  unsigned Threads = 4;
  /// The most workers of the pool however many devices are in use: the
  /// process's CPUs, or Threads when that is more (0: Threads).
  unsigned ThreadsCap = 0;
  static constexpr unsigned MaxThreads = settingDecl(SettingId::IOThreads).Max,
                            DefaultMaxThreads =
                                settingDecl(SettingId::IOThreads).Default;
  /// The default of Threads for a process with \p Share.
  static unsigned defaultThreads(const ProcessShareTy &Share);
  /// Where defaultThreads comes from, in words.
  static std::string defaultThreadsOrigin(const ProcessShareTy &Share);

  /// OMPX_IO_CHUNK_SIZE: bytes per chunk, 64 KiB to 1 GiB, default 2 MiB.
  /// Small chunks keep the workers' rings in the host's last-level cache,
  /// where pread writes them and the DMA engine reads them; rings larger
  /// than that cache cost a round trip through memory per byte.
  size_t ChunkSize = DefaultChunkSize;
  static constexpr size_t DefaultChunkSize =
      settingDecl(SettingId::IOChunkSize).Default;
  /// Smallest and largest chunk sizes of both chunk settings.
  static constexpr size_t MinChunkSize =
                              settingDecl(SettingId::IOChunkSize).Min,
                          MaxChunkSize =
                              settingDecl(SettingId::IOChunkSize).Max;

  /// OMPX_IO_DIRECT_CHUNK_SIZE: chunks of requests with an O_DIRECT middle,
  /// 64 KiB to 1 GiB. Disks reach their rate with large requests, the page
  /// cache with many small ones in flight.
  size_t DirectChunkSize = DefaultDirectChunkSize;
  static constexpr size_t DefaultDirectChunkSize =
      settingDecl(SettingId::IODirectChunkSize).Default;

  /// OMPX_IO_RING_DEPTH: pinned buffers per worker, 1 to 64.
  unsigned RingDepth = DefaultRingDepth;
  static constexpr unsigned DefaultRingDepth =
                                settingDecl(SettingId::IORingDepth).Default,
                            MaxRingDepth =
                                settingDecl(SettingId::IORingDepth).Max;

  /// OMPX_IO_PATH: auto (-1), direct, fastpath or staged (IOPathTy).
  int ForcedPath = -1;

  /// OMPX_IO_INFO: one line per transfer and per fallback on stderr.
  bool Info = false;

  /// OMPX_IO_ODIRECT: auto, on or off.
  IODirectPolicyTy ODirect = IODirectPolicyTy::Auto;

  /// OMPX_IO_MAX_REQUESTS: requests alive at once, 1 to 2^20.
  unsigned MaxRequests = DefaultMaxRequests;
  static constexpr unsigned DefaultMaxRequests =
                                settingDecl(SettingId::IOMaxRequests).Default,
                            MaxMaxRequests =
                                settingDecl(SettingId::IOMaxRequests).Max;

  /// Read and validate the environment.
  static IOConfigTy fromEnv();
  /// The same, with the defaults of a process with \p Share.
  static IOConfigTy fromEnv(const ProcessShareTy &Share);
};

} // namespace offloadio

#endif // OFFLOADIO_IO_IOCONFIG_H

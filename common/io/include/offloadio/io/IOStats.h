// SPDX-License-Identifier: Apache-2.0
//
// The counters of one device's file engine, as ompx_io_get_stats reports
// them.
#ifndef OFFLOADIO_IO_IOSTATS_H
#define OFFLOADIO_IO_IOSTATS_H

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

namespace offloadio {

/// Counters of one device's engine.
struct IOStatsTy {
  std::atomic<uint64_t> BytesRead[4] = {};    ///< By path (3 = host).
  std::atomic<uint64_t> BytesWritten[4] = {}; ///< By path.
  std::atomic<uint64_t> Reads[4] = {};        ///< Requests by path.
  std::atomic<uint64_t> Writes[4] = {};       ///< Requests by path.
  std::atomic<uint64_t> Fallbacks{0};         ///< Fastpath -> staged.
  std::mutex ReasonLock;                      ///< Guards LastFallback.
  std::string LastFallback;                   ///< Why the last one.
};

} // namespace offloadio

#endif // OFFLOADIO_IO_IOSTATS_H

// SPDX-License-Identifier: Apache-2.0
//
// Time spent inside the plugin's entry points, and in the stages of its
// staged copies and file transfers (OFFLOADIO_PROFILE). The difference
// between what a program measures around an OpenMP construct and what the
// plugin spent in its entry points is libomptarget's own cost plus the
// program's: the profile tells which side a latency is on. The stages tell
// where a staged copy's threads spend their time: copying on the CPU, or
// waiting for the DMA they feed.
#ifndef OFFLOADIO_PROFILE_H
#define OFFLOADIO_PROFILE_H

#include "llvm/Support/raw_ostream.h"

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>

namespace offloadio {

/// Call counts and accumulated times per entry point or stage. Names are
/// told apart by their address (a string literal of the C layer, or one of
/// ProfileStage below); the table is fixed, so recording never allocates.
/// Stage times are summed over the threads that run them.
class TimeProfileTy {
public:
  /// \p Enabled: OFFLOADIO_PROFILE (PluginSettingsTy).
  explicit TimeProfileTy(bool Enabled);

  /// Whether calls are being timed. One relaxed load.
  bool enabled() const { return Enabled; }

  /// Add one call of \p EntryPoint (or stage) that took \p Nanos.
  void record(const char *EntryPoint, uint64_t Nanos);

  /// Print one line per entry point or stage run since the last print (calls,
  /// total and mean time), under a heading naming \p PluginName, then start
  /// counting afresh. Prints nothing when nothing was called.
  void printAndReset(llvm::raw_ostream &OS, const std::string &PluginName);

  /// Times one call from construction to destruction; nothing when
  /// \p Profile is null or not enabled.
  class ScopeTy {
  public:
    ScopeTy(TimeProfileTy &Profile, const char *EntryPoint)
        : ScopeTy(&Profile, EntryPoint) {}
    ScopeTy(TimeProfileTy *Profile, const char *EntryPoint)
        : Profile(Profile && Profile->enabled() ? Profile : nullptr),
          EntryPoint(EntryPoint) {
      if (this->Profile)
        Start = std::chrono::steady_clock::now();
    }
    ~ScopeTy() {
      if (Profile)
        Profile->record(EntryPoint,
                        uint64_t(std::chrono::duration_cast<
                                     std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now() - Start)
                                     .count()));
    }
    ScopeTy(const ScopeTy &) = delete;
    ScopeTy &operator=(const ScopeTy &) = delete;

  private:
    TimeProfileTy *Profile;
    const char *EntryPoint;
    std::chrono::steady_clock::time_point Start;
  };

private:
  struct SlotTy {
    std::atomic<const char *> Name{nullptr};
    std::atomic<uint64_t> Calls{0};
    std::atomic<uint64_t> Nanos{0};
  };
  /// More than the C layer has entry points; a call past the last slot is
  /// counted as "other".
  static constexpr size_t NumSlots = 64;

  bool Enabled = false;
  std::array<SlotTy, NumSlots> Slots;
  SlotTy Other;
};

/// The stages that TimeProfileTy times besides the entry points. One
/// definition each, so that every translation unit records the same name.
namespace ProfileStage {
/// A staged upload's copy thread: memcpy into a bounce buffer.
inline constexpr char UploadMemcpy[] = "stage: upload memcpy";
/// A staged upload's copy thread: waiting for a bounce buffer, that is for
/// the DMA out of it.
inline constexpr char UploadBufferWait[] = "stage: upload wait";
/// A staged download's copy thread: waiting for the DMA into its buffer.
inline constexpr char DownloadDmaWait[] = "stage: download wait";
/// A staged download's copy thread: memcpy out of a bounce buffer.
inline constexpr char DownloadMemcpy[] = "stage: download memcpy";
/// A file-engine worker: pread of a chunk into its pinned ring buffer.
inline constexpr char FilePread[] = "io: pread";
/// A file-engine worker: pwrite of a chunk from its pinned ring buffer.
inline constexpr char FilePwrite[] = "io: pwrite";
/// A file-engine worker: waiting for the DMA out of the ring buffer it
/// wraps onto (reads), or into the buffer it writes from (writes).
inline constexpr char FileDmaWait[] = "io: dma wait";
/// A file-engine worker: enqueueing a chunk's copy and its event.
inline constexpr char FileEnqueue[] = "io: enqueue";
} // namespace ProfileStage

} // namespace offloadio

#endif // OFFLOADIO_PROFILE_H

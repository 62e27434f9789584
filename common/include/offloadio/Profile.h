// SPDX-License-Identifier: Apache-2.0
//
// Time spent inside the plugin's entry points (OFFLOADIO_PROFILE). The
// difference between what a program measures around an OpenMP construct and
// what the plugin spent in its entry points is libomptarget's own cost plus
// the program's: the profile tells which side a latency is on.
#ifndef OFFLOADIO_PROFILE_H
#define OFFLOADIO_PROFILE_H

#include "llvm/Support/raw_ostream.h"

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>

namespace offloadio {

/// Call counts and accumulated times per entry point. Entry points are
/// told apart by the address of their name (a string literal of the C
/// layer); the table is fixed, so recording never allocates.
class EntryProfileTy {
public:
  /// \p Enabled: OFFLOADIO_PROFILE (PluginSettingsTy).
  explicit EntryProfileTy(bool Enabled);

  /// Whether calls are being timed. One relaxed load.
  bool enabled() const { return Enabled; }

  /// Add one call of \p EntryPoint that took \p Nanos.
  void record(const char *EntryPoint, uint64_t Nanos);

  /// Print one line per entry point called since the last print (calls,
  /// total and mean time), under a heading naming \p PluginName, then start
  /// counting afresh. Prints nothing when nothing was called.
  void printAndReset(llvm::raw_ostream &OS, const std::string &PluginName);

  /// Times one call from construction to destruction.
  class ScopeTy {
  public:
    ScopeTy(EntryProfileTy &Profile, const char *EntryPoint)
        : Profile(Profile.enabled() ? &Profile : nullptr),
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
    EntryProfileTy *Profile;
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

} // namespace offloadio

#endif // OFFLOADIO_PROFILE_H

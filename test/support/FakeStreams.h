// SPDX-License-Identifier: Apache-2.0
//
// Streams and events (offloadio/Stream.h) of fake devices in the unit
// tests, for which all device work is complete at once.
#ifndef OFFLOADIO_TEST_SUPPORT_FAKESTREAMS_H
#define OFFLOADIO_TEST_SUPPORT_FAKESTREAMS_H

#include "offloadio/Stream.h"

#include <atomic>

namespace offloadio::unittest {

/// A stream on which all work is complete at once: copies do nothing and
/// succeed, events record and wait trivially, host callbacks run in the
/// caller. Counts its synchronisations.
class ImmediateStreamTy : public StreamTy {
public:
  Error copyAsync(void *, const void *, size_t, CopyKindTy) override {
    return Error::success();
  }
  Error recordEvent(EventTy &) override { return Error::success(); }
  Error waitEvent(EventTy &) override { return Error::success(); }
  Error hostCallback(HostCallbackTy Fn, void *Data) override {
    return Fn(Data);
  }
  Error synchronize() override {
    ++Syncs;
    return Error::success();
  }
  Expected<bool> query() override { return true; }

  /// synchronize() calls so far.
  std::atomic<unsigned> Syncs{0};
};

/// An event that is always complete. Counts the waits for it.
class CompletedEventTy final : public EventTy {
public:
  Error synchronize() override {
    ++Waits;
    return Error::success();
  }
  Expected<bool> query() override { return true; }

  /// synchronize() calls so far.
  std::atomic<unsigned> Waits{0};
};

} // namespace offloadio::unittest

#endif // OFFLOADIO_TEST_SUPPORT_FAKESTREAMS_H

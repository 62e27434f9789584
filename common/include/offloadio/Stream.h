// SPDX-License-Identifier: Apache-2.0
//
// Streams and events: the backend's in-order queues of device work. Every
// enqueue returns at once; errors of queued work are kept by the stream and
// reported to whoever synchronises it.
#ifndef OFFLOADIO_STREAM_H
#define OFFLOADIO_STREAM_H

#include "offloadio/Error.h"

#include <cstddef>

namespace offloadio {

/// Direction of a copy, so that a backend can pick its engine.
enum class CopyKindTy { HostToDevice, DeviceToHost, DeviceToDevice, HostToHost };

/// Printable name of a copy kind.
const char *copyKindName(CopyKindTy Kind);

/// A host function a stream runs once all earlier work is complete. It must
/// not block on the same stream. A non-success return becomes the stream's
/// error.
using HostCallbackTy = Error (*)(void *Data);

/// A point in a stream that other streams and the host can wait for.
class EventTy {
public:
  virtual ~EventTy();
  /// Block until the work recorded before the event is complete; reports
  /// the error of that work, if any.
  virtual Error synchronize() = 0;
  /// Whether the recorded work is complete.
  virtual Expected<bool> query() = 0;
};

/// An in-order queue of device work.
class StreamTy {
public:
  virtual ~StreamTy();

  /// Enqueue a copy of \p Size bytes. Host memory involved must stay valid
  /// until the copy completes.
  virtual Error copyAsync(void *Dst, const void *Src, size_t Size,
                          CopyKindTy Kind) = 0;
  /// Make \p Event complete when the work enqueued so far is complete.
  virtual Error recordEvent(EventTy &Event) = 0;
  /// Make later work wait for \p Event (which may belong to another stream).
  virtual Error waitEvent(EventTy &Event) = 0;
  /// Enqueue \p Fn(\p Data) to run on the host after earlier work.
  virtual Error hostCallback(HostCallbackTy Fn, void *Data) = 0;
  /// Block until all enqueued work is done. Returns the first error of that
  /// work and clears it, so the stream can be reused.
  virtual Error synchronize() = 0;
  /// true when all enqueued work is done; like synchronize() it returns and
  /// clears the error of failed work.
  virtual Expected<bool> query() = 0;
};

} // namespace offloadio

#endif // OFFLOADIO_STREAM_H

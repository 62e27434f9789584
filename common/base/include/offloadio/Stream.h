// SPDX-License-Identifier: Apache-2.0
//
// Streams and events: the backend's in-order queues of device work. Every
// enqueue returns at once; errors of queued work are kept by the stream and
// reported to whoever synchronises it.
#ifndef OFFLOADIO_STREAM_H
#define OFFLOADIO_STREAM_H

#include "offloadio/Error.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

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

  /// Have \p Fn(\p Data) run once the work enqueued so far is complete, on
  /// the thread that next finds the stream complete through
  /// GenericDeviceTy::synchronize() or queryAsync() (the owner of the
  /// __tgt_async_info). Unlike hostCallback() it costs no vendor call and
  /// no wake-up of another thread, but nothing runs it before that owner
  /// does: use it only for host work the owner waits for anyway, such as
  /// copying a small download out of its bounce buffer. If the owner never
  /// waits (device teardown), \p Cancel(\p Data) runs instead: the memory
  /// \p Fn would write may be gone by then. Never allocates for the first
  /// four pending functions.
  void deferUntilComplete(HostCallbackTy Fn, HostCallbackTy Cancel,
                          void *Data) {
    Deferred.push_back({Fn, Cancel, Data});
  }
  /// Have \p Release(\p Data) run on the thread of the stream's owner once
  /// the work enqueued so far is complete: where deferred functions run
  /// (runDeferred) and at teardown alike (cancelDeferred runs it too). For
  /// resources that queued work uses, such as a launch's device memory,
  /// whose release is a vendor call that a vendor's completion callback must
  /// not make: unlike deferUntilComplete()'s functions, enqueueDeferred()
  /// leaves these here, as no other work waits for them. Never allocates
  /// for the first two pending releases.
  void releaseWhenComplete(HostCallbackTy Release, void *Data) {
    Releases.push_back({Release, Release, Data});
  }
  /// Run every deferred function in order, then every release, and forget
  /// them; returns the first failure (all run regardless, so resources they
  /// release are released).
  Error runDeferred();
  /// Run every deferred function's Cancel instead, then every release
  /// (teardown, where nobody waits for the work any more).
  Error cancelDeferred();
  /// Move the deferred functions onto the stream itself, as one host
  /// callback (hostCallback) after the work enqueued so far: from then on
  /// an event recorded on the stream completes only after they ran. Other
  /// threads order their work on such events (libomptarget 16 does, for
  /// the copy-back of a mapping several threads share), and they must not
  /// see the stream's download done while its bytes still sit in a bounce
  /// buffer. Nothing to do when nothing is deferred.
  Error enqueueDeferred();

  /// Mark that work enqueued since the last flush may write device printf
  /// output (a kernel whose image calls the printf runtime).
  void noteDeviceOutput() { DeviceOutputPending = true; }
  /// Once the stream is complete: make the device output of its finished
  /// work appear on the host (flushDeviceOutputImpl), when any was noted.
  /// GenericDeviceTy calls it from synchronize, a completed query and
  /// teardown, so output appears where the program waited for it.
  Error flushDeviceOutput() {
    if (!DeviceOutputPending)
      return Error::success();
    DeviceOutputPending = false;
    return flushDeviceOutputImpl();
  }

protected:
  /// Backend hook of flushDeviceOutput(); the stream is complete. The
  /// default has nothing to do: the output is already on the host.
  virtual Error flushDeviceOutputImpl() { return Error::success(); }

private:
  struct DeferredTy {
    HostCallbackTy Fn;
    HostCallbackTy Cancel;
    void *Data;
  };
  using DeferredListTy = llvm::SmallVector<DeferredTy, 4>;
  /// Run Fn (or Cancel) of every deferred entry, then forget them.
  Error takeDeferred(bool Run);
  /// Run Fn (or Cancel) of each of \p Entries, all of them; the first
  /// failure.
  static Error runEach(llvm::MutableArrayRef<DeferredTy> Entries, bool Run);
  /// The host callback of enqueueDeferred(): runs and frees its list.
  static Error runDeferredBatch(void *Batch);

  DeferredListTy Deferred;
  /// releaseWhenComplete's entries (Fn and Cancel alike).
  llvm::SmallVector<DeferredTy, 2> Releases;
  /// A kernel that may print ran since the last flushDeviceOutput().
  bool DeviceOutputPending = false;
};

} // namespace offloadio

#endif // OFFLOADIO_STREAM_H

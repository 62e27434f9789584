// SPDX-License-Identifier: Apache-2.0
#include "HostStream.h"
#include "offloadio/ThreadName.h"

#include <cstring>

using namespace offloadio;
using namespace offloadio::host;

HostLaunchTy::~HostLaunchTy() = default;

void HostEventTy::record(HostStreamTy &S) {
  std::lock_guard<std::mutex> Guard(Lock);
  Stream = &S;
  Seq = S.submitted();
}

std::pair<HostStreamTy *, uint64_t> HostEventTy::get() const {
  std::lock_guard<std::mutex> Guard(Lock);
  return {Stream, Seq};
}

Error HostEventTy::synchronize() {
  auto [S, Target] = get();
  if (!S)
    return Error::success();
  return S->waitFor(Target);
}

Expected<bool> HostEventTy::query() {
  auto [S, Target] = get();
  return !S || S->reached(Target);
}

HostStreamTy::HostStreamTy(PinnedPoolTy *Pinned, unsigned DeviceId)
    : Ring(64), Pinned(Pinned) {
  Worker = std::thread([this] { workerLoop(); });
  nameStartedThreadOrWarn(Worker, "oio-host", DeviceId);
}

HostStreamTy::~HostStreamTy() {
  {
    std::lock_guard<std::mutex> Guard(Lock);
    Stop = true;
  }
  WorkCV.notify_all();
  Worker.join();
}

uint64_t HostStreamTy::submitted() const {
  std::lock_guard<std::mutex> Guard(Lock);
  return Tail;
}

Error HostStreamTy::enqueue(OpTy &&Op, uint64_t *Seq) {
  {
    std::lock_guard<std::mutex> Guard(Lock);
    if (Tail - Head == Ring.size()) {
      // Full: double the ring. This allocates only when the queue grows
      // past anything seen before.
      std::vector<OpTy> Bigger(Ring.size() * 2);
      for (uint64_t I = Head; I < Tail; ++I)
        Bigger[I & (Bigger.size() - 1)] =
            std::move(Ring[I & (Ring.size() - 1)]);
      Ring.swap(Bigger);
    }
    Ring[Tail & (Ring.size() - 1)] = std::move(Op);
    ++Tail;
    if (Seq)
      *Seq = Tail;
  }
  WorkCV.notify_one();
  return Error::success();
}

Error HostStreamTy::copyAsync(void *Dst, const void *Src, size_t Size,
                              CopyKindTy Kind) {
  // A small copy on an idle stream runs on the caller's thread: handing
  // 64 bytes to the worker costs two thread wake-ups, hundreds of times the
  // copy. The stream stays in order: while it runs, the copy holds the
  // stream's next position and the worker does not start later work.
  if (Size <= PageableCaptureLimit) {
    std::unique_lock<std::mutex> Guard(Lock);
    if (Head == Tail && !FailMessage && !InlineRunning) {
      InlineRunning = true;
      ++Tail;
      Guard.unlock();
      std::memmove(Dst, Src, Size);
      Guard.lock();
      InlineRunning = false;
      ++Head;
      Completed.store(Head, std::memory_order_release);
      DoneCV.notify_all();
      // The worker waits while an inline copy runs: wake it for work queued
      // meanwhile, or for a stop asked meanwhile (the destructor's wake-up
      // came too early for it).
      bool Wake = Head != Tail || Stop;
      Guard.unlock();
      if (Wake)
        WorkCV.notify_one();
      return Error::success();
    }
  }
  OpTy Op;
  Op.Kind = OpTy::CopyOp;
  Op.Dst = Dst;
  Op.Src = Src;
  Op.Size = Size;
  if (Size <= PageableCaptureLimit && Kind == CopyKindTy::HostToDevice) {
    // The stream is busy: capture the source now, as a driver's pageable
    // copy does, so the caller may reuse its memory on return. Capture
    // blocks are recycled, so this allocates only past any earlier depth.
    {
      std::lock_guard<std::mutex> Guard(Lock);
      if (!FreeCaptures.empty()) {
        Op.Capture = std::move(FreeCaptures.back());
        FreeCaptures.pop_back();
      }
    }
    if (!Op.Capture.data()) {
      if (Pinned) {
        // CopyUnpinned: over budget, the caller's memory stays the source,
        // so the copy must be done before the caller gets it back.
        auto Lease =
            Pinned->acquire(PageableCaptureLimit, OnRefusalTy::CopyUnpinned,
                            "a host-stream capture block");
        // A block the budget granted but the allocator could not give is
        // no reason to fail the copy either: it is done from the caller's
        // memory, as over budget.
        bool Unpinned = !Lease || !*Lease;
        if (!Lease)
          llvm::consumeError(Lease.takeError());
        if (Unpinned) {
          // Only up to this copy: later work of other threads may wait on
          // this caller.
          uint64_t Seq = 0;
          if (auto Err = enqueue(std::move(Op), &Seq))
            return Err;
          waitForQuietly(Seq);
          return Error::success();
        }
        Op.Capture.Lease = std::move(*Lease);
      } else {
        Op.Capture.Heap.reset(new char[PageableCaptureLimit]);
      }
    }
    std::memcpy(Op.Capture.data(), Src, Size);
    Op.Src = Op.Capture.data();
  }
  return enqueue(std::move(Op));
}

void HostStreamTy::waitForQuietly(uint64_t Seq) {
  std::unique_lock<std::mutex> Guard(Lock);
  DoneCV.wait(Guard, [&] { return Head >= Seq; });
}

Error HostStreamTy::launchAsync(const HostLaunchTy &Launch, void *const *Args,
                                uint32_t NumArgs) {
  OpTy Op;
  Op.Kind = OpTy::LaunchOp;
  Op.Launch = &Launch;
  Op.NumArgs = NumArgs;
  void **Slots = Op.Args;
  if (NumArgs > InlineArgs) {
    Op.ExtraArgs.reset(new void *[NumArgs]);
    Slots = Op.ExtraArgs.get();
  }
  std::copy(Args, Args + NumArgs, Slots);
  return enqueue(std::move(Op));
}

Error HostStreamTy::recordEvent(EventTy &Event) {
  static_cast<HostEventTy &>(Event).record(*this);
  return Error::success();
}

Error HostStreamTy::waitEvent(EventTy &Event) {
  auto [S, Seq] = static_cast<HostEventTy &>(Event).get();
  // Nothing to wait for: never recorded, our own stream (which runs in
  // order anyway), or reached without error. A reached event whose work
  // failed still gets a wait operation, so the error reaches this stream.
  if (!S || S == this || (S->reached(Seq) && !S->failedBefore(Seq)))
    return Error::success();
  OpTy Op;
  Op.Kind = OpTy::WaitOp;
  Op.WaitStream = S;
  Op.WaitSeq = Seq;
  return enqueue(std::move(Op));
}

Error HostStreamTy::hostCallback(HostCallbackTy Fn, void *Data) {
  OpTy Op;
  Op.Kind = OpTy::CallbackOp;
  Op.Fn = Fn;
  Op.Data = Data;
  return enqueue(std::move(Op));
}

Error HostStreamTy::execute(OpTy &Op) {
  switch (Op.Kind) {
  case OpTy::CopyOp:
    std::memmove(Op.Dst, Op.Src, Op.Size);
    return Error::success();
  case OpTy::LaunchOp:
    return Op.Launch->run(Op.ExtraArgs ? Op.ExtraArgs.get() : Op.Args,
                          Op.NumArgs);
  case OpTy::WaitOp:
    return Op.WaitStream->waitFor(Op.WaitSeq);
  case OpTy::CallbackOp:
    return Op.Fn(Op.Data);
  }
  return makeError(ErrorCode::Internal, "unknown host stream operation");
}

void HostStreamTy::workerLoop() {
  std::unique_lock<std::mutex> Guard(Lock);
  while (true) {
    WorkCV.wait(Guard,
                [&] { return (Stop && !InlineRunning) || (Head != Tail && !InlineRunning); });
    if (Head == Tail)
      return; // Stop requested and nothing left.
    OpTy Op = std::move(Ring[Head & (Ring.size() - 1)]);
    uint64_t Seq = Head;
    // After a failure, data-producing work is skipped until the error is
    // collected; waits and callbacks still run because callbacks release
    // resources (staging buffers) that must not leak.
    bool Skip = FailMessage &&
                (Op.Kind == OpTy::CopyOp || Op.Kind == OpTy::LaunchOp);
    Guard.unlock();
    Error Err = Skip ? Error::success() : execute(Op);
    CaptureTy Capture = std::move(Op.Capture);
    Op = OpTy();
    Guard.lock();
    if (Capture.data())
      FreeCaptures.push_back(std::move(Capture));
    if (Err) {
      if (!FailMessage) {
        std::string Msg;
        FailCode = ErrorCode::BackendError;
        llvm::handleAllErrors(
            std::move(Err),
            [&](const OffloadErrorTy &E) {
              FailCode = E.getCode();
              Msg = E.getMessage();
            },
            [&](const llvm::ErrorInfoBase &E) { Msg = E.message(); });
        FailMessage = std::make_unique<std::string>(
            "queued operation " + std::to_string(Seq) + " failed: " + Msg);
        FailSeq = Seq;
      } else {
        llvm::consumeError(std::move(Err));
      }
    }
    ++Head;
    Completed.store(Head, std::memory_order_release);
    DoneCV.notify_all();
  }
}

Error HostStreamTy::takeError() {
  if (!FailMessage)
    return Error::success();
  Error Err = makeError(FailCode, "{0}", *FailMessage);
  FailMessage.reset();
  return Err;
}

Error HostStreamTy::synchronize() {
  std::unique_lock<std::mutex> Guard(Lock);
  uint64_t Target = Tail;
  DoneCV.wait(Guard, [&] { return Head >= Target; });
  return takeError();
}

Expected<bool> HostStreamTy::query() {
  std::lock_guard<std::mutex> Guard(Lock);
  if (Head < Tail)
    return false;
  if (auto Err = takeError())
    return std::move(Err);
  return true;
}

bool HostStreamTy::failedBefore(uint64_t Seq) const {
  std::lock_guard<std::mutex> Guard(Lock);
  return FailMessage && FailSeq < Seq;
}

Error HostStreamTy::waitFor(uint64_t Seq) {
  std::unique_lock<std::mutex> Guard(Lock);
  DoneCV.wait(Guard, [&] { return Head >= Seq; });
  if (FailMessage && FailSeq < Seq)
    return makeError(FailCode, "{0}", *FailMessage);
  return Error::success();
}

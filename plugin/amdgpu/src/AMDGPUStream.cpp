// SPDX-License-Identifier: Apache-2.0
#include "AMDGPUStream.h"

#include <cstring>

using namespace offloadio;
using namespace offloadio::amdgpu;

namespace {

/// How long one wait blocks before checking for a dead queue.
constexpr uint64_t WaitSliceMs = 100;

llvm::SmallVector<hsa_signal_t, 4>
rawSignals(llvm::ArrayRef<AMDGPUSignalRefTy> Refs) {
  llvm::SmallVector<hsa_signal_t, 4> Raw;
  for (const AMDGPUSignalRefTy &R : Refs)
    Raw.push_back(R->get());
  return Raw;
}

} // namespace

Error amdgpu::waitSignal(const AMDGPUContextTy &Ctx,
                         const AMDGPUSignalTy &Signal) {
  while (Signal.waitDone(Ctx.TicksPerMs * WaitSliceMs) >= 1) {
    // A queue that died never completes its packets' signals.
    if (const AMDGPUQueueTy *Producer = Signal.getProducer())
      if (Producer->hasFailed())
        return Producer->getFailure();
  }
  return Error::success();
}

//===----------------------------------------------------------------------===//
// Events
//===----------------------------------------------------------------------===//

void AMDGPUEventTy::set(AMDGPUSignalRefTy S) {
  std::lock_guard<std::mutex> Guard(Lock);
  Signal = std::move(S);
}

AMDGPUSignalRefTy AMDGPUEventTy::get() const {
  std::lock_guard<std::mutex> Guard(Lock);
  return Signal;
}

Error AMDGPUEventTy::synchronize() {
  AMDGPUSignalRefTy S = get();
  if (!S)
    return Error::success();
  if (auto Err = waitSignal(Ctx, *S))
    return Err;
  if (hsa_signal_value_t V = S->load(); V < 0)
    return makeError(ErrorCode::BackendError,
                     "work recorded by an event of device {0} failed "
                     "(completion signal {1})",
                     DeviceId, V);
  return Error::success();
}

Expected<bool> AMDGPUEventTy::query() {
  AMDGPUSignalRefTy S = get();
  if (!S)
    return true;
  hsa_signal_value_t V = S->load();
  if (V < 0)
    return makeError(ErrorCode::BackendError,
                     "work recorded by an event of device {0} failed "
                     "(completion signal {1})",
                     DeviceId, V);
  if (V >= 1)
    if (const AMDGPUQueueTy *Producer = S->getProducer())
      if (Producer->hasFailed())
        return Producer->getFailure();
  return V < 1;
}

//===----------------------------------------------------------------------===//
// Streams: bookkeeping
//===----------------------------------------------------------------------===//

AMDGPUStreamTy::~AMDGPUStreamTy() {
  std::lock_guard<std::mutex> Guard(Lock);
  // Host callbacks still registered point into Ops: wait for the work.
  if (!Broken)
    llvm::consumeError(drain());
}

Error AMDGPUStreamTy::checkUsable() const {
  if (Broken)
    return makeError(ErrorCode::BackendError,
                     "a stream of device {0} is unusable: its HSA queue "
                     "failed with work in flight",
                     DeviceId);
  return Error::success();
}

void AMDGPUStreamTy::recordError(ErrorCode Code, std::string Message) {
  std::lock_guard<std::mutex> Guard(ErrorLock);
  if (!Failure)
    Failure.emplace(Code, std::move(Message));
}

void AMDGPUStreamTy::recordError(Error Err) {
  ErrorCode Code = ErrorCode::Internal;
  std::string Message;
  llvm::handleAllErrors(
      std::move(Err),
      [&](const OffloadErrorTy &E) {
        Code = E.getCode();
        Message = E.getMessage();
      },
      [&](const llvm::ErrorInfoBase &E) { Message = E.message(); });
  recordError(Code, std::move(Message));
}

Error AMDGPUStreamTy::takeError() {
  std::lock_guard<std::mutex> Guard(ErrorLock);
  if (!Failure)
    return Error::success();
  Error Err = makeError(Failure->first, "{0}", Failure->second);
  Failure.reset();
  return Err;
}

std::string AMDGPUStreamTy::describe(const OpTy &Op) {
  switch (Op.Kind) {
  case OpKindTy::Copy:
    return llvm::formatv("{0} copy of {1} bytes from {2} to {3}",
                         copyKindName(Op.CopyKind), Op.Size, Op.Src, Op.Dst)
        .str();
  case OpKindTy::Dispatch:
    return "kernel " + *Op.KernelName;
  case OpKindTy::Barrier:
    return "a dependency barrier";
  case OpKindTy::HostCall:
    return Op.Fn ? "a host callback"
                 : llvm::formatv("a host-to-host copy of {0} bytes", Op.Size)
                       .str();
  }
  return "an operation";
}

void AMDGPUStreamTy::recordFailure(const OpTy &Op, hsa_signal_value_t Value) {
  std::string Message =
      llvm::formatv("{0} on device {1} failed (completion signal {2})",
                    describe(Op), DeviceId, Value)
          .str();
  if ((Op.Kind == OpKindTy::Dispatch || Op.Kind == OpKindTy::Barrier) &&
      Queue.hasFailed())
    Message += ": " + takeErrorMessage(Queue.getFailure());
  recordError(ErrorCode::BackendError, std::move(Message));
}

Error AMDGPUStreamTy::breakOn(const OpTy &Op, const AMDGPUQueueTy &Dead) {
  // The device may still touch the signals and buffers of the operations
  // in flight: keep them forever rather than recycle them.
  Broken = true;
  return makeError(ErrorCode::BackendError,
                   "{0} on device {1} can never complete: {2}", describe(Op),
                   DeviceId, takeErrorMessage(Dead.getFailure()));
}

void AMDGPUStreamTy::reap() {
  while (!Ops.empty()) {
    OpTy &Op = Ops.front();
    hsa_signal_value_t V = Op.Completion->load();
    if (V >= 1)
      break;
    if (V < 0)
      recordFailure(Op, V);
    if (Op.Kernarg.Ptr)
      Kernargs.release(Op.Kernarg);
    Ops.pop_front();
  }
}

const AMDGPUQueueTy *AMDGPUStreamTy::stuckOn(const OpTy &Op) {
  auto DeadProducer = [](const AMDGPUSignalRefTy &S) -> const AMDGPUQueueTy * {
    const AMDGPUQueueTy *Q = S->getProducer();
    return Q && Q->hasFailed() && !S->isDone() ? Q : nullptr;
  };
  if (const AMDGPUQueueTy *Q = DeadProducer(Op.Completion))
    return Q;
  for (const AMDGPUSignalRefTy &Dep : Op.Deps)
    if (const AMDGPUQueueTy *Q = DeadProducer(Dep))
      return Q;
  return nullptr;
}

void AMDGPUStreamTy::collectDeps(llvm::SmallVectorImpl<AMDGPUSignalRefTy> &Deps,
                                 bool QueueOrdered) const {
  if (Tail && !Tail->isDone() && !(QueueOrdered && TailOnQueue))
    Deps.push_back(Tail);
  for (const AMDGPUSignalRefTy &W : PendingWaits)
    if (!W->isDone())
      Deps.push_back(W);
}

Error AMDGPUStreamTy::flushWaits() {
  bool Pending = llvm::any_of(
      PendingWaits, [](const AMDGPUSignalRefTy &W) { return !W->isDone(); });
  if (!Pending) {
    PendingWaits.clear();
    return Error::success();
  }
  llvm::SmallVector<AMDGPUSignalRefTy, 4> Deps;
  collectDeps(Deps, /*QueueOrdered=*/true);
  auto Sig = Ctx.Signals.acquire(1);
  if (!Sig)
    return Sig.takeError();
  (*Sig)->setProducer(&Queue);
  if (auto Err = Queue.pushBarrier(rawSignals(Deps), (*Sig)->get()))
    return Err;
  OpTy Op;
  Op.Kind = OpKindTy::Barrier;
  Op.Completion = *Sig;
  Op.Deps.assign(Deps.begin(), Deps.end());
  Ops.push_back(std::move(Op));
  Tail = std::move(*Sig);
  TailOnQueue = true;
  PendingWaits.clear();
  return Error::success();
}

Error AMDGPUStreamTy::drain() {
  for (const AMDGPUSignalRefTy &W : PendingWaits)
    if (auto Err = waitSignal(Ctx, *W)) {
      Broken = true;
      return Err;
    }
  PendingWaits.clear();
  while (!Ops.empty()) {
    const OpTy &Front = Ops.front();
    while (Front.Completion->waitDone(Ctx.TicksPerMs * WaitSliceMs) >= 1) {
      if (const AMDGPUQueueTy *Dead = stuckOn(Front))
        return breakOn(Front, *Dead);
    }
    reap();
  }
  Tail.reset();
  TailOnQueue = false;
  return Error::success();
}

//===----------------------------------------------------------------------===//
// Streams: operations
//===----------------------------------------------------------------------===//

Error AMDGPUStreamTy::copyAsync(void *Dst, const void *Src, size_t Size,
                                CopyKindTy Kind) {
  switch (Kind) {
  case CopyKindTy::HostToDevice:
    return copyBetweenAgents(Dst, Agent, Src, Ctx.CpuAgent, Size, Kind);
  case CopyKindTy::DeviceToHost:
    return copyBetweenAgents(Dst, Ctx.CpuAgent, Src, Agent, Size, Kind);
  case CopyKindTy::DeviceToDevice:
    return copyBetweenAgents(Dst, Agent, Src, Agent, Size, Kind);
  case CopyKindTy::HostToHost:
    // No engine copies host to host; the CPU does it in stream order.
    return enqueueHostCall(nullptr, nullptr, Dst, Src, Size);
  }
  return makeError(ErrorCode::InvalidArgument, "unknown copy kind {0}",
                   unsigned(Kind));
}

Error AMDGPUStreamTy::copyBetweenAgents(void *Dst, hsa_agent_t DstAgent,
                                        const void *Src, hsa_agent_t SrcAgent,
                                        size_t Size, CopyKindTy Kind) {
  std::lock_guard<std::mutex> Guard(Lock);
  if (auto Err = checkUsable())
    return Err;
  if (Size == 0)
    return Error::success();
  reap();
  llvm::SmallVector<AMDGPUSignalRefTy, 4> Deps;
  collectDeps(Deps, /*QueueOrdered=*/false);
  auto Sig = Ctx.Signals.acquire(1);
  if (!Sig)
    return Sig.takeError();
  auto Raw = rawSignals(Deps);
  if (auto Err = checkHSA(Ctx.Api,
                          Ctx.Api.hsa_amd_memory_async_copy(
                              Dst, DstAgent, Src, SrcAgent, Size,
                              uint32_t(Raw.size()), Raw.data(), (*Sig)->get()),
                          "hsa_amd_memory_async_copy",
                          "{0} copy of {1} bytes from {2} to {3} on device {4}",
                          copyKindName(Kind), Size, Src, Dst, DeviceId))
    return Err;
  OpTy Op;
  Op.Kind = OpKindTy::Copy;
  Op.Completion = *Sig;
  Op.Deps.assign(Deps.begin(), Deps.end());
  Op.Dst = Dst;
  Op.Src = Src;
  Op.Size = Size;
  Op.CopyKind = Kind;
  Ops.push_back(std::move(Op));
  Tail = std::move(*Sig);
  TailOnQueue = false;
  PendingWaits.clear();
  return Error::success();
}

Error AMDGPUStreamTy::launch(hsa_kernel_dispatch_packet_t Packet,
                             AMDGPUKernargSlotTy Kernarg,
                             const std::string &KernelName) {
  std::lock_guard<std::mutex> Guard(Lock);
  auto Fail = [&](Error Err) {
    Kernargs.release(Kernarg);
    return Err;
  };
  if (auto Err = checkUsable())
    return Fail(std::move(Err));
  reap();
  // Earlier packets of our queue are ordered by the barrier bit already.
  llvm::SmallVector<AMDGPUSignalRefTy, 4> Deps;
  collectDeps(Deps, /*QueueOrdered=*/true);
  if (!Deps.empty())
    if (auto Err = Queue.pushBarrier(rawSignals(Deps), hsa_signal_t{0}))
      return Fail(std::move(Err));
  auto Sig = Ctx.Signals.acquire(1);
  if (!Sig)
    return Fail(Sig.takeError());
  (*Sig)->setProducer(&Queue);
  Packet.completion_signal = (*Sig)->get();
  if (auto Err = Queue.pushDispatch(Packet))
    return Fail(std::move(Err));
  OpTy Op;
  Op.Kind = OpKindTy::Dispatch;
  Op.Completion = *Sig;
  Op.Deps.assign(Deps.begin(), Deps.end());
  Op.KernelName = &KernelName;
  Op.Kernarg = Kernarg;
  Ops.push_back(std::move(Op));
  Tail = std::move(*Sig);
  TailOnQueue = true;
  PendingWaits.clear();
  return Error::success();
}

Error AMDGPUStreamTy::recordEvent(EventTy &Event) {
  std::lock_guard<std::mutex> Guard(Lock);
  if (auto Err = checkUsable())
    return Err;
  reap();
  if (auto Err = flushWaits())
    return Err;
  static_cast<AMDGPUEventTy &>(Event).set(Tail);
  return Error::success();
}

Error AMDGPUStreamTy::waitEvent(EventTy &Event) {
  AMDGPUSignalRefTy S = static_cast<AMDGPUEventTy &>(Event).get();
  std::lock_guard<std::mutex> Guard(Lock);
  if (auto Err = checkUsable())
    return Err;
  // Our own tail or finished work needs no wait.
  if (!S || S->isDone() || S.get() == Tail.get())
    return Error::success();
  PendingWaits.push_back(std::move(S));
  return Error::success();
}

Error AMDGPUStreamTy::hostCallback(HostCallbackTy Fn, void *Data) {
  if (!Fn)
    return makeError(ErrorCode::InvalidArgument,
                     "null host callback on device {0}", DeviceId);
  return enqueueHostCall(Fn, Data, nullptr, nullptr, 0);
}

void AMDGPUStreamTy::runHostCall(HostCallbackTy Fn, void *Data, void *Dst,
                                 const void *Src, size_t Size) {
  if (!Fn) {
    std::memmove(Dst, Src, Size);
    return;
  }
  if (Error Err = Fn(Data))
    recordError(std::move(Err));
}

bool AMDGPUStreamTy::hostCallHandler(hsa_signal_value_t, void *Arg) {
  // Runs on the runtime's handler thread once the previous operation is
  // done (or failed: callbacks release resources and must always run).
  auto &Op = *static_cast<OpTy *>(Arg);
  AMDGPUStreamTy &Stream = *Op.Stream;
  hsa_signal_t Done = Op.Completion->get();
  Stream.runHostCall(Op.Fn, Op.Data, Op.Dst, Op.Src, Op.Size);
  // Last touch of Op: once the signal drops, the stream may retire it.
  Stream.Ctx.Api.hsa_signal_subtract_screlease(Done, 1);
  return false;
}

Error AMDGPUStreamTy::enqueueHostCall(HostCallbackTy Fn, void *Data, void *Dst,
                                      const void *Src, size_t Size) {
  std::lock_guard<std::mutex> Guard(Lock);
  if (auto Err = checkUsable())
    return Err;
  reap();
  // A handler watches one signal: fold event waits into the tail first.
  if (auto Err = flushWaits())
    return Err;
  if (!Tail || Tail->isDone()) {
    // Everything before is done: run in order, right now.
    runHostCall(Fn, Data, Dst, Src, Size);
    return Error::success();
  }
  auto Sig = Ctx.Signals.acquire(1);
  if (!Sig)
    return Sig.takeError();
  OpTy Op;
  Op.Kind = OpKindTy::HostCall;
  Op.Completion = *Sig;
  Op.Deps.push_back(Tail);
  Op.Dst = Dst;
  Op.Src = Src;
  Op.Size = Size;
  Op.Fn = Fn;
  Op.Data = Data;
  Op.Stream = this;
  Ops.push_back(std::move(Op));
  if (auto Err = checkHSA(Ctx.Api,
                          Ctx.Api.hsa_amd_signal_async_handler(
                              Tail->get(), HSA_SIGNAL_CONDITION_LT, 1,
                              &hostCallHandler, &Ops.back()),
                          "hsa_amd_signal_async_handler",
                          "host callback on device {0}", DeviceId)) {
    Ops.pop_back();
    return Err;
  }
  Tail = std::move(*Sig);
  TailOnQueue = false;
  return Error::success();
}

Error AMDGPUStreamTy::synchronize() {
  std::lock_guard<std::mutex> Guard(Lock);
  if (auto Err = checkUsable())
    return llvm::joinErrors(std::move(Err), takeError());
  Error Err = drain();
  return llvm::joinErrors(std::move(Err), takeError());
}

Expected<bool> AMDGPUStreamTy::query() {
  std::lock_guard<std::mutex> Guard(Lock);
  if (auto Err = checkUsable())
    return std::move(Err);
  reap();
  if (!Ops.empty()) {
    if (const AMDGPUQueueTy *Dead = stuckOn(Ops.front()))
      return llvm::joinErrors(breakOn(Ops.front(), *Dead), takeError());
    return false;
  }
  llvm::erase_if(PendingWaits,
                 [](const AMDGPUSignalRefTy &W) { return W->isDone(); });
  if (!PendingWaits.empty())
    return false;
  Tail.reset();
  TailOnQueue = false;
  if (auto Err = takeError())
    return std::move(Err);
  return true;
}

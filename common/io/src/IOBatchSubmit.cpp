// SPDX-License-Identifier: Apache-2.0
//
// A batch share of the file engine: each operation is checked as submit
// checks a request, all before any descriptor is duplicated; descriptors
// are duplicated once per caller descriptor and given their O_DIRECT
// decision once per direction; small operations whose file ranges touch
// are gathered into one request.
#include "offloadio/io/IODevice.h"
#include "offloadio/io/IODirectPolicy.h"
#include "offloadio/io/IOEngine.h"
#include "offloadio/io/Sys.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <map>
#include <optional>
#include <tuple>

using namespace offloadio;

Expected<std::unique_ptr<IOBatchTy>> IOEngineTy::createBatch() {
  auto Slot =
      reserveSlot("batch on device " + std::to_string(Device.getDeviceId()));
  if (!Slot)
    return Slot.takeError();
  return std::make_unique<IOBatchTy>(std::move(*Slot));
}

namespace {

/// The share's descriptors of one caller descriptor.
struct BatchFdTy {
  DescriptorFactsTy Facts; ///< What the descriptor is, asked once.
  bool Used = false;       ///< Some operation passed its checks with it.
  int Dup = -1;     ///< Our duplicate; -1 when dup failed ...
  int DupErrno = 0; ///< ... with this errno.
  int Flags = 0;    ///< The caller's status flags.
  /// The O_DIRECT decision for reads [0] and writes [1], taken once.
  std::optional<IODirectFdsTy> Direct[2];
};

/// Most buffers one preadv or pwritev takes.
#ifdef IOV_MAX
constexpr size_t MaxSegments = IOV_MAX;
#else
constexpr size_t MaxSegments = 1024;
#endif

/// Requests of a batch queued with one wakeup of the workers.
constexpr size_t QueueBlock = 64;

} // namespace

void IOEngineTy::startBatch(IOBatchTy &Batch,
                            const std::vector<IOBatchOpTy> &Ops) {
  Batch.resize(Ops.size());
  std::vector<std::optional<CheckedRequestTy>> Checked(Ops.size());
  // Every caller descriptor is looked at, and every operation checked,
  // before any descriptor is duplicated: a duplicate takes the lowest free
  // number, which may be one the program closed and a later operation
  // still names, so that operation would run on another's file.
  std::map<int, BatchFdTy> Fds;
  for (size_t I = 0; I < Ops.size(); ++I) {
    const IOBatchOpTy &Op = Ops[I];
    auto [It, New] = Fds.try_emplace(Op.Fd);
    if (New)
      It->second.Facts = inspectDescriptor(Sys, Op.Fd);
    auto C = checkRequest(Op.Op, It->second.Facts, Op.DevPtr, Op.Count,
                          Op.Offset);
    if (!C) {
      Batch.failOp(I, C.takeError());
      continue;
    }
    if (!Op.Count) {
      Batch.completeOp(I);
      continue;
    }
    It->second.Used = true;
    Checked[I] = std::move(*C);
  }
  // One duplicate per caller descriptor, however many operations use it.
  for (auto &[CallerFd, F] : Fds) {
    if (!F.Used)
      continue;
    F.Flags = F.Facts.Flags;
    F.Dup = Sys.dup(CallerFd);
    if (F.Dup < 0)
      F.DupErrno = errno;
    else
      Batch.adoptDescriptor(F.Dup);
  }
  for (size_t I = 0; I < Ops.size(); ++I) {
    if (!Checked[I])
      continue;
    const BatchFdTy &F = Fds[Ops[I].Fd];
    if (F.Dup >= 0)
      continue;
    Batch.failOp(I, makeErrnoError(F.DupErrno, "dup of fd {0} for a batch "
                                   "on device {1}",
                                   Ops[I].Fd, Device.getDeviceId()));
    Checked[I].reset();
  }

  auto DirectFdsOf = [&](int CallerFd, bool Write) -> const IODirectFdsTy & {
    BatchFdTy &F = Fds[CallerFd];
    std::optional<IODirectFdsTy> &D = F.Direct[Write];
    if (!D) {
      D = openDirectFds(Sys, Config, Write, CallerFd, F.Flags, F.Dup);
      if (D->TwinFd >= 0)
        Batch.adoptDescriptor(D->TwinFd);
    }
    return *D;
  };

  // The path a gathered request takes. Vendor storage DMA moves one device
  // range per call: serving a gathered request there would split it back
  // into one call per operation, losing what gathering saved, for small
  // transfers where the vendor's fixed cost per call weighs most. Staging
  // reads the whole run with one pread and copies each piece out
  // asynchronously, so gathered requests that would go to the fastpath are
  // staged. A forced fastpath gathers nothing: it must serve every
  // operation itself.
  auto GatheredPath = [&](IOPathTy Path) {
    return Path == IOPathTy::Fastpath ? IOPathTy::Staged : Path;
  };
  bool Gather = Config.ForcedPath != int(IOPathTy::Fastpath);

  // Candidates for gathering: small, positional (an append has no offset
  // to touch another's), through a buffered descriptor (O_DIRECT would
  // need every buffer aligned; the page cache serves small ranges well).
  std::vector<size_t> Candidates;
  for (size_t I = 0; Gather && I < Ops.size(); ++I) {
    if (!Checked[I] || Checked[I]->Append || Ops[I].Count > Config.ChunkSize)
      continue;
    if (DirectFdsOf(Ops[I].Fd, Ops[I].Op == IORequestTy::Write)
            .BufferedIsDirect)
      continue;
    Candidates.push_back(I);
  }
  auto KeyOf = [&](size_t I) {
    return std::make_tuple(Ops[I].Fd, int(Ops[I].Op),
                           unsigned(GatheredPath(Checked[I]->Path)),
                           Ops[I].Offset, I);
  };
  std::sort(Candidates.begin(), Candidates.end(),
            [&](size_t A, size_t B) { return KeyOf(A) < KeyOf(B); });
  // Runs of touching ranges, each at most a chunk and MaxSegments buffers.
  std::vector<std::vector<size_t>> Groups;
  std::vector<size_t> GroupOf(Ops.size(), SIZE_MAX);
  for (size_t K = 0; K < Candidates.size();) {
    std::vector<size_t> Run{Candidates[K]};
    size_t Bytes = Ops[Candidates[K]].Count;
    for (++K; K < Candidates.size(); ++K) {
      size_t Prev = Run.back(), Next = Candidates[K];
      bool SameKind = std::get<0>(KeyOf(Prev)) == std::get<0>(KeyOf(Next)) &&
                      std::get<1>(KeyOf(Prev)) == std::get<1>(KeyOf(Next)) &&
                      std::get<2>(KeyOf(Prev)) == std::get<2>(KeyOf(Next));
      bool Touch = Ops[Prev].Offset + off_t(Ops[Prev].Count) == Ops[Next].Offset;
      if (!SameKind || !Touch || Bytes + Ops[Next].Count > Config.ChunkSize ||
          Run.size() >= MaxSegments)
        break;
      Run.push_back(Next);
      Bytes += Ops[Next].Count;
    }
    if (Run.size() < 2)
      continue;
    for (size_t I : Run)
      GroupOf[I] = Groups.size();
    Groups.push_back(std::move(Run));
  }

  // Requests in the order of the operations: appends land in that order.
  // They are queued in blocks: one wakeup of the workers per block, not
  // per request, while the workers start on the first blocks as the rest
  // are made.
  std::vector<IORequestTy *> Unqueued;
  Unqueued.reserve(QueueBlock);
  auto Queue = [&](IORequestTy &R) {
    Unqueued.push_back(&R);
    if (Unqueued.size() < QueueBlock)
      return;
    queueRequests(Unqueued.data(), Unqueued.size());
    Unqueued.clear();
  };
  std::vector<bool> GroupStarted(Groups.size());
  for (size_t I = 0; I < Ops.size(); ++I) {
    if (!Checked[I])
      continue;
    const IOBatchOpTy &Op = Ops[I];
    bool Write = Op.Op == IORequestTy::Write;
    BatchFdTy &F = Fds[Op.Fd];
    size_t G = GroupOf[I];
    if (G == SIZE_MAX) {
      auto R = std::make_unique<IORequestTy>(
          Op.Op, F.Dup, static_cast<char *>(Op.DevPtr), Op.Count, Op.Offset,
          Checked[I]->Path, Config.ChunkSize, Checked[I]->Append);
      R->borrowDescriptors();
      R->holdBusyMark(std::move(Checked[I]->BusyMark));
      R->applyDirect(
          layoutDirect(DirectFdsOf(Op.Fd, Write), Config, Op.Offset, Op.Count));
      noteRequest(*R, Op.Fd, Checked[I]->Why);
      IORequestTy &Queued = *R;
      Batch.mapOp(I, Batch.addRequest(std::move(R)), 0, Op.Count);
      Queue(Queued);
      continue;
    }
    if (GroupStarted[G])
      continue;
    GroupStarted[G] = true;
    const std::vector<size_t> &Run = Groups[G];
    const IOBatchOpTy &First = Ops[Run.front()];
    size_t Bytes = 0;
    std::vector<IOSegmentTy> Segments;
    for (size_t J : Run) {
      Segments.push_back({static_cast<char *>(Ops[J].DevPtr), Ops[J].Count});
      Bytes += Ops[J].Count;
    }
    IOPathTy Path = GatheredPath(Checked[Run.front()]->Path);
    auto R = std::make_unique<IORequestTy>(
        First.Op, F.Dup, Segments.front().DevPtr, Bytes, First.Offset, Path,
        Config.ChunkSize);
    R->borrowDescriptors();
    for (size_t J : Run)
      R->holdBusyMark(std::move(Checked[J]->BusyMark));
    IODirectSetupTy Setup;
    Setup.BufFd = DirectFdsOf(First.Fd, Write).BufFd;
    R->applyDirect(std::move(Setup));
    R->gather(std::move(Segments));
    // The reason is shown only in OMPX_IO_INFO lines, as checkRequest's.
    std::string Why;
    if (Log.enabled())
      Why = (Path == Checked[Run.front()]->Path
                 ? Checked[Run.front()]->Why
                 : std::string("vendor storage DMA takes one buffer per call")) +
            "; " + std::to_string(Run.size()) + " operations gathered";
    noteRequest(*R, First.Fd, Why);
    IORequestTy &Queued = *R;
    size_t Index = Batch.addRequest(std::move(R));
    for (size_t J : Run)
      Batch.mapOp(J, Index, size_t(Ops[J].Offset - First.Offset),
                  Ops[J].Count);
    Queue(Queued);
  }
  queueRequests(Unqueued.data(), Unqueued.size());
}

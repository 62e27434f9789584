// SPDX-License-Identifier: Apache-2.0
#include "offloadio/io/IOEngine.h"
#include "offloadio/io/IODevice.h"
#include "offloadio/io/IODirectPolicy.h"
#include "offloadio/io/Sys.h"

#include <cerrno>
#include <cstdio>
#include <fcntl.h>

using namespace offloadio;

IOEngineTy::IOEngineTy(IODeviceTy &Device, SysTy &Sys, IOFastpathTy *Fastpath,
                       IOConfigTy Config, IOWorkerPoolTy &Workers)
    : Workers(Workers), Device(Device), Sys(Sys), Config(Config),
      Log(Device.getPluginName(), Device.getDeviceId(), Config.Info),
      Served(Queue, Paths, Device, Config.RingDepth) {
  Paths[unsigned(IOPathTy::HostAddressable)] =
      makeHostAddressablePath(Device, Sys, Stats);
  Paths[unsigned(IOPathTy::Fastpath)] =
      makeFastpathPath(Device, Sys, Stats, Fastpath, RefusedFS, Log);
  Paths[unsigned(IOPathTy::Staged)] = makeStagedPath(Sys, Stats);
  Workers.attach(Served);
}

IOEngineTy::IOEngineTy(IODeviceTy &Device, SysTy &Sys, IOFastpathTy *Fastpath,
                       IOConfigTy Config,
                       std::unique_ptr<IOWorkerPoolTy> OwnWorkers)
    : IOEngineTy(Device, Sys, Fastpath, Config, *OwnWorkers) {
  this->OwnWorkers = std::move(OwnWorkers);
}

IOEngineTy::IOEngineTy(IODeviceTy &Device, SysTy &Sys, IOFastpathTy *Fastpath,
                       IOConfigTy Config)
    : IOEngineTy(Device, Sys, Fastpath, Config,
                 std::make_unique<IOWorkerPoolTy>(Config.Threads,
                                                  Config.ThreadsCap)) {}

IOEngineTy::~IOEngineTy() { Workers.detach(Served); }

Expected<IOEngineTy::CheckedRequestTy>
IOEngineTy::checkRequest(IORequestTy::OpTy Op, const DescriptorFactsTy &Facts,
                         void *DevPtr, size_t Count, off_t Offset) {
  const char *OpName = Op == IORequestTy::Read ? "read" : "write";
  int DeviceId = Device.getDeviceId();
  bool IsWrite = Op == IORequestTy::Write;
  IOBusyMarkTy BusyMark;
  AllocKindTy Kind = AllocKindTy::Device;
  auto BufferCheck = [&]() -> TransferVerdictTy {
    auto Refuse = [&](const std::string &What) {
      return TransferVerdictTy{EFAULT, std::string(OpName) + " of " +
                                           std::to_string(Count) +
                                           " bytes on device " +
                                           std::to_string(DeviceId) + ": " +
                                           What};
    };
    if (!Count) {
      // Nothing to check; the kind still steers the path choice.
      if (auto Alloc = Device.findAllocation(DevPtr))
        Kind = Alloc->Kind;
      return {};
    }
    if (!DevPtr)
      return Refuse("null buffer");
    // Busy from before the buffer checks on: a free in progress finishes
    // first (the checks then refuse the memory), a later one waits for
    // this request (IOBusyMemory.h).
    BusyMark = IOBusyMarkTy(Device.getIOBusyMemory(), DevPtr, Count);
    auto Buffer = [&] {
      char Ptr[32];
      std::snprintf(Ptr, sizeof(Ptr), "%p", DevPtr);
      return "buffer " + std::string(Ptr);
    };
    auto Alloc = Device.findAllocation(DevPtr);
    size_t Room = 0;
    if (Alloc) {
      Kind = Alloc->Kind;
      Room = Device.bytesAvailableFrom(DevPtr);
    } else {
      // Memory the program allocated outside OpenMP (a framework's
      // allocator): the vendor's pointer query says whose it is and where
      // its allocation ends.
      Expected<ForeignMemoryTy> Foreign = Device.queryForeignMemory(DevPtr);
      if (!Foreign)
        return Refuse(Buffer() + ": " + llvm::toString(Foreign.takeError()));
      if (Foreign->Owner == ForeignMemoryTy::OwnerTy::Elsewhere)
        return Refuse(Buffer() + " is memory of " + Foreign->OwnerName +
                      ", not of this device");
      if (Foreign->Owner != ForeignMemoryTy::OwnerTy::ThisDevice)
        return Refuse(Buffer() + " is not memory of this device");
      Room = Foreign->bytesFrom(DevPtr);
    }
    if (Count > Room)
      return Refuse(Buffer() + " has only " + std::to_string(Room) +
                    " bytes left in its allocation");
    return {};
  };
  if (TransferVerdictTy V = checkTransfer(Sys, Facts, IsWrite, Count, Offset,
                                          DeviceId, BufferCheck))
    return makeErrnoError(V.Errno, "{0}", V.Why);
  int Fd = Facts.Fd;
  int Flags = Facts.Flags;

  // Why a path was chosen is shown only in OMPX_IO_INFO lines.
  std::string Why;
  bool Append = IsWrite && (Flags & O_APPEND);
  const struct stat *St = Facts.Flags >= 0 && !(Facts.Flags & O_PATH) &&
                                  !Facts.StatErrno
                              ? &Facts.St
                              : nullptr;
  auto Path = choosePath({Fd, DevPtr, Count, Offset, Append, Kind, St},
                         Log.enabled() ? &Why : nullptr);
  if (!Path)
    return Path.takeError();
  return CheckedRequestTy{Flags, std::move(BusyMark), *Path, std::move(Why),
                          Append};
}

Expected<IOSlotTy> IOEngineTy::reserveSlot(const std::string &What) {
  // Every request holds one or two descriptors and its memory until the
  // program waits for it, so their number is capped. Submission fails
  // rather than waits: a thread that submits past the cap before waiting
  // for any of its requests would wait for itself.
  unsigned Held = Outstanding.load(std::memory_order_relaxed);
  do
    if (Held >= Config.MaxRequests)
      return makeErrnoError(EAGAIN,
                            "{0}: {1} requests are outstanding, the "
                            "OMPX_IO_MAX_REQUESTS limit; wait for some first",
                            What, Held);
  while (!Outstanding.compare_exchange_weak(Held, Held + 1,
                                            std::memory_order_relaxed));
  return IOSlotTy(Outstanding);
}

void IOEngineTy::noteRequest(const IORequestTy &R, int Fd,
                             const std::string &Why) {
  auto &Requests = R.isWrite() ? Stats.Writes : Stats.Reads;
  Requests[unsigned(R.path())].fetch_add(1, std::memory_order_relaxed);
  if (!Log.enabled())
    return;
  char Buffer[512];
  std::snprintf(Buffer, sizeof(Buffer),
                "%s %zu bytes, fd %d offset %lld, %p: %s path (",
                R.isWrite() ? "write" : "read", R.count(), Fd,
                (long long)R.offset(), static_cast<void *>(R.devPtr()),
                ioPathName(R.path()));
  Log.print(Buffer + Why + ")" + R.directNote());
}

void IOEngineTy::queueRequests(IORequestTy *const *Rs, size_t N) {
  startWorkers();
  for (size_t I = 0; I < N; ++I)
    Rs[I]->markQueued();
  Queue.pushAll(Rs, N);
}

Expected<std::unique_ptr<IORequestTy>>
IOEngineTy::submit(IORequestTy::OpTy Op, int Fd, void *DevPtr, size_t Count,
                   off_t Offset) {
  const char *OpName = Op == IORequestTy::Read ? "read" : "write";
  auto Checked =
      checkRequest(Op, inspectDescriptor(Sys, Fd), DevPtr, Count, Offset);
  if (!Checked)
    return Checked.takeError();
  auto Slot = reserveSlot(std::string(OpName) + " of " +
                          std::to_string(Count) + " bytes on device " +
                          std::to_string(Device.getDeviceId()));
  if (!Slot)
    return Slot.takeError();
  int Dup = Sys.dup(Fd);
  if (Dup < 0)
    return makeErrnoError(errno, "dup of fd {0} for an async {1}", Fd, OpName);
  auto R = std::make_unique<IORequestTy>(Op, Dup, static_cast<char *>(DevPtr),
                                         Count, Offset, Checked->Path,
                                         Config.ChunkSize, Checked->Append);
  R->holdSlot(std::move(*Slot));
  R->holdBusyMark(std::move(Checked->BusyMark));
  if (Count)
    R->applyDirect(decideDirect(Sys, Config, Op == IORequestTy::Write, Fd,
                                Checked->Flags, Dup, Offset, Count));
  noteRequest(*R, Fd, Checked->Why);
  if (R->numChunks())
    queueRequest(*R);
  return std::move(R);
}

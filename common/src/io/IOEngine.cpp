// SPDX-License-Identifier: Apache-2.0
#include "offloadio/io/IOEngine.h"
#include "offloadio/io/IODescriptor.h"
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
      Log(Device.getDeviceId(), Config.Info),
      Served(Queue, Paths, Device, Config.RingDepth) {
  Paths[unsigned(IOPathTy::Direct)] = makeDirectPath(Device, Sys, Stats);
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
                 std::make_unique<IOWorkerPoolTy>(Config.Threads)) {}

IOEngineTy::~IOEngineTy() { Workers.detach(Served); }

Expected<IOEngineTy::CheckedRequestTy>
IOEngineTy::checkRequest(IORequestTy::OpTy Op, int Fd, void *DevPtr,
                         size_t Count, off_t Offset) {
  const char *OpName = Op == IORequestTy::Read ? "read" : "write";
  int DeviceId = Device.getDeviceId();
  auto Flags = checkDescriptor(Sys, Op == IORequestTy::Write, Fd, Count,
                               Offset, DeviceId);
  if (!Flags)
    return Flags.takeError();
  if (Count && !DevPtr)
    return makeErrnoError(EFAULT,
                          "{0} of {1} bytes on device {2}: null buffer",
                          OpName, Count, DeviceId);
  // Busy from before the buffer checks on: a free in progress finishes
  // first (the checks then refuse the memory), a later one waits for this
  // request (IOBusyMemory.h).
  IOBusyMarkTy BusyMark;
  if (Count)
    BusyMark = IOBusyMarkTy(Device.getIOBusyMemory(), DevPtr, Count);
  AllocKindTy Kind = AllocKindTy::Device;
  bool Owned = Device.ownsPointer(DevPtr, &Kind);
  if (Count && !Owned)
    return makeErrnoError(EFAULT, "{0} of {1} bytes on device {2}: buffer {3} "
                          "is not memory of this device",
                          OpName, Count, DeviceId, DevPtr);
  size_t Room = Device.bytesAvailableFrom(DevPtr);
  if (Count > Room)
    return makeErrnoError(EFAULT, "{0} of {1} bytes on device {2}: buffer {3} "
                          "has only {4} bytes left in its allocation",
                          OpName, Count, DeviceId, DevPtr, Room);

  std::string Why;
  bool Append = Op == IORequestTy::Write && (*Flags & O_APPEND);
  auto Path = choosePath({Fd, DevPtr, Count, Offset, Append, Kind}, Why);
  if (!Path)
    return Path.takeError();
  return CheckedRequestTy{*Flags, std::move(BusyMark), *Path, std::move(Why),
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

void IOEngineTy::queueRequest(IORequestTy &R) {
  startWorkers();
  R.markQueued();
  Queue.push(R);
}

Expected<std::unique_ptr<IORequestTy>>
IOEngineTy::submit(IORequestTy::OpTy Op, int Fd, void *DevPtr, size_t Count,
                   off_t Offset) {
  const char *OpName = Op == IORequestTy::Read ? "read" : "write";
  auto Checked = checkRequest(Op, Fd, DevPtr, Count, Offset);
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

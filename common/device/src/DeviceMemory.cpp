// SPDX-License-Identifier: Apache-2.0
//
// GenericDeviceTy's memory bookkeeping: the program's allocations and frees
// (dataAlloc, dataDelete), the registry of what the vendor handed out, the
// pinned map's registration of host-kind memory, and the host buffers
// locked for a mapping's lifetime. Lifecycle, queues and transfers are in
// Device.cpp and DeviceTransfers.cpp.
#include "offloadio/Device.h"

#include "llvm/ADT/ScopeExit.h"

using namespace offloadio;

Expected<void *> GenericDeviceTy::dataAlloc(int64_t Size, void *HstPtr,
                                            AllocKindTy Kind) {
  if (Size < 0)
    return makeError(ErrorCode::InvalidArgument,
                     "cannot allocate {0} bytes of {1} memory", Size,
                     allocKindName(Kind));
  // A zero-length mapping still needs a unique, valid address.
  size_t Bytes = Size ? size_t(Size) : 1;
  void *Ptr = nullptr;
  switch (Kind) {
  case AllocKindTy::Default:
  case AllocKindTy::Device:
    if (MemoryManager && MemoryManager->handles(Bytes)) {
      auto PtrOrErr = MemoryManager->allocate(Bytes);
      if (!PtrOrErr)
        return PtrOrErr.takeError();
      Ptr = *PtrOrErr;
      break;
    }
    [[fallthrough]];
  case AllocKindTy::Host:
  case AllocKindTy::Shared: {
    auto PtrOrErr = allocateMemory(Bytes, Kind);
    if (!PtrOrErr)
      return PtrOrErr.takeError();
    Ptr = *PtrOrErr;
    break;
  }
  default:
    return makeError(ErrorCode::InvalidArgument,
                     "unknown allocation kind {0}", int32_t(Kind));
  }
  // Only host memory is registered, and the cache serves device memory.
  if (auto Err = onAllocated(Ptr, Bytes, Kind)) {
    llvm::consumeError(freeMemory(Ptr));
    return std::move(Err);
  }
  UserAllocations.add(Ptr, Bytes, Kind);
  // libomptarget 16 names the mapped buffer here; later versions in
  // data_notify_mapped (notifyDataMapped).
  if (HstPtr && Size > 0 && !Services.RuntimeABI.notifiesMappedBuffers())
    if (auto Err = lockMappedBuffer(Ptr, HstPtr, size_t(Size))) {
      llvm::consumeError(dataDelete(Ptr, Kind));
      return std::move(Err);
    }
  return Ptr;
}

Error GenericDeviceTy::dataDelete(void *TgtPtr, AllocKindTy Kind) {
  if (!TgtPtr)
    return makeError(ErrorCode::InvalidArgument,
                     "cannot free a null pointer on device {0}", DeviceId);
  // A block the memory manager keeps for reuse was freed already. Passing it
  // on to freeImpl would release memory the manager still hands out.
  if (MemoryManager && MemoryManager->isCached(TgtPtr))
    return makeError(ErrorCode::InvalidArgument,
                     "double free of {0} on device {1}: the block is already "
                     "free",
                     TgtPtr, DeviceId);
  // Only the start of a live allocation of this device can be freed; the
  // pinned map's registration of host memory is plugin-wide, and a device
  // that cannot free the memory must not drop it, or the owner could never
  // free it afterwards.
  auto Alloc = UserAllocations.find(TgtPtr);
  if (!Alloc)
    return makeError(ErrorCode::NotFound,
                     "free of {0} ({1} memory) on device {2}: not allocated "
                     "by this device",
                     TgtPtr, allocKindName(Kind), DeviceId);
  if (Alloc->Ptr != TgtPtr)
    return makeError(ErrorCode::InvalidArgument,
                     "free of {0} ({1} memory) on device {2}: the pointer is "
                     "inside a {3} allocation of {4} bytes at {5}, not its "
                     "start",
                     TgtPtr, allocKindName(Kind), DeviceId,
                     allocKindName(Alloc->Kind), Alloc->Size, Alloc->Ptr);
  // The kind the memory was allocated with decides what freeing it undoes,
  // whatever kind the free names (docs/errors-and-env.md, "Freeing with
  // another kind"): omp_target_free passes DEFAULT whatever allocated the
  // memory, and HOST memory's registration in the pinned map must go with
  // the memory.
  Kind = Alloc->Kind;
  // File transfers in flight into or out of the memory finish first: they
  // must not touch it once it is freed (and perhaps handed out again).
  // omp_target_free cannot report a failure to the program, so a free
  // waits rather than fails. Transfers submitted meanwhile wait for the free
  // and then find the memory gone.
  size_t Room = std::max<size_t>(Alloc->Size, 1);
  if (IOService && IOService->beginFree(TgtPtr, Room))
    Services.Info.print(InfoDataTransfer, DeviceId,
                        "free of {0} waited for file transfers in flight",
                        TgtPtr);
  auto EndFree = llvm::make_scope_exit([&] {
    if (IOService)
      IOService->endFree(TgtPtr, Room);
  });
  // Claimed first, so that of two frees of one pointer in flight only one
  // goes on; given back if the free fails and the memory stays.
  if (!UserAllocations.remove(TgtPtr))
    return makeError(ErrorCode::NotFound,
                     "free of {0} ({1} memory) on device {2}: already freed",
                     TgtPtr, allocKindName(Kind), DeviceId);
  auto Restore = [&](Error Err) {
    UserAllocations.add(Alloc->Ptr, Alloc->Size, Alloc->Kind);
    return Err;
  };
  if (auto Err = onFreeing(TgtPtr, Kind))
    return Restore(std::move(Err));
  // Every failure from here on leaves the memory allocated, so it stays the
  // program's to free again, registered as it was.
  auto Reregister = [&](Error Err) {
    return Restore(llvm::joinErrors(
        std::move(Err), onAllocated(Alloc->Ptr, Alloc->Size, Alloc->Kind)));
  };
  if (auto Err = unlockMappedBuffer(TgtPtr))
    return Reregister(std::move(Err));
  if (MemoryManager && isDeviceKind(Kind)) {
    auto Cached = MemoryManager->free(TgtPtr);
    if (!Cached)
      return Reregister(Cached.takeError());
    if (*Cached)
      return Error::success();
  }
  if (auto Err = freeMemory(TgtPtr))
    return Reregister(std::move(Err));
  return Error::success();
}

Expected<void *> GenericDeviceTy::allocateMemory(size_t Size,
                                                 AllocKindTy Kind) {
  auto Ptr = allocateImpl(Size, Kind);
  if (Ptr)
    VendorMemory.add(*Ptr, Size, Kind);
  return Ptr;
}

Error GenericDeviceTy::freeMemory(void *Ptr) {
  auto Alloc = VendorMemory.remove(Ptr);
  if (!Alloc)
    return makeError(ErrorCode::NotFound,
                     "free of {0} on device {1}: not allocated by this device",
                     Ptr, DeviceId);
  if (auto Err = freeImpl(Ptr, Alloc->Size, Alloc->Kind)) {
    // The vendor kept the memory: it can be freed again later.
    VendorMemory.add(Alloc->Ptr, Alloc->Size, Alloc->Kind);
    return Err;
  }
  return Error::success();
}

Error GenericDeviceTy::freeLeakedMemory() {
  UserAllocations.takeAll();
  // A driver that has shut down took the memory left with it.
  TeardownTy Teardown;
  for (const AllocationInfoTy &Alloc : VendorMemory.takeAll())
    Teardown.run([&] { return freeImpl(Alloc.Ptr, Alloc.Size, Alloc.Kind); });
  return Teardown.takeForEnclosing();
}

Error GenericDeviceTy::lockMappedBuffer(void *Key, void *HstPtr,
                                        size_t Size) {
  MappedLockPolicyTy Policy = Services.MappedLocks;
  if (Policy == MappedLockPolicyTy::Off)
    return Error::success();
  auto Locked = Services.PinnedMap.lock(HstPtr, Size);
  if (!Locked) {
    if (Policy == MappedLockPolicyTy::Mandatory)
      return Locked.takeError();
    // Best effort: the mapping works unlocked, through staging.
    Services.Info.print(InfoDataTransfer, DeviceId,
                        "mapped buffer {0} ({1} bytes) left unlocked: {2}",
                        HstPtr, Size, takeErrorMessage(Locked.takeError()));
    return Error::success();
  }
  std::lock_guard<std::mutex> Guard(MappedLocksLock);
  MappedLocks[Key] = HstPtr;
  return Error::success();
}

Error GenericDeviceTy::unlockMappedBuffer(void *Key) {
  void *HstPtr;
  {
    std::lock_guard<std::mutex> Guard(MappedLocksLock);
    auto It = MappedLocks.find(Key);
    if (It == MappedLocks.end())
      return Error::success();
    HstPtr = It->second;
    MappedLocks.erase(It);
  }
  if (auto Err = Services.PinnedMap.unlock(HstPtr)) {
    // The region keeps its lock: a retried free must find it again.
    std::lock_guard<std::mutex> Guard(MappedLocksLock);
    MappedLocks.try_emplace(Key, HstPtr);
    return Err;
  }
  return Error::success();
}

Error GenericDeviceTy::onAllocated(void *Ptr, size_t Size, AllocKindTy Kind) {
  // Runtime-pinned host memory is usable by the device as it is; locks
  // inside it only count references and never pin or unpin it.
  if (Kind != AllocKindTy::Host)
    return Error::success();
  return Services.PinnedMap.registerExternal(Ptr, Ptr, Size);
}

Error GenericDeviceTy::onFreeing(void *Ptr, AllocKindTy Kind) {
  if (Kind != AllocKindTy::Host)
    return Error::success();
  return Services.PinnedMap.unregisterExternal(Ptr);
}

// SPDX-License-Identifier: Apache-2.0
//
// A fake plugin and device for unit tests of common/: memory is host memory
// the device tracks (so findAllocation works), streams and events are the host
// backend's. The backend seam can fail on demand: allocations of each kind
// after a number of successes, stream copies, stream and event creation, and
// the plugin's pinning of host memory, as a vendor runtime out of memory or
// in error would.
#ifndef OFFLOADIO_TEST_UNIT_FAKEDEVICE_H
#define OFFLOADIO_TEST_UNIT_FAKEDEVICE_H

#include "FakeStreams.h"
#include "HostStream.h"

#include "offloadio/Device.h"
#include "offloadio/DeviceIO.h"
#include "offloadio/Plugin.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <shared_mutex>

namespace offloadio::unittest {

inline Error notHere(const char *What) {
  return makeError(ErrorCode::Unsupported, "fake device: no {0}", What);
}

/// A device without images, kernels or globals: the base of the tests' fake
/// devices, which implement the rest.
class ImagelessDeviceTy : public GenericDeviceTy {
public:
  using GenericDeviceTy::GenericDeviceTy;

protected:
  Expected<std::unique_ptr<DeviceImageTy>>
  loadImageImpl(const __tgt_device_image &, int32_t) override {
    return notHere("images");
  }
  Expected<std::unique_ptr<GenericKernelTy>>
  constructKernelImpl(DeviceImageTy &, llvm::StringRef) override {
    return notHere("kernels");
  }
  Expected<void *> getGlobalAddressImpl(DeviceImageTy &, llvm::StringRef,
                                        size_t) override {
    return notHere("globals");
  }
  Expected<bool> writeImageGlobalImpl(DeviceImageTy &, llvm::StringRef,
                                      const void *, size_t) override {
    return notHere("globals");
  }
};

/// A plugin that creates no devices of its own; tests construct them.
class FakePluginTy final : public GenericPluginTy {
public:
  FakePluginTy() : GenericPluginTy("fake") {}

  /// Locking (pinning) host memory fails, as with RLIMIT_MEMLOCK exhausted.
  std::atomic<bool> FailPins{false};

protected:
  Expected<int32_t> initImpl() override { return 1; }
  Expected<std::unique_ptr<GenericDeviceTy>>
  createDeviceImpl(int32_t) override {
    return notHere("devices from the plugin");
  }
  bool isImageCompatibleImpl(const __tgt_device_image &,
                             llvm::StringRef) override {
    return false;
  }
  Expected<void *> pinHostMemoryImpl(void *HstPtr, size_t Size) override {
    if (FailPins)
      return makeError(ErrorCode::OutOfResources,
                       "fake pin of {0} bytes at {1}: out of memory", Size,
                       HstPtr);
    return HstPtr;
  }
  Error unpinHostMemoryImpl(void *, void *, size_t) override {
    return Error::success();
  }
};

/// A stream whose copies fail (the staged path's device errors).
class FailingStreamTy final : public ImmediateStreamTy {
public:
  Error copyAsync(void *, const void *, size_t, CopyKindTy) override {
    return makeError(ErrorCode::Internal, "fake stream: copy failed");
  }
};

/// Memory is host memory with a registry of allocations; whether the host
/// may address device-kind memory is the test's choice.
class FakeDeviceTy : public ImagelessDeviceTy {
public:
  FakeDeviceTy(GenericPluginTy &Plugin, bool HostAddressable)
      : ImagelessDeviceTy(Plugin, 0),
        IOService(*this, Plugin.getSys(),
                  [&Plugin](const IOConfigTy &Config) -> IOWorkerPoolTy & {
                    return Plugin.getIOWorkers(Config);
                  }) {
    Limits.HostCanAccessDeviceMemory = HostAddressable;
    // As the plugin's initDevice does: frees wait for the tests' engines.
    setIOService(&IOService);
  }
  ~FakeDeviceTy() override {
    for (auto &[Addr, A] : Allocations)
      std::free(reinterpret_cast<void *>(Addr));
  }

  /// An allocation of the program, of \p Kind (device memory by default).
  char *alloc(size_t Size, AllocKindTy Kind = AllocKindTy::Device) {
    auto P = dataAlloc(int64_t(Size), nullptr, Kind);
    EXPECT_TRUE(bool(P)) << llvm::toString(P.takeError());
    return P ? static_cast<char *>(*P) : nullptr;
  }
  /// Free an allocation of alloc().
  void release(void *Ptr) {
    EXPECT_FALSE(bool(dataDelete(Ptr, AllocKindTy::Device)));
  }

  std::optional<AllocationInfoTy>
  findAllocation(const void *Ptr) const override {
    auto Addr = reinterpret_cast<uintptr_t>(Ptr);
    std::shared_lock<std::shared_mutex> Guard(Lock);
    auto It = Allocations.upper_bound(Addr);
    if (It == Allocations.begin())
      return std::nullopt;
    --It;
    if (Addr >= It->first + std::max<size_t>(It->second.Size, 1))
      return std::nullopt;
    return AllocationInfoTy{reinterpret_cast<void *>(It->first),
                            It->second.Size, It->second.Kind};
  }

  /// The device as the file engine sees it.
  DeviceIOAdapterTy &io() { return IOService.getAdapter(); }
  /// Memory the file transfers of the tests' engines use.
  IOBusyMemoryTy &getIOBusyMemory() { return IOService.getBusyMemory(); }

  /// Host-kind (pinned) allocations alive: the engine's staging buffers.
  size_t livePinned() const { return live(AllocKindTy::Host); }
  /// Allocations of \p Kind alive.
  size_t live(AllocKindTy Kind) const {
    std::shared_lock<std::shared_mutex> Guard(Lock);
    size_t N = 0;
    for (auto &[Addr, A] : Allocations)
      N += A.Kind == Kind;
    return N;
  }

  /// Streams created from now on fail their copies.
  std::atomic<bool> FailCopies{false};
  /// Host-kind (pinned) allocations that succeed before each later one
  /// fails as out of memory; negative: no limit.
  std::atomic<int> PinnedAllocsLeft{-1};
  /// The same for device-kind (and default and shared) allocations.
  std::atomic<int> DeviceAllocsLeft{-1};
  /// Stream and event creation fail.
  std::atomic<bool> FailStreams{false}, FailEvents{false};
  /// freeImpl fails, keeping the memory.
  std::atomic<bool> FailFrees{false};
  /// Allocations refused so far.
  std::atomic<unsigned> RefusedAllocs{0};
  /// Answer getPageableCaptureLimit() like the CUDA backend (64 KiB): small
  /// unlocked copies go to the stream directly, small downloads through a
  /// deferred bounce buffer. 0: captures nothing.
  size_t PageableCaptureLimit = 0;

  /// The vendor's pointer query (queryForeignMemoryImpl); unset: the
  /// vendor knows no pointer.
  std::function<Expected<ForeignMemoryTy>(const void *)> ForeignQuery;

protected:
  Expected<ForeignMemoryTy> queryForeignMemoryImpl(const void *Ptr) override {
    if (ForeignQuery)
      return ForeignQuery(Ptr);
    return ForeignMemoryTy();
  }
  size_t getPageableCaptureLimit() const override {
    return PageableCaptureLimit;
  }
  Error initImpl(DeviceLimitsTy &) override { return Error::success(); }
  Error deinitImpl() override { return Error::success(); }
  Expected<void *> allocateImpl(size_t Size, AllocKindTy Kind) override {
    std::atomic<int> &Left =
        Kind == AllocKindTy::Host ? PinnedAllocsLeft : DeviceAllocsLeft;
    int Before = Left.load();
    while (Before > 0 && !Left.compare_exchange_weak(Before, Before - 1))
      ;
    void *Ptr = Before == 0 ? nullptr
                            : std::aligned_alloc(
                                  64, (std::max<size_t>(Size, 1) + 63) &
                                          ~size_t(63));
    if (!Ptr) {
      ++RefusedAllocs;
      return makeError(ErrorCode::OutOfResources,
                       "fake allocation of {0} bytes of {1} memory on device "
                       "{2}: out of memory",
                       Size, allocKindName(Kind), DeviceId);
    }
    std::unique_lock<std::shared_mutex> Guard(Lock);
    Allocations[reinterpret_cast<uintptr_t>(Ptr)] = {Size, Kind};
    return Ptr;
  }
  Error freeImpl(void *Ptr, size_t, AllocKindTy) override {
    if (FailFrees)
      return makeError(ErrorCode::BackendError,
                       "fake free of {0} on device {1} failed", Ptr, DeviceId);
    {
      std::unique_lock<std::shared_mutex> Guard(Lock);
      if (!Allocations.erase(reinterpret_cast<uintptr_t>(Ptr)))
        return makeError(ErrorCode::NotFound, "fake: free of {0}", Ptr);
    }
    std::free(Ptr);
    return Error::success();
  }
  Expected<std::unique_ptr<StreamTy>> createStreamImpl() override {
    if (FailStreams)
      return makeError(ErrorCode::OutOfResources,
                       "fake stream creation on device {0} failed", DeviceId);
    if (FailCopies)
      return std::make_unique<FailingStreamTy>();
    return std::make_unique<host::HostStreamTy>();
  }
  Expected<std::unique_ptr<EventTy>> createEventImpl() override {
    if (FailEvents)
      return makeError(ErrorCode::OutOfResources,
                       "fake event creation on device {0} failed", DeviceId);
    return std::make_unique<host::HostEventTy>();
  }
  Error initDeviceInfoImpl(__tgt_device_info &) override {
    return Error::success();
  }
  void printInfoImpl(llvm::raw_ostream &) override {}

private:
  struct AllocationTy {
    size_t Size;
    AllocKindTy Kind;
  };
  DeviceIOTy IOService;
  mutable std::shared_mutex Lock;
  // The fake vendor's view of its memory: everything allocateImpl handed
  // out, tests' alloc() included; findAllocation above answers from it.
  std::map<uintptr_t, AllocationTy> Allocations;
};

} // namespace offloadio::unittest

#endif // OFFLOADIO_TEST_UNIT_FAKEDEVICE_H

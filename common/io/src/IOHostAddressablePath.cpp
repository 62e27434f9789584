// SPDX-License-Identifier: Apache-2.0
//
// The host-addressable path (OMPX_IO_PATH=direct): pread/pwrite between
// the file and device memory that the host addresses, with no copy in
// between. Unrelated to O_DIRECT, which any path may use (IODirectPolicy.h).
#include "offloadio/Profile.h"
#include "offloadio/io/IOChunkIO.h"
#include "offloadio/io/IODevice.h"
#include "offloadio/io/IOPathBackend.h"
#include "offloadio/io/IORequest.h"

using namespace offloadio;

namespace {

class IOHostAddressablePathTy final : public IOPathBackendTy {
public:
  IOHostAddressablePathTy(IODeviceTy &Device, SysTy &Sys, IOStatsTy &Stats)
      : Device(Device), Sys(Sys), Stats(Stats) {}

  IOPathTy path() const override { return IOPathTy::HostAddressable; }

  bool available(std::string &Why) const override {
    if (Device.hostCanAccessDeviceMemory())
      return true;
    Why = "device memory is not addressable by the host";
    return false;
  }

  int score(const IOPathQueryTy &Q, std::string *Why) override {
    // Below the fastpath, which moves data without the CPU, and above
    // staging, which copies everything once more.
    constexpr int HostAddressable = 50;
    if (Device.hostCanAccessDeviceMemory() || Q.Kind == AllocKindTy::Host ||
        Q.Kind == AllocKindTy::Shared)
      return HostAddressable;
    if (Why)
      *Why = "device memory is not addressable by the host";
    return Refused;
  }

  bool runChunk(IORequestTy &R, size_t I, IOWorkerStagingTy &) override {
    if (R.isGathered()) {
      countBytes(Stats, R, path(), moveGathered(Sys, R));
      return true;
    }
    size_t Len = R.chunkLength(I);
    char *Dev = R.devPtr() + R.chunkOffset(I);
    off_t FileOffset = R.offset() + off_t(R.chunkOffset(I));
    TimeProfileTy *Profile = Device.getProfile();
    if (R.isWrite()) {
      TimeProfileTy::ScopeTy Timed(Profile, ProfileStage::FilePwrite);
      countBytes(Stats, R, path(), writeChunk(Sys, R, I, Dev, Len, FileOffset));
      return true;
    }
    auto N = [&] {
      TimeProfileTy::ScopeTy Timed(Profile, ProfileStage::FilePread);
      return readChunkInPlace(Sys, R, I, Dev, Len, FileOffset);
    }();
    if (!N) {
      R.recordError(I, N.takeError());
      return true;
    }
    R.recordChunk(I, *N);
    countBytes(Stats, R, path(), *N);
    return true;
  }

private:
  IODeviceTy &Device;
  SysTy &Sys;
  IOStatsTy &Stats;
};

} // namespace

std::unique_ptr<IOPathBackendTy>
offloadio::makeHostAddressablePath(IODeviceTy &Device, SysTy &Sys,
                                   IOStatsTy &Stats) {
  return std::make_unique<IOHostAddressablePathTy>(Device, Sys, Stats);
}

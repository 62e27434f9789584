// SPDX-License-Identifier: Apache-2.0
//
// The fastpath: the vendor's storage <-> GPU DMA. A failure with ENODEV,
// EREMOTEIO or ENOTSUP moves the rest of the request to the staged path,
// counted and explained, and the file system is not offered to the vendor
// again.
#include "offloadio/MessagePrefix.h"
#include "offloadio/io/IODevice.h"
#include "offloadio/io/IOFastpath.h"
#include "offloadio/io/IOPathBackend.h"
#include "offloadio/io/IORefusedFileSystems.h"
#include "offloadio/io/IORequest.h"
#include "offloadio/io/IOStats.h"
#include "offloadio/io/Sys.h"

#include <cerrno>
#include <cstdio>

using namespace offloadio;

IOFastpathTy::~IOFastpathTy() = default;

void IOLogTy::print(const std::string &Msg) const {
  if (!Enabled)
    return;
  // One write, so that lines of concurrent workers never interleave.
  std::string Line = linePrefix(PluginName, DeviceId) + ": " + Msg + "\n";
  std::fwrite(Line.data(), 1, Line.size(), stderr);
}

namespace {

class IOFastpathPathTy final : public IOPathBackendTy {
public:
  IOFastpathPathTy(IODeviceTy &Device, SysTy &Sys, IOStatsTy &Stats,
                   IOFastpathTy *Fastpath, IORefusedFileSystemsTy &Refused,
                   const IOLogTy &Log)
      : Device(Device), Sys(Sys), Stats(Stats), Fastpath(Fastpath),
        RefusedFS(Refused), Log(Log) {}

  IOPathTy path() const override { return IOPathTy::Fastpath; }

  bool available(std::string &Why) const override {
    if (Fastpath)
      return true;
    Why = noFastpath();
    return false;
  }

  int score(const IOPathQueryTy &Q, std::string *Why) override {
    // Highest: the vendor moves the data between storage and the GPU with
    // neither the CPU nor host memory in between.
    constexpr int Accepted = 100;
    if (!Fastpath) {
      if (Why)
        *Why = noFastpath();
      return Refused;
    }
    if (Q.Append) {
      if (Why)
        *Why = "the fd has O_APPEND: vendor storage DMA writes at offsets";
      return Refused;
    }
    std::string VendorWhy;
    if (!Fastpath->accepts(Q.Fd, Q.DevPtr, Q.Count, Q.Offset, VendorWhy,
                           Log)) {
      if (Why)
        *Why = std::move(VendorWhy);
      return Refused;
    }
    struct stat Own;
    const struct stat *St = Q.St;
    if (!St && Sys.fstat(Q.Fd, &Own) == 0)
      St = &Own;
    if (St)
      if (auto Reason = RefusedFS.reasonFor(IORefusedFileSystemsTy::keyOf(*St))) {
        if (Why)
          *Why = std::string(Fastpath->name()) +
                 " refused this file system before: " + *Reason;
        return Refused;
      }
    return Accepted;
  }

  bool runChunk(IORequestTy &R, size_t I, IOWorkerStagingTy &) override {
    // The engine never puts a gathered request on the fastpath
    // (IOBatchSubmit.cpp says why); should one come, staging serves it.
    if (R.isGathered())
      return false;
    size_t Len = R.chunkLength(I);
    char *Dev = R.devPtr() + R.chunkOffset(I);
    off_t FileOffset = R.offset() + off_t(R.chunkOffset(I));
    Error Err = Error::success();
    if (!R.isWrite()) {
      auto N = Fastpath->read(R.fd(), Dev, Len, FileOffset, Log);
      if (N) {
        R.recordChunk(I, *N);
        countBytes(Stats, R, path(), *N);
        return true;
      }
      Err = N.takeError();
    } else {
      Err = Fastpath->write(R.fd(), Dev, Len, FileOffset, Log);
      if (!Err) {
        R.recordChunk(I, Len);
        countBytes(Stats, R, path(), Len);
        return true;
      }
    }
    ErrorDetailsTy D = takeErrorDetails(std::move(Err));
    // The file size limit: the vendor call does not say how much of the
    // chunk it wrote. The chunk is written again through staging, which
    // stops exactly at the limit; the request stays on the fastpath.
    if (R.isWrite() && D.Errno == EFBIG)
      return false;
    if (D.Errno != ENODEV && D.Errno != EREMOTEIO && D.Errno != ENOTSUP) {
      R.recordError(I,
                    makeErrnoError(errnoFor(D), "fastpath: {0}", D.Message));
      return true;
    }
    // The vendor path is unusable for this file or device: the rest of the
    // request, this chunk included, goes through staging. Workers that
    // tried the fastpath at the same time all get here; the request falls
    // back (and is counted) once.
    if (R.fallBackToStaged())
      noteFallback("fastpath failed (" + D.Message +
                   "); retried on the staged path");
    struct stat St;
    if (Sys.fstat(R.fd(), &St) == 0)
      RefusedFS.refuse(IORefusedFileSystemsTy::keyOf(St), D.Message);
    return false;
  }

private:
  std::string noFastpath() const {
    return "the " + Device.getPluginName() +
           " plugin has no vendor storage DMA";
  }

  /// Count a fastpath -> staged fallback and say why.
  void noteFallback(const std::string &Why) {
    Stats.Fallbacks.fetch_add(1, std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> Guard(Stats.ReasonLock);
      Stats.LastFallback = Why;
    }
    Log.print(Why);
  }

  IODeviceTy &Device;
  SysTy &Sys;
  IOStatsTy &Stats;
  IOFastpathTy *Fastpath;
  IORefusedFileSystemsTy &RefusedFS;
  const IOLogTy &Log;
};

} // namespace

std::unique_ptr<IOPathBackendTy>
offloadio::makeFastpathPath(IODeviceTy &Device, SysTy &Sys, IOStatsTy &Stats,
                            IOFastpathTy *Fastpath,
                            IORefusedFileSystemsTy &Refused,
                            const IOLogTy &Log) {
  return std::make_unique<IOFastpathPathTy>(Device, Sys, Stats, Fastpath,
                                            Refused, Log);
}

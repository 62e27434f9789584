// SPDX-License-Identifier: Apache-2.0
//
// Which path serves a request of the file engine, and why: fastpath where
// the vendor's storage DMA accepts the file and buffer, direct where the
// host can address the buffer, staged always; OMPX_IO_PATH forces one.
#include "offloadio/Device.h"
#include "offloadio/Plugin.h"
#include "offloadio/io/IOEngine.h"

using namespace offloadio;

unsigned IOEngineTy::availablePaths(std::string &Why) const {
  unsigned Mask = 1u << unsigned(IOPathTy::Staged);
  if (Device.getLimits().HostCanAccessDeviceMemory)
    Mask |= 1u << unsigned(IOPathTy::Direct);
  else
    Why += "direct: device memory is not addressable by the host\n";
  if (Fastpath)
    Mask |= 1u << unsigned(IOPathTy::Fastpath);
  else
    Why += "fastpath: the " + Device.getPlugin().getName() +
           " plugin has no vendor storage DMA\n";
  return Mask;
}

Expected<IOPathTy> IOEngineTy::choosePath(int Fd, const void *DevPtr,
                                          size_t Count, off_t Offset,
                                          bool Append,
                                          std::string &Why) const {
  // Scores: fastpath 100 where it accepts, direct 50 where the host can
  // address the buffer, staged 10 always; negative means refused.
  int Scores[3] = {-1, -1, 10};
  std::string Refusals[3];
  AllocKindTy Kind = AllocKindTy::Device;
  Device.ownsPointer(DevPtr, &Kind);
  if (Device.getLimits().HostCanAccessDeviceMemory ||
      Kind == AllocKindTy::Host || Kind == AllocKindTy::Shared)
    Scores[0] = 50;
  else
    Refusals[0] = "device memory is not addressable by the host";
  if (!Fastpath)
    Refusals[1] = "the " + Device.getPlugin().getName() +
                  " plugin has no vendor storage DMA";
  else if (Append)
    Refusals[1] = "the fd has O_APPEND: vendor storage DMA writes at offsets";
  else if (Fastpath->accepts(Fd, DevPtr, Count, Offset, Refusals[1]))
    Scores[1] = 100;

  if (Config.ForcedPath >= 0) {
    unsigned P = unsigned(Config.ForcedPath);
    if (Scores[P] < 0)
      return makeErrnoError(ENOTSUP, "OMPX_IO_PATH={0} cannot serve this "
                            "request: {1}",
                            ioPathName(IOPathTy(P)), Refusals[P]);
    Why = "forced by OMPX_IO_PATH";
    return IOPathTy(P);
  }
  unsigned Best = 2;
  for (unsigned P = 0; P < 3; ++P)
    if (Scores[P] > Scores[Best])
      Best = P;
  Why = Best == 1   ? "vendor storage DMA accepts the file and buffer"
        : Best == 0 ? "the host can address the device buffer"
                    : "fastpath: " +
                          (Refusals[1].empty() ? std::string("refused")
                                               : Refusals[1]) +
                          "; direct: " + Refusals[0];
  return IOPathTy(Best);
}

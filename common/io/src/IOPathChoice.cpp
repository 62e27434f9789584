// SPDX-License-Identifier: Apache-2.0
//
// Which path serves a request of the file engine, and why: the backend with
// the highest score, or the one OMPX_IO_PATH forces if it does not refuse.
#include "offloadio/io/IOEngine.h"

using namespace offloadio;

unsigned IOEngineTy::availablePaths(std::string &Why) const {
  unsigned Mask = 0;
  // Listed direct first, then fastpath, as the reasons always were.
  for (IOPathTy P :
       {IOPathTy::HostAddressable, IOPathTy::Fastpath, IOPathTy::Staged}) {
    std::string Reason;
    if (Paths[unsigned(P)]->available(Reason))
      Mask |= 1u << unsigned(P);
    else
      Why += std::string(ioPathName(P)) + ": " + Reason + "\n";
  }
  return Mask;
}

Expected<IOPathTy> IOEngineTy::choosePath(const IOPathQueryTy &Q,
                                          std::string *Why) const {
  constexpr unsigned NumPaths = unsigned(IOPathTy::Count);
  int Scores[NumPaths];
  std::string Refusals[NumPaths];
  for (unsigned P = 0; P < NumPaths; ++P)
    Scores[P] = Paths[P]->score(Q, Why ? &Refusals[P] : nullptr);

  if (Config.ForcedPath >= 0) {
    unsigned P = unsigned(Config.ForcedPath);
    if (Scores[P] < 0) {
      // The reason is asked for again: the error always tells it.
      std::string Refusal;
      Paths[P]->score(Q, &Refusal);
      return makeErrnoError(ENOTSUP, "OMPX_IO_PATH={0} cannot serve this "
                            "request: {1}",
                            ioPathName(IOPathTy(P)), Refusal);
    }
    if (Why)
      *Why = "forced by OMPX_IO_PATH";
    return IOPathTy(P);
  }
  unsigned Best = unsigned(IOPathTy::Staged);
  for (unsigned P = 0; P < NumPaths; ++P)
    if (Scores[P] > Scores[Best])
      Best = P;
  if (!Why)
    return IOPathTy(Best);
  switch (IOPathTy(Best)) {
  case IOPathTy::Fastpath:
    *Why = "vendor storage DMA accepts the file and buffer";
    break;
  case IOPathTy::HostAddressable:
    *Why = "the host can address the device buffer";
    break;
  default: {
    // Staged wins only when both others refused: say why each did.
    const std::string &Fast = Refusals[unsigned(IOPathTy::Fastpath)];
    *Why = "fastpath: " + (Fast.empty() ? std::string("refused") : Fast) +
           "; direct: " + Refusals[unsigned(IOPathTy::HostAddressable)];
    break;
  }
  }
  return IOPathTy(Best);
}

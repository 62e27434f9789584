// SPDX-License-Identifier: Apache-2.0
#include "offloadio/ProcessShare.h"
#include "offloadio/Envar.h"
#include "offloadio/ThreadAffinity.h"

#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <unistd.h>

using namespace offloadio;

constexpr const char *ProcessShareTy::RankVariables[][2];

unsigned ProcessShareTy::cpus() const {
  unsigned Cpus = std::max(1u, MaskCpus);
  if (LocalRanks > 1)
    Cpus = std::min(Cpus, std::max(1u, OnlineCpus / LocalRanks));
  return Cpus;
}

std::string ProcessShareTy::cpusOrigin() const {
  std::string Mask =
      MaskProblem.empty()
          ? "the CPU mask (" + std::to_string(MaskCpus) + " of " +
                std::to_string(OnlineCpus) + " CPUs)"
          : "the online CPUs (" + std::to_string(OnlineCpus) + "; " +
                MaskProblem + ")";
  if (LocalRanks > 1 && cpus() < std::max(1u, MaskCpus))
    return "the local rank share (" + std::to_string(OnlineCpus) +
           " CPUs / " + std::to_string(LocalRanks) + " ranks from " +
           RanksVariable + ")";
  return Mask;
}

uint64_t ProcessShareTy::shareOf(uint64_t Bytes) const {
  return Bytes / std::max(1u, LocalRanks);
}

std::string ProcessShareTy::shareOrigin() const {
  if (LocalRanks <= 1)
    return "";
  return ", shared by " + std::to_string(LocalRanks) + " local ranks (" +
         RanksVariable + ")";
}

/// CPUs in this process's affinity mask, or 0 with \p Problem set.
static unsigned countMaskCpus(std::string &Problem) {
  CpuSetTy Mask;
  if (int Errno = AffinitySysTy().getThreadAffinity(Mask)) {
    Problem = Errno == EINVAL
                  ? "sched_getaffinity: no mask size up to " +
                        std::to_string(CpuSetTy::MaxCpus) + " CPUs fits"
                  : std::string("sched_getaffinity failed: ") +
                        std::strerror(Errno);
    return 0;
  }
  return unsigned(Mask.size());
}

ProcessShareTy ProcessShareTy::detect() {
  ProcessShareTy S;
  long Online = ::sysconf(_SC_NPROCESSORS_ONLN);
  S.OnlineCpus = Online > 0 ? unsigned(Online) : 1;
  unsigned Mask = countMaskCpus(S.MaskProblem);
  S.MaskCpus = Mask ? Mask : S.OnlineCpus;
  long Pages = ::sysconf(_SC_PHYS_PAGES);
  long PageSize = ::sysconf(_SC_PAGESIZE);
  S.PhysicalMemory =
      Pages > 0 && PageSize > 0 ? uint64_t(Pages) * uint64_t(PageSize) : 0;
  S.readRanks([](const char *Name) { return getEnv(Name); });
  return S;
}

void ProcessShareTy::readRanks(
    llvm::function_ref<std::optional<std::string>(const char *)> GetEnv) {
  for (const auto &Pair : RankVariables) {
    auto Size = GetEnv(Pair[0]);
    unsigned Ranks = 0;
    if (!Size || llvm::StringRef(*Size).trim().getAsInteger(10, Ranks) ||
        Ranks < 1 || Ranks > MaxLocalRanks)
      continue;
    LocalRanks = Ranks;
    RanksVariable = Pair[0];
    LocalRank = -1;
    unsigned Rank = 0;
    if (auto Index = GetEnv(Pair[1]))
      if (!llvm::StringRef(*Index).trim().getAsInteger(10, Rank) &&
          Rank < Ranks)
        LocalRank = int(Rank);
    return;
  }
}

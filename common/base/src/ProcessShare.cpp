// SPDX-License-Identifier: Apache-2.0
#include "offloadio/ProcessShare.h"
#include "offloadio/Envar.h"

#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sched.h>
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
  // The mask may be wider than the configured CPUs (hot-plug, cgroups):
  // grow the set until the kernel's fits.
  for (size_t Cpus = 1024; Cpus <= (1u << 20); Cpus *= 2) {
    cpu_set_t *Set = CPU_ALLOC(Cpus);
    if (!Set) {
      Problem = "CPU_ALLOC(" + std::to_string(Cpus) + ") failed";
      return 0;
    }
    size_t Size = CPU_ALLOC_SIZE(Cpus);
    int Result = ::sched_getaffinity(0, Size, Set);
    int Errno = errno;
    unsigned Count = Result == 0 ? unsigned(CPU_COUNT_S(Size, Set)) : 0;
    CPU_FREE(Set);
    if (Result == 0)
      return Count;
    if (Errno != EINVAL) {
      Problem = "sched_getaffinity(0, " + std::to_string(Size) +
                " bytes) failed: " + std::strerror(Errno);
      return 0;
    }
  }
  Problem = "sched_getaffinity: no mask size up to 2^20 CPUs fits";
  return 0;
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

// SPDX-License-Identifier: Apache-2.0
//
// What one process may take of its node: the CPUs of its affinity mask,
// and, when a launcher says the process is one of several ranks on the
// node, no more than its share of the node's CPUs and memory. The defaults
// of the thread and pinned-memory settings are derived from it
// (Settings.h, io/IOConfig.h), so that 8 ranks on a node together take what
// one process alone would.
#ifndef OFFLOADIO_PROCESSSHARE_H
#define OFFLOADIO_PROCESSSHARE_H

#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstdint>
#include <optional>
#include <string>

namespace offloadio {

/// The facts about this process and its node, and the share they give.
struct ProcessShareTy {
  /// Online CPUs of the node (sysconf(_SC_NPROCESSORS_ONLN)), at least 1.
  unsigned OnlineCpus = 1;
  /// CPUs in the process's affinity mask (sched_getaffinity), at least 1.
  unsigned MaskCpus = 1;
  /// Why MaskCpus is the online count instead, empty when it is the mask.
  std::string MaskProblem;
  /// Processes of the job on this node; 1 when no launcher variable says.
  unsigned LocalRanks = 1;
  /// This process's index among them; -1 when unknown.
  int LocalRank = -1;
  /// The launcher variable LocalRanks came from; empty when none.
  std::string RanksVariable;
  /// Physical memory of the node in bytes; 0 when unknown.
  uint64_t PhysicalMemory = 0;

  /// The launcher variables that give the number of ranks on the node, each
  /// with the variable of the rank's index, in the order they are tried.
  static constexpr const char *RankVariables[][2] = {
      {"OMPI_COMM_WORLD_LOCAL_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
      {"SLURM_NTASKS_PER_NODE", "SLURM_LOCALID"},
      {"MPI_LOCALNRANKS", "MPI_LOCALRANKID"},
      {"PMI_LOCAL_SIZE", "PMI_LOCAL_RANK"}};
  /// Most ranks per node taken from a launcher variable.
  static constexpr unsigned MaxLocalRanks = 1 << 16;

  /// CPUs the process may use: its mask, and at most its share of the
  /// node's online CPUs when it is one of several ranks; at least 1.
  unsigned cpus() const;
  /// Where cpus() comes from, in words ("the CPU mask (2 of 16 CPUs)").
  std::string cpusOrigin() const;
  /// \p Bytes of the node, divided among its local ranks.
  uint64_t shareOf(uint64_t Bytes) const;
  /// Where shareOf comes from, in words (empty for a lone process).
  std::string shareOrigin() const;

  /// This process: its mask, the node's CPUs and memory, and the launcher
  /// variables.
  static ProcessShareTy detect();
  /// Take LocalRanks, LocalRank and RanksVariable from the first launcher
  /// variable that \p GetEnv finds set to a count from 1 to MaxLocalRanks;
  /// values that do not parse are skipped.
  void readRanks(
      llvm::function_ref<std::optional<std::string>(const char *)> GetEnv);
};

} // namespace offloadio

#endif // OFFLOADIO_PROCESSSHARE_H

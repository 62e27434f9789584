// SPDX-License-Identifier: Apache-2.0
//
// The rank of the process in the job that a parallel launcher (mpirun,
// srun) started, for the prefix of the lines the plugins and libompx_io
// print: with several ranks writing to one terminal or log, each line says
// whose it is (processTag; the prefixes themselves are MessagePrefix.h's).
// Header-only:
// libompx_io and the settings readers (Envar.h) use it without the
// framework.
#ifndef OFFLOADIO_LAUNCHRANK_H
#define OFFLOADIO_LAUNCHRANK_H

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <string>
#include <unistd.h>

namespace offloadio {

/// The launcher variables that carry the rank of the process in its job,
/// in the order they are looked for: Open MPI, PMIx, PMI (MPICH, Intel
/// MPI), Slurm.
inline constexpr const char *LaunchRankVariables[] = {
    "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"};

/// The rank from the first of LaunchRankVariables set to an integer from 0
/// to INT_MAX, or -1 when the process was not started by such a launcher.
/// Read once per process: a forked child has its parent's rank.
inline int launchRank() {
  static const int Rank = [] {
    for (const char *Name : LaunchRankVariables) {
      const char *Value = std::getenv(Name);
      if (!Value || !*Value)
        continue;
      char *End = nullptr;
      errno = 0;
      long N = std::strtol(Value, &End, 10);
      if (errno == 0 && *End == '\0' && N >= 0 && N <= INT_MAX)
        return int(N);
    }
    return -1;
  }();
  return Rank;
}

/// "[<pid>]", or "[<pid> rank <r>]" in a launcher's job.
inline std::string processTag(long Pid) {
  std::string Tag = "[" + std::to_string(Pid);
  if (int Rank = launchRank(); Rank >= 0)
    Tag += " rank " + std::to_string(Rank);
  return Tag + "]";
}

} // namespace offloadio

#endif // OFFLOADIO_LAUNCHRANK_H

// Lines printed by the plugin and by libompx_io carry the process id, and,
// in a job started by a parallel launcher, the process's rank in it (from
// OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK or SLURM_PROCID, the first set
// to a rank): with several ranks writing to one log, every line says whose
// it is. A value that is no rank is ignored.
//
// REQUIRES: ompx-io, host-plugin
// RUN: %libomptarget-compile-generic
// RUN: env -u OMPI_COMM_WORLD_RANK -u PMIX_RANK -u PMI_RANK -u SLURM_PROCID \
// RUN:   OMPX_IO_INFO=1 %libomptarget-run-generic 2>&1 \
// RUN:   | %fcheck-generic --check-prefix=NORANK
// RUN: env OMPI_COMM_WORLD_RANK=3 OMPX_IO_INFO=1 %libomptarget-run-generic \
// RUN:   2>&1 | %fcheck-generic --check-prefix=RANK -DRANK=3
// RUN: env -u OMPI_COMM_WORLD_RANK -u PMIX_RANK -u PMI_RANK SLURM_PROCID=17 \
// RUN:   OMPX_IO_INFO=1 %libomptarget-run-generic 2>&1 \
// RUN:   | %fcheck-generic --check-prefix=RANK -DRANK=17
// RUN: env -u OMPI_COMM_WORLD_RANK -u PMIX_RANK PMI_RANK=first \
// RUN:   SLURM_PROCID=-2 OMPX_IO_INFO=1 %libomptarget-run-generic 2>&1 \
// RUN:   | %fcheck-generic --check-prefix=NORANK

#include <omp.h>
#include <stdio.h>
#include "ompx_io.h"

int main(void) {
  setvbuf(stdout, NULL, _IONBF, 0);
  // libompx_io's line: a handle no submission returned.
  printf("wait %zd\n", ompx_io_wait((ompx_io_request_t)12345));
  // The plugin's line: a free of memory the device never allocated.
  static char not_allocated[64];
  omp_target_free(not_allocated, omp_get_default_device());
  printf("done\n");
  return 0;
}

// NORANK: ompx-io[{{[0-9]+}}]: ompx_io_wait: request
// NORANK: wait -1
// NORANK: offload-io(x86_64)[{{[0-9]+}}] device {{[0-9]+}}: error: data_delete
// NORANK: done

// RANK: ompx-io[{{[0-9]+}} rank [[RANK]]]: ompx_io_wait: request
// RANK: wait -1
// RANK: offload-io(x86_64)[{{[0-9]+}} rank [[RANK]]] device {{[0-9]+}}: error: data_delete
// RANK: done

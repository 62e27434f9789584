// SPDX-License-Identifier: Apache-2.0
//
// ompx-io info: devices, their transfer paths, the engine settings.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ompx-io.h"
#include "ompx_io.h"

#include <errno.h>
#include <omp.h>
#include <string.h>

int cmdInfo(int Argc, char **Argv) {
  if (Argc > 0)
    usageError("info: unexpected argument '%s'", Argv[0]);
  int N = omp_get_num_devices();
  int Initial = omp_get_initial_device();
  printf("OpenMP: %d offload device%s; initial (host) device is %d\n", N,
         N == 1 ? "" : "s", Initial);
  PluginList L;
  loadedPlugins(&L);
  printf("Offload plugins loaded:\n");
  if (!L.Num)
    printf("  (none)\n");
  for (int I = 0; I < L.Num; ++I)
    printf("  %s (%s)\n", L.Plugins[I].Path,
           L.Plugins[I].OffloadIO ? "offload-io" : "stock, no ompx_io support");
  int Ours = 0;
  for (int D = 0; D < N; ++D) {
    char Desc[160];
    int IsOurs = describeDevice(D, &L, Desc, sizeof(Desc));
    Ours += IsOurs;
    printf("\nDevice %d: %s\n", D, Desc);
    // A tiny kernel shows that the device really runs code. libomptarget
    // ends the program if it cannot, so flush what we have printed first.
    fflush(stdout);
    int V = 0;
#pragma omp target device(D) map(from : V)
    V = 42;
    printf("  kernel launch: %s\n", V == 42 ? "ok" : "FAILED");
    unsigned Mask = 0;
    char Why[1024] = "";
    if (ompx_io_paths(D, &Mask, Why, sizeof(Why))) {
      printf("  transfer paths: unknown (%s)\n", strerror(errno));
      continue;
    }
    printf("  available paths:");
    for (int P = 0; P < OMPX_IO_NUM_PATHS; ++P)
      if (Mask & (1u << P))
        printf(" %s", ompx_io_path_name(P));
    printf("\n");
    if (*Why) {
      printf("  unavailable:\n");
      char *Save = NULL;
      for (char *Line = strtok_r(Why, "\n", &Save); Line;
           Line = strtok_r(NULL, "\n", &Save))
        printf("    %s\n", Line);
    }
    const char *Fallback =
        (Mask & (1u << OMPX_IO_PATH_DIRECT)) ? "direct" : "staged";
    if (Mask & (1u << OMPX_IO_PATH_FASTPATH))
      printf("  auto picks: fastpath where it accepts the file and buffer, "
             "else %s\n",
             Fallback);
    else
      printf("  auto picks: %s%s\n", Fallback,
             strcmp(Fallback, "staged")
                 ? ""
                 : " (direct for host or shared allocations)");
  }
  printf("\n");
  printPinnedBudget();
  printEngineSettings();
  if (N && !Ours)
    printf("\nNote: no device is served by an offload-io plugin, so ompx_io "
           "calls fail with ENODEV.\nPut the offload-io library directory "
           "first in LD_LIBRARY_PATH.\n");
  return 0;
}

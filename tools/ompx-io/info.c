// SPDX-License-Identifier: Apache-2.0
//
// ompx-io info: devices, their transfer paths, every setting; as
// text, or with --json as one JSON object for scripts. Exits 1 when no
// device is served by an offload-io plugin, so that a script can tell.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ompx-io.h"
#include "ompx_io.h"

#include <errno.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

void probeDevice(int Dev, const PluginList *L, DeviceProbe *P) {
  memset(P, 0, sizeof(*P));
  P->Served = deviceOwner(Dev, L, P->Plugin, sizeof(P->Plugin), &P->Local);
  int V = 0;
#pragma omp target device(Dev) map(from : V)
  V = 42;
  P->KernelOk = V == 42;
  if (ompx_io_paths(Dev, &P->Mask, P->Why, sizeof(P->Why)))
    P->PathsErrno = errno;
}

static void printDevice(int D, const DeviceProbe *P) {
  if (P->Served)
    printf("\nDevice %d: offload-io %s plugin, its device %d\n", D, P->Plugin,
           (int)P->Local);
  else
    printf("\nDevice %d: not an offload-io plugin's device\n", D);
  printf("  kernel launch: %s\n", P->KernelOk ? "ok" : "FAILED");
  if (P->PathsErrno) {
    printf("  transfer paths: unknown (%s)\n", strerror(P->PathsErrno));
    return;
  }
  printf("  available paths:");
  for (int Path = 0; Path < OMPX_IO_NUM_PATHS; ++Path)
    if (P->Mask & (1u << Path))
      printf(" %s", ompx_io_path_name(Path));
  printf("\n");
  if (*P->Why) {
    printf("  unavailable:\n");
    char Why[sizeof(P->Why)];
    memcpy(Why, P->Why, sizeof(Why));
    char *Save = NULL;
    for (char *Line = strtok_r(Why, "\n", &Save); Line;
         Line = strtok_r(NULL, "\n", &Save))
      printf("    %s\n", Line);
  }
  char Picks[128];
  printf("  auto picks: %s\n", autoPicks(P, Picks, sizeof(Picks)));
}

const char *autoPicks(const DeviceProbe *P, char *Buf, size_t Len) {
  const char *Fallback =
      (P->Mask & (1u << OMPX_IO_PATH_DIRECT)) ? "direct" : "staged";
  if (P->Mask & (1u << OMPX_IO_PATH_FASTPATH))
    snprintf(Buf, Len, "fastpath where it accepts the file and buffer, else %s",
             Fallback);
  else
    snprintf(Buf, Len, "%s%s", Fallback,
             strcmp(Fallback, "staged") ? ""
                                        : " (direct for host or shared "
                                          "allocations)");
  return Buf;
}

int cmdInfo(int Argc, char **Argv) {
  int Json = 0;
  for (int I = 0; I < Argc; ++I) {
    if (!strcmp(Argv[I], "--json"))
      Json = 1;
    else
      usageError("info: unexpected argument '%s'", Argv[I]);
  }
  int N = omp_get_num_devices();
  int Initial = omp_get_initial_device();
  if (!Json)
    printf("OpenMP: %d offload device%s; initial (host) device is %d\n", N,
           N == 1 ? "" : "s", Initial);
  // The kernel of the first probe makes libomptarget load the plugins.
  DeviceProbe *Probes = calloc(N ? (size_t)N : 1, sizeof(DeviceProbe));
  if (!Probes)
    fatal("out of memory");
  PluginList L;
  loadedPlugins(&L);
  if (!Json) {
    printf("Offload plugins loaded:\n");
    if (!L.Num)
      printf("  (none)\n");
    for (int I = 0; I < L.Num; ++I)
      printf("  %s (%s)\n", L.Plugins[I].Path,
             L.Plugins[I].OffloadIO ? "offload-io"
                                    : "stock, no ompx_io support");
  }
  int Ours = 0;
  for (int D = 0; D < N; ++D) {
    // libomptarget ends the program if the kernel cannot run: flush what
    // was printed first.
    fflush(stdout);
    probeDevice(D, &L, &Probes[D]);
    Ours += Probes[D].Served;
    if (!Json)
      printDevice(D, &Probes[D]);
  }
  if (Json) {
    printInfoJson(N, Initial, &L, Probes);
  } else {
    printf("\n");
    printProcessBudget();
    printPinnedBudget();
    printAllSettings();
    if (!Ours)
      printf("\nNote: no device is served by an offload-io plugin, so ompx_io "
             "calls fail with ENODEV.\nThe installed ompx-io loads the "
             "plugins of its prefix; a build tree's does not: put its lib/ "
             "first in LD_LIBRARY_PATH (install.md in "
             "<prefix>/share/doc/offload-io).\n");
  }
  free(Probes);
  return Ours ? 0 : 1;
}

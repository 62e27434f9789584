// SPDX-License-Identifier: Apache-2.0
//
// ompx-io: the settings, as the plugin reports them: every setting of every
// layer (ompx_io_get_all_settings) for info, the file engine's
// (ompx_io_get_settings) for bench's summary. The tool keeps no list of its
// own: the names, defaults, valid values and docs are the plugin's.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ompx-io.h"
#include "ompx_io.h"

#include <errno.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

ompx_io_setting_t *engineSettings(size_t *Count) {
  size_t N = 0;
  if (ompx_io_get_settings(NULL, 0, &N))
    return NULL;
  ompx_io_setting_t *S = calloc(N ? N : 1, sizeof(ompx_io_setting_t));
  if (!S) {
    errno = ENOMEM;
    return NULL;
  }
  if (ompx_io_get_settings(S, N, Count)) {
    int E = errno;
    free(S);
    errno = E;
    return NULL;
  }
  // Settings cannot appear between the calls; if they did, show the first N.
  if (*Count > N)
    *Count = N;
  return S;
}

ompx_io_setting_info_t *allSettings(size_t *Count) {
  size_t N = 0;
  if (ompx_io_get_all_settings(omp_get_initial_device(), NULL, 0, &N))
    return NULL;
  ompx_io_setting_info_t *S = calloc(N ? N : 1, sizeof(*S));
  if (!S) {
    errno = ENOMEM;
    return NULL;
  }
  S[0].size = sizeof(*S);
  if (ompx_io_get_all_settings(omp_get_initial_device(), S, N, Count)) {
    int E = errno;
    free(S);
    errno = E;
    return NULL;
  }
  if (*Count > N)
    *Count = N;
  return S;
}

void printAllSettings(void) {
  printf("Settings (every layer's; each is read when its layer starts):\n");
  size_t N = 0;
  ompx_io_setting_info_t *S = allSettings(&N);
  if (!S) {
    printf("  unknown: ompx_io_get_all_settings: %s\n", ompx_io_last_error());
    return;
  }
  int Width = 19;
  for (size_t I = 0; I < N; ++I)
    if ((int)strlen(S[I].name) > Width)
      Width = (int)strlen(S[I].name);
  const char *Layer = "";
  for (size_t I = 0; I < N; ++I) {
    if (strcmp(Layer, S[I].layer_name)) {
      Layer = S[I].layer_name;
      printf("  [%s]\n", Layer);
    }
    switch (S[I].origin) {
    case OMPX_IO_SETTING_ENVIRONMENT:
      printf("    %-*s %-8s (from the environment; default %s)\n", Width,
             S[I].name, S[I].value, S[I].default_value);
      break;
    case OMPX_IO_SETTING_INVALID:
      printf("    %-*s %-8s (INVALID '%s': the default is used; valid: %s)\n",
             Width, S[I].name, S[I].value, S[I].env_value, S[I].valid);
      break;
    default:
      printf("    %-*s %-8s (default)\n", Width, S[I].name, S[I].value);
      break;
    }
    printf("    %-*s   %s\n", Width, "", S[I].doc);
  }
  free(S);
}

void describeSetting(const char *Name, char *Buf, size_t Len) {
  size_t N = 0;
  ompx_io_setting_t *S = engineSettings(&N);
  snprintf(Buf, Len, "unknown");
  for (size_t I = 0; S && I < N; ++I) {
    if (strcmp(S[I].name, Name))
      continue;
    if (S[I].source == OMPX_IO_SETTING_ENVIRONMENT)
      snprintf(Buf, Len, "%s", S[I].env_value);
    else if (S[I].source == OMPX_IO_SETTING_INVALID)
      snprintf(Buf, Len, "%s (default; '%s' is invalid)", S[I].value,
               S[I].env_value);
    else
      snprintf(Buf, Len, "%s (default)", S[I].value);
  }
  free(S);
}

void printPinnedBudget(void) {
  ompx_pinned_budget_t B;
  if (ompx_io_get_pinned_budget(&B)) {
    printf("Pinned-memory budget: unknown (%s)\n\n", strerror(errno));
    return;
  }
  char Cap[32], Used[32], Peak[32];
  formatSize(B.cap, Cap, sizeof(Cap));
  formatSize(B.used, Used, sizeof(Used));
  formatSize(B.peak, Peak, sizeof(Peak));
  printf("Pinned-memory budget (OFFLOADIO_PINNED_MAX): %s; held %s, peak %s, "
         "refused %llu\n\n",
         Cap, Used, Peak, (unsigned long long)B.refusals);
}

void printProcessBudget(void) {
  ompx_io_process_budget_t B;
  if (ompx_io_get_process_budget(&B)) {
    printf("Process budget: unknown (%s)\n\n", strerror(errno));
    return;
  }
  printf("Process budget (shared by the process's devices):\n");
  printf("  CPUs:            %u of %u online in the mask", B.cpus_in_mask,
         B.cpus_online);
  if (*B.ranks_variable)
    printf("; local rank %d of %u (%s)", B.local_rank, B.local_ranks,
           B.ranks_variable);
  printf("\n  CPU budget:      %u, from %s\n", B.cpus, B.cpus_origin);
  printf("  IO threads:      %u (%u running), from %s\n", B.io_threads,
         B.io_threads_running, B.io_threads_origin);
  printf("  copy threads:    %u, from %s\n", B.copy_threads,
         B.copy_threads_origin);
  char Cap[32];
  formatSize(B.pinned_max, Cap, sizeof(Cap));
  printf("  pinned max:      %s, from %s\n\n", Cap, B.pinned_max_origin);
}

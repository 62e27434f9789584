// SPDX-License-Identifier: Apache-2.0
//
// ompx-io info --json: what info prints, as one JSON object on stdout:
//   version            the ompx-io and libompx_io versions
//   num_devices, initial_device
//   plugins            each loaded offload plugin: path, offload_io
//   devices            each OpenMP device: served, plugin, local_device,
//                      kernel_launch, paths, unavailable (or paths_error)
//   pinned_budget      cap, used, peak, refusals (null without our plugins)
//   process_budget     CPUs of the mask and of the local rank share, IO and
//                      copy threads and pinned cap, each with its origin
//                      (null without our plugins)
//   settings           the engine settings: name, value, default, env,
//                      valid, source (empty without our plugins)
//   all_settings       every setting of every layer: name, layer, value,
//                      default, env, valid, origin, doc (empty without our
//                      plugins)
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ompx-io.h"
#include "ompx_io.h"
#include "ompx_version.h"

#include <stdlib.h>
#include <string.h>

/// \p S as a JSON string, quoted and escaped.
static void jsonString(const char *S) {
  putchar('"');
  for (const unsigned char *C = (const unsigned char *)S; *C; ++C) {
    if (*C == '"' || *C == '\\')
      printf("\\%c", *C);
    else if (*C == '\n')
      printf("\\n");
    else if (*C < 0x20)
      printf("\\u%04x", *C);
    else
      putchar(*C);
  }
  putchar('"');
}

/// The lines of \p Text as a JSON array of strings.
static void jsonLines(const char *Text) {
  printf("[");
  const char *Sep = "";
  while (*Text) {
    size_t Len = strcspn(Text, "\n");
    char Line[1024];
    snprintf(Line, sizeof(Line), "%.*s", (int)Len, Text);
    if (Len) {
      printf("%s", Sep);
      jsonString(Line);
      Sep = ", ";
    }
    Text += Len + (Text[Len] == '\n');
  }
  printf("]");
}

static void printDeviceJson(int D, const DeviceProbe *P) {
  printf("    {\"device\": %d, \"served\": %s, \"plugin\": ", D,
         P->Served ? "true" : "false");
  if (P->Served) {
    jsonString(P->Plugin);
    printf(", \"local_device\": %d", (int)P->Local);
  } else {
    printf("null, \"local_device\": null");
  }
  printf(", \"kernel_launch\": %s", P->KernelOk ? "true" : "false");
  if (P->PathsErrno) {
    printf(", \"paths\": [], \"paths_error\": ");
    jsonString(strerror(P->PathsErrno));
    printf("}");
    return;
  }
  printf(", \"paths\": [");
  const char *Sep = "";
  for (int Path = 0; Path < OMPX_IO_NUM_PATHS; ++Path)
    if (P->Mask & (1u << Path)) {
      printf("%s", Sep);
      jsonString(ompx_io_path_name(Path));
      Sep = ", ";
    }
  printf("], \"unavailable\": ");
  jsonLines(P->Why);
  char Picks[128];
  printf(", \"auto_picks\": ");
  jsonString(autoPicks(P, Picks, sizeof(Picks)));
  printf("}");
}

static void printBudgetJson(void) {
  ompx_pinned_budget_t B;
  if (ompx_io_get_pinned_budget(&B)) {
    printf("null");
    return;
  }
  printf("{\"cap\": %llu, \"used\": %llu, \"peak\": %llu, \"refusals\": %llu}",
         (unsigned long long)B.cap, (unsigned long long)B.used,
         (unsigned long long)B.peak, (unsigned long long)B.refusals);
}

static void printProcessBudgetJson(void) {
  ompx_io_process_budget_t B;
  if (ompx_io_get_process_budget(&B)) {
    printf("null");
    return;
  }
  printf("{\"cpus_online\": %u, \"cpus_in_mask\": %u, \"local_ranks\": %u, "
         "\"local_rank\": %d, \"ranks_variable\": ",
         B.cpus_online, B.cpus_in_mask, B.local_ranks, B.local_rank);
  jsonString(B.ranks_variable);
  printf(",\n    \"cpus\": %u, \"cpus_origin\": ", B.cpus);
  jsonString(B.cpus_origin);
  printf(",\n    \"io_threads\": %u, \"io_threads_running\": %u, "
         "\"io_threads_origin\": ",
         B.io_threads, B.io_threads_running);
  jsonString(B.io_threads_origin);
  printf(",\n    \"copy_threads\": %u, \"copy_threads_origin\": ",
         B.copy_threads);
  jsonString(B.copy_threads_origin);
  printf(",\n    \"pinned_max\": %llu, \"pinned_max_origin\": ",
         (unsigned long long)B.pinned_max);
  jsonString(B.pinned_max_origin);
  printf("}");
}

/// The name of \p Source, an enum ompx_io_setting_source value.
static const char *sourceName(int Source) {
  static const char *const Names[] = {"default", "environment", "invalid"};
  return Source >= 0 && Source <= 2 ? Names[Source] : "unknown";
}

/// One setting of either list, as the JSON prints it; Layer and Doc are
/// NULL for the engine's list, which has neither.
typedef struct {
  const char *Name, *Layer, *Value, *Default, *Env, *Valid, *Doc;
  int Origin; ///< An enum ompx_io_setting_source value.
} SettingRow;

/// Row \p I of an engine list (ompx_io_setting_t).
static SettingRow engineRow(const void *List, size_t I) {
  const ompx_io_setting_t *S = (const ompx_io_setting_t *)List + I;
  SettingRow R = {S->name,      NULL,     S->value, S->default_value,
                  S->env_value, S->valid, NULL,     S->source};
  return R;
}

/// Row \p I of a list of every setting (ompx_io_setting_info_t).
static SettingRow allRow(const void *List, size_t I) {
  const ompx_io_setting_info_t *S = (const ompx_io_setting_info_t *)List + I;
  SettingRow R = {S->name,      S->layer_name, S->value, S->default_value,
                  S->env_value, S->valid,      S->doc,   S->origin};
  return R;
}

/// The \p N settings of \p List (rows by \p Row) as a JSON array of
/// objects: name, layer, value, default, env, valid, \p OriginKey and doc,
/// each field the row has. Frees \p List.
static void printSettingList(void *List, size_t N,
                             SettingRow (*Row)(const void *, size_t),
                             const char *OriginKey) {
  printf("[");
  for (size_t I = 0; List && I < N; ++I) {
    SettingRow R = Row(List, I);
    const struct {
      const char *Key, *Value;
    } Fields[] = {{"name", R.Name},
                  {"layer", R.Layer},
                  {"value", R.Value},
                  {"default", R.Default},
                  {"env", R.Env},
                  {"valid", R.Valid},
                  {OriginKey, sourceName(R.Origin)},
                  {"doc", R.Doc}};
    printf("%s\n    {", I ? "," : "");
    const char *Sep = "";
    for (size_t F = 0; F < sizeof(Fields) / sizeof(Fields[0]); ++F) {
      if (!Fields[F].Value)
        continue;
      printf("%s\"%s\": ", Sep, Fields[F].Key);
      jsonString(Fields[F].Value);
      Sep = ", ";
    }
    printf("}");
  }
  printf("%s]", List && N ? "\n  " : "");
  free(List);
}

void printInfoJson(int NumDevices, int Initial, const PluginList *L,
                   const DeviceProbe *Probes) {
  printf("{\n  \"schema_version\": %d,\n  \"version\": ",
         OMPX_IO_INFO_JSON_SCHEMA);
  jsonString(OFFLOADIO_VERSION_STRING);
  printf(",\n  \"library_version\": ");
  jsonString(ompx_io_version(NULL, NULL, NULL));
  printf(",\n  \"num_devices\": %d,\n  \"initial_device\": %d,\n", NumDevices,
         Initial);
  printf("  \"plugins\": [");
  for (int I = 0; I < L->Num; ++I) {
    printf("%s\n    {\"path\": ", I ? "," : "");
    jsonString(L->Plugins[I].Path);
    printf(", \"offload_io\": %s}", L->Plugins[I].OffloadIO ? "true" : "false");
  }
  printf("%s],\n  \"devices\": [", L->Num ? "\n  " : "");
  for (int D = 0; D < NumDevices; ++D) {
    printf("%s\n", D ? "," : "");
    printDeviceJson(D, &Probes[D]);
  }
  printf("%s],\n  \"pinned_budget\": ", NumDevices ? "\n  " : "");
  printBudgetJson();
  printf(",\n  \"process_budget\": ");
  printProcessBudgetJson();
  size_t N = 0;
  printf(",\n  \"settings\": ");
  ompx_io_setting_t *Engine = engineSettings(&N);
  printSettingList(Engine, N, engineRow, "source");
  printf(",\n  \"all_settings\": ");
  N = 0;
  ompx_io_setting_info_t *All = allSettings(&N);
  printSettingList(All, N, allRow, "origin");
  printf("\n}\n");
}

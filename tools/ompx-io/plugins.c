// SPDX-License-Identifier: Apache-2.0
//
// ompx-io: which loaded plugins are offload-io's, and whose a device is.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "offloadio/ExtensionLookup.h"
#include "ompx-io.h"

#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

static int visitObject(struct dl_phdr_info *Info, size_t Size, void *Data) {
  (void)Size;
  PluginList *L = Data;
  const char *Name = Info->dlpi_name;
  if (!Name || !*Name)
    return 0;
  const char *Base = strrchr(Name, '/');
  Base = Base ? Base + 1 : Name;
  if (strncmp(Base, "libomptarget.rtl.", 17) || L->Num == 8)
    return 0;
  PluginInfo *P = &L->Plugins[L->Num++];
  if (!realpath(Name, P->Path))
    snprintf(P->Path, sizeof(P->Path), "%s", Name);
  P->OffloadIO = 0;
  P->Resolve = NULL;
  void *H = dlopen(Name, RTLD_LAZY | RTLD_NOLOAD);
  if (H) {
    // Ours answers the discovery entry point with its table of calls.
    struct offloadio_extension_table T;
    if (offloadio_extensions_of(H, &T) == 0) {
      P->Resolve = T.ResolveDevice;
      P->OffloadIO = T.ResolveDevice && T.IOSubmit;
    }
    dlclose(H);
  }
  return 0;
}

/// The offload plugins libomptarget has loaded (call after device init).
void loadedPlugins(PluginList *L) {
  L->Num = 0;
  dl_iterate_phdr(visitObject, L);
}

/// Short name of a plugin file: "x86_64", "cuda", "amdgpu".
static void pluginShortName(const char *Path, char *Buf, size_t Len) {
  const char *Base = strrchr(Path, '/');
  Base = Base ? Base + 1 : Path;
  Base += 17;
  size_t N = strcspn(Base, ".");
  snprintf(Buf, Len, "%.*s", (int)N, Base);
}

int deviceOwner(int Dev, const PluginList *L, char *Short, size_t Len,
                int32_t *Local) {
  for (int I = 0; I < L->Num; ++I) {
    if (!L->Plugins[I].OffloadIO)
      continue;
    *Local = L->Plugins[I].Resolve(Dev);
    if (*Local >= 0) {
      pluginShortName(L->Plugins[I].Path, Short, Len);
      return 1;
    }
  }
  return 0;
}

int describeDevice(int Dev, const PluginList *L, char *Buf, size_t Len) {
  char Short[64];
  int32_t Local;
  if (deviceOwner(Dev, L, Short, sizeof(Short), &Local)) {
    snprintf(Buf, Len, "offload-io %s plugin, its device %d", Short,
             (int)Local);
    return 1;
  }
  snprintf(Buf, Len, "not an offload-io plugin's device");
  return 0;
}

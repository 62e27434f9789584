// SPDX-License-Identifier: Apache-2.0
//
// Locking host memory through offload-io's plugin directly: the same map,
// rules and pinning as llvm_omp_target_lock_mem, for the runtimes whose
// llvm_omp_target_lock_mem does not reach the plugin (libomptarget 18.1.8
// returns NULL without asking it).
#include "CallFailure.h"
#include "Library.h"
#include "ompx_io.h"
#include "offloadio/ExtensionABI.h"

#include <cstdint>

using namespace ompxio;
using offloadio::ExtensionNames;

OMPX_API void *ompx_target_lock_mem(void *Ptr, size_t Size, int Device) {
  const char *Call = "ompx_target_lock_mem";
  DeviceRefTy Ref;
  if (!Ptr) {
    invalidArgument(Call, "ptr is NULL");
    return nullptr;
  }
  if (Size == 0 || Size > size_t(INT64_MAX)) {
    invalidArgument(Call, Size ? "size is above INT64_MAX" : "size is 0");
    return nullptr;
  }
  if (!resolveDevice(Device, Ref)) {
    notServed(Call, Device);
    return nullptr;
  }
  const PluginTy &Plugin = *Ref.Plugin;
  if (!Plugin.Fns.LockMem) {
    lackingExtension(Plugin, ExtensionNames::LockMem, Call, Device);
    return nullptr;
  }
  void *Locked = nullptr;
  if (int32_t Err = Plugin.Fns.LockMem(Ref.Local, Ptr, Size, &Locked)) {
    pluginFailure(Plugin, Err, Call, Device);
    return nullptr;
  }
  return Locked;
}

OMPX_API int ompx_target_unlock_mem(void *Ptr, int Device) {
  const char *Call = "ompx_target_unlock_mem";
  DeviceRefTy Ref;
  if (!Ptr)
    return invalidArgument(Call, "ptr is NULL");
  if (!resolveDevice(Device, Ref))
    return notServed(Call, Device);
  const PluginTy &Plugin = *Ref.Plugin;
  if (!Plugin.Fns.UnlockMem)
    return lackingExtension(Plugin, ExtensionNames::UnlockMem, Call, Device);
  if (int32_t Err = Plugin.Fns.UnlockMem(Ref.Local, Ptr))
    return pluginFailure(Plugin, Err, Call, Device);
  return 0;
}

/* SPDX-License-Identifier: Apache-2.0
 *
 * The offload targets (offload-targets.def) for the C tools: the triple ->
 * plugin table and its lookups. Header-only, C and C++.
 */
#ifndef OFFLOADIO_OFFLOAD_TARGETS_H
#define OFFLOADIO_OFFLOAD_TARGETS_H

#include <stddef.h>
#include <string.h>

/** One offload target: its triple, plugin short name and lit feature. */
typedef struct {
  const char *Triple;
  const char *Plugin;
  const char *LitFeature;
} OffloadTarget;

/** Every offload target, the host's first. */
static const OffloadTarget OffloadTargets[] = {
#define OFFLOADIO_OFFLOAD_TARGET(Triple, Plugin, LitFeature)                  \
  {Triple, Plugin, LitFeature},
#include "offload-targets.def"
#undef OFFLOADIO_OFFLOAD_TARGET
};

/** Number of OffloadTargets. */
#define OFFLOADIO_NUM_OFFLOAD_TARGETS                                          \
  (sizeof(OffloadTargets) / sizeof(OffloadTargets[0]))

/** The host's target (the x86_64 plugin's). */
static inline const OffloadTarget *offloadHostTarget(void) {
  return &OffloadTargets[0];
}

/** The target of \p Triple, or NULL if offload-io builds no plugin for it. */
static inline const OffloadTarget *offloadTargetOf(const char *Triple) {
  for (size_t I = 0; I < OFFLOADIO_NUM_OFFLOAD_TARGETS; ++I)
    if (!strcmp(OffloadTargets[I].Triple, Triple))
      return &OffloadTargets[I];
  return NULL;
}

#endif /* OFFLOADIO_OFFLOAD_TARGETS_H */

// SPDX-License-Identifier: Apache-2.0
//
// ompx-io: inspect and benchmark the offload-io file <-> device engine.
//
//   ompx-io info [--json]        devices, transfer paths, engine settings
//   ompx-io bench [options]      file -> device (and device -> file) GB/s
//   ompx-io --version            versions and the offload targets built for
//
// An OpenMP offload program itself (built with -fopenmp-targets=...), so it
// sees the same devices as any application. The engine reads OMPX_IO_* once
// per device, at its first transfer, so every benchmark configuration runs in
// a fresh child process (this program, exec'ed with "__child") that reports
// its figures through a pipe.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "ompx-io.h"
#include "ompx_io.h"
#include "ompx_version.h"

#include "../targets/offload-targets.h"

#include <stdlib.h>
#include <string.h>

static void usage(FILE *Out) {
  fprintf(
      Out,
      "Usage: ompx-io <command> [options]\n"
      "\n"
      "Commands:\n"
      "  info     list the OpenMP devices, the ompx_io transfer paths each can "
      "use\n"
      "           (and why the others are unavailable), and the engine "
      "settings;\n"
      "           --json for scripts; exits 1 when no device is served by an\n"
      "           offload-io plugin\n"
      "  bench    measure file <-> device throughput per path, size and "
      "thread\n"
      "           count against plain pread baselines ('ompx-io bench "
      "--help')\n"
      "  doctor   which plugins a program linked this way gets, the locked-\n"
      "           memory limit, whether the vendor storage fastpath can be\n"
      "           used and why not, and whether given paths take O_DIRECT\n"
      "           ('ompx-io doctor --help')\n"
      "  --version  the versions of ompx-io and libompx_io, and the offload\n"
      "           targets ompx-io is built for (CMake OFFLOADIO_TOOL_TARGETS)\n"
      "\n"
      "The offload-io plugins must be the ones libomptarget loads: the\n"
      "installed ompx-io loads those of its prefix; see install.md in\n"
      "<prefix>/share/doc/offload-io.\n"
      "Engine environment: OMPX_IO_THREADS, OMPX_IO_CHUNK_SIZE, "
      "OMPX_IO_RING_DEPTH,\n"
      "OMPX_IO_PATH=auto|direct|fastpath|staged, OMPX_IO_INFO.\n");
}

/// The offload targets ompx-io is built for: CMake's list, or the host's.
static const char *toolTargets(void) {
#ifdef OMPX_IO_TOOL_TARGETS
  return OMPX_IO_TOOL_TARGETS;
#else
  return offloadHostTarget()->Triple;
#endif
}

int main(int Argc, char **Argv) {
  if (Argc >= 2 && !strcmp(Argv[1], "__child"))
    return cmdChild(Argc - 2, Argv + 2);
  if (Argc < 2)
    usageError("missing command (info, bench or doctor)");
  const char *Cmd = Argv[1];
  if (!strcmp(Cmd, "-h") || !strcmp(Cmd, "--help") || !strcmp(Cmd, "help")) {
    usage(stdout);
    return 0;
  }
  if (!strcmp(Cmd, "--version") || !strcmp(Cmd, "version")) {
    printf("ompx-io %s (libompx_io %s)\noffload targets: %s\n",
           OFFLOADIO_VERSION_STRING, ompx_io_version(NULL, NULL, NULL),
           toolTargets());
    return 0;
  }
  if (!strcmp(Cmd, "info")) {
    if (Argc == 3 && (!strcmp(Argv[2], "-h") || !strcmp(Argv[2], "--help"))) {
      printf("Usage: ompx-io info [--json]\n  Lists the OpenMP devices, "
             "their ompx_io transfer paths and the engine settings in\n"
             "  force; --json prints them as one JSON object. Exits 1 when "
             "no device is\n  served by an offload-io plugin.\n");
      return 0;
    }
    return cmdInfo(Argc - 2, Argv + 2);
  }
  if (!strcmp(Cmd, "bench"))
    return cmdBench(Argc - 2, Argv + 2);
  if (!strcmp(Cmd, "doctor"))
    return cmdDoctor(Argc - 2, Argv + 2);
  usageError("unknown command '%s' (expected info, bench or doctor)", Cmd);
}

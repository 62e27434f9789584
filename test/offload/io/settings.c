// ompx_io_get_settings reports the file engine's settings as the engine
// reads them: every OMPX_IO_* variable of docs/errors-and-env.md's file
// engine table, no other, with its value in force, default, environment
// text and source. A bad value is reported once on stderr and replaced by
// its default; bad arguments fail with EINVAL and touch nothing.
//
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic
// RUN: env -u OMPX_IO_THREADS -u OMPX_IO_CHUNK_SIZE -u OMPX_IO_PATH \
// RUN:   -u OMPX_IO_INFO -u OMPX_IO_RING_DEPTH -u OMPX_IO_ODIRECT \
// RUN:   -u OMPX_IO_DIRECT_CHUNK_SIZE -u OMPX_IO_MAX_REQUESTS \
// RUN:   %libomptarget-run-generic 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,DEFAULTS
// RUN: env OMPX_IO_THREADS=abc OMPX_IO_CHUNK_SIZE=128k OMPX_IO_PATH=Staged \
// RUN:   OMPX_IO_ODIRECT=sideways %libomptarget-run-generic 2>&1 \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,ENV
// Without an offload-io plugin (the stock one loaded): ENODEV.
// RUN: env ASAN_OPTIONS=detect_leaks=0 LD_LIBRARY_PATH=%stock-ld-path \
// RUN:   OFFLOADIO_EXPECT_PLUGIN_DIR=%stock-plugin-dir \
// RUN:   %libomptarget-run-generic stock | %fcheck-generic --check-prefix=STOCK
// The names the plugin reports are exactly the documented ones.
// RUN: %libomptarget-run-generic names \
// RUN:   | python3 %S/../../docs/check-errors-and-env.py --engine-settings - \
// RUN:     %S/../../..

#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include "ompx_io.h"

#define MAX_SETTINGS 64

static const char *sourceName(int Source) {
  switch (Source) {
  case OMPX_IO_SETTING_DEFAULT:
    return "default";
  case OMPX_IO_SETTING_ENVIRONMENT:
    return "environment";
  case OMPX_IO_SETTING_INVALID:
    return "invalid";
  }
  return "?";
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IONBF, 0);
  // libomptarget loads the plugins once the program uses a device.
  (void)omp_get_num_devices();
  ompx_io_setting_t S[MAX_SETTINGS];
  size_t N = 0;

  if (argc > 1 && !strcmp(argv[1], "names")) {
    if (ompx_io_get_settings(S, MAX_SETTINGS, &N) || N > MAX_SETTINGS)
      return 1;
    for (size_t I = 0; I < N; ++I)
      printf("setting %s\n", S[I].name);
    return 0;
  }

  if (argc > 1 && !strcmp(argv[1], "stock")) {
    N = 12345;
    errno = 0;
    printf("stock: %d %s %zu\n", ompx_io_get_settings(S, MAX_SETTINGS, &N),
           strerror(errno), N);
    // STOCK: stock: -1 No such device 12345
    return 0;
  }

  // The first read reports the bad values, before its answer.
  size_t Total = 0;
  printf("count only: %d %zu\n", ompx_io_get_settings(NULL, 0, &Total), Total);
  // ENV: offload-io[{{[0-9]+}}]: warning: ignoring OMPX_IO_THREADS='abc': expected an integer from 1 to 256; using [[THREADS:[0-9]+]]
  // ENV-NEXT: offload-io[{{[0-9]+}}]: warning: ignoring OMPX_IO_ODIRECT='sideways': expected one of auto, on, off; using auto
  // CHECK-NOT: warning
  // CHECK: count only: 0 8

  // Bad arguments: EINVAL, and the count is left alone.
  errno = 0;
  printf("null count: %d %s\n", ompx_io_get_settings(S, MAX_SETTINGS, NULL),
         strerror(errno));
  // CHECK-NEXT: null count: -1 Invalid argument
  N = 12345;
  errno = 0;
  printf("null array: %d %s %zu\n", ompx_io_get_settings(NULL, 3, &N),
         strerror(errno), N);
  // CHECK-NEXT: null array: -1 Invalid argument 12345

  // A short array: filled as far as it goes, the total still counted.
  memset(S, 0x7f, sizeof(S));
  printf("short array: %d %zu %s %s %d\n", ompx_io_get_settings(S, 2, &N), N,
         S[0].name, S[1].name, S[2].name[0] == 0x7f);
  // CHECK-NEXT: short array: 0 8 OMPX_IO_THREADS OMPX_IO_CHUNK_SIZE 1

  if (ompx_io_get_settings(S, MAX_SETTINGS, &N) || N != Total)
    return 1;
  for (size_t I = 0; I < N; ++I)
    printf("%s = %s (%s; default %s; env '%s'; valid: %s)\n", S[I].name,
           S[I].value, sourceName(S[I].source), S[I].default_value,
           S[I].env_value, S[I].valid);

  // DEFAULTS: OMPX_IO_THREADS = [[THREADS:[0-9]+]] (default; default [[THREADS]]; env ''; valid: an integer from 1 to 256)
  // DEFAULTS-NEXT: OMPX_IO_CHUNK_SIZE = 2M (default; default 2M; env ''; valid: a size from 65536 to 1073741824 (K/M/G suffixes allowed))
  // DEFAULTS-NEXT: OMPX_IO_DIRECT_CHUNK_SIZE = 32M (default; default 32M; env ''; valid: a size from 65536 to 1073741824 (K/M/G suffixes allowed))
  // DEFAULTS-NEXT: OMPX_IO_RING_DEPTH = 2 (default; default 2; env ''; valid: an integer from 1 to 64)
  // DEFAULTS-NEXT: OMPX_IO_PATH = auto (default; default auto; env ''; valid: one of auto, direct, fastpath, staged)
  // DEFAULTS-NEXT: OMPX_IO_INFO = off (default; default off; env ''; valid: true/false, on/off, yes/no or 1/0)
  // DEFAULTS-NEXT: OMPX_IO_ODIRECT = auto (default; default auto; env ''; valid: one of auto, on, off)
  // DEFAULTS-NEXT: OMPX_IO_MAX_REQUESTS = 256 (default; default 256; env ''; valid: an integer from 1 to 1048576)

  // ENV: OMPX_IO_THREADS = [[THREADS]] (invalid; default [[THREADS]]; env 'abc'; valid: an integer from 1 to 256)
  // ENV-NEXT: OMPX_IO_CHUNK_SIZE = 128K (environment; default 2M; env '128k'; valid: a size from 65536 to 1073741824 (K/M/G suffixes allowed))
  // ENV-NEXT: OMPX_IO_DIRECT_CHUNK_SIZE = 32M (default; default 32M;
  // ENV-NEXT: OMPX_IO_RING_DEPTH = 2 (default;
  // ENV-NEXT: OMPX_IO_PATH = staged (environment; default auto; env 'Staged';
  // ENV-NEXT: OMPX_IO_INFO = off (default;
  // ENV-NEXT: OMPX_IO_ODIRECT = auto (invalid; default auto; env 'sideways'; valid: one of auto, on, off)
  // ENV-NEXT: OMPX_IO_MAX_REQUESTS = 256 (default;

  // Read again: the bad values are not reported a second time.
  if (ompx_io_get_settings(S, MAX_SETTINGS, &N))
    return 1;
  printf("second read: %zu settings\n", N);
  // CHECK-NOT: warning
  // CHECK: second read: 8 settings
  // CHECK-NOT: warning
  return 0;
}

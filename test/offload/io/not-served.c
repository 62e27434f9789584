// With the stock plugins loaded instead of ours, the file API says why it
// fails: once per process on stderr, a warning that names the plugin
// library libomptarget loaded and how to load ours; for every failed call,
// ompx_io_last_error says the same. Calls about the process (settings,
// pinned budget) name it too.
//
// REQUIRES: ompx-io, x86_64-pc-linux-gnu
// RUN: %libomptarget-compile-generic
// RUN: env ASAN_OPTIONS=detect_leaks=0 LD_LIBRARY_PATH=%stock-ld-path \
// RUN:   OFFLOADIO_EXPECT_PLUGIN_DIR=%stock-plugin-dir \
// RUN:   %libomptarget-run-generic %t.dat 2>&1 | %fcheck-generic

#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "offload_io_test.h"
#include "ompx_io.h"

int main(int argc, char **argv) {
  if (argc < 2)
    return 2;
  int fd = ot_open_zeros(argv[1]);
  if (fd < 0)
    return 3;
  OT_EXPECT(omp_get_num_devices() > 0, "the stock plugin has devices");
  void *dbuf = omp_target_alloc(4096, 0);
  EXPECT_ERRNO(ompx_target_pread(fd, dbuf, 64, 0, 0), ENODEV, "pread");
  printf("pread: %s\n", ompx_io_last_error());
  EXPECT_ERRNO(ompx_target_pwrite(fd, dbuf, 64, 0, 0), ENODEV, "pwrite");
  ompx_io_stats_t St;
  EXPECT_ERRNO(ompx_io_get_stats(0, &St), ENODEV, "get_stats");
  printf("stats: %s\n", ompx_io_last_error());
  ompx_pinned_budget_t B;
  EXPECT_ERRNO(ompx_io_get_pinned_budget(&B), ENODEV, "pinned budget");
  printf("budget: %s\n", ompx_io_last_error());
  omp_target_free(dbuf, 0);
  OT_SUMMARY();
  return 0;
}

// stderr is unbuffered and comes first; the warning is there once.
// CHECK: ompx-io[{{[0-9]+}}]: warning: OpenMP device 0 is not served by an offload-io plugin: libomptarget loaded {{.*}}/libomptarget.rtl.x86_64{{(.nextgen)?}}.so, not offload-io's. This libompx_io ({{.*}}/libompx_io.so.1) does not load ours: link the installed libompx_io, which does, or the package's plugins target, or put the directory of offload-io's plugins first in LD_LIBRARY_PATH (see docs/install.md of the offload-io sources)
// CHECK-NOT: warning
// CHECK: PASS: the stock plugin has devices
// CHECK: PASS: pread -> -1 ENODEV
// CHECK: pread: ompx_target_pread: OpenMP device 0 is not served by an offload-io plugin: libomptarget loaded {{.*}}/libomptarget.rtl.x86_64{{(.nextgen)?}}.so, not offload-io's. {{.*}}(see docs/install.md of the offload-io sources)
// CHECK: PASS: pwrite -> -1 ENODEV
// CHECK: PASS: get_stats -> -1 ENODEV
// CHECK: stats: ompx_io_get_stats: OpenMP device 0 is not served by an offload-io plugin
// CHECK: PASS: pinned budget -> -1 ENODEV
// CHECK: budget: ompx_io_get_pinned_budget: no offload-io plugin is loaded: libomptarget loaded {{.*}}/libomptarget.rtl.x86_64{{(.nextgen)?}}.so, not offload-io's
// CHECK-NOT: FAIL
// CHECK: failures: 0

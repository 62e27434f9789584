// A plugin that answers an older, shorter extension table is found by its
// discovery entry point (under a name that is no plugin's), and libompx_io
// uses what its table has: it serves device 42 (resolve_device), and every
// call whose extension the table lacks fails with ENOSYS, naming the plugin,
// its table version and the missing call. The other devices, served by our
// plugin, are unaffected.
//
// REQUIRES: ompx-io, x86_64-pc-linux-gnu
// RUN: %clang-generic -fopenmp-targets= -shared -fPIC \
// RUN:   %S/Inputs/old-extension-table.c -o %t-old-table.so
// RUN: %libomptarget-compile-generic -Wl,--no-as-needed %t-old-table.so
// RUN: %libomptarget-run-generic %t.dat 2>&1 | %fcheck-generic

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
  char buf[64];

  // CHECK: pread: ompx_target_pread on device 42: plugin {{.*}}old-table.so answers extension table version 1, which lacks __tgt_rtl_ompx_io_test: update the plugin
  EXPECT_ERRNO(ompx_target_pread(fd, buf, 64, 0, 42), ENOSYS, "pread");
  printf("pread: %s\n", ompx_io_last_error());

  ompx_io_request_t req;
  EXPECT_ERRNO(ompx_target_pread_async(fd, buf, 64, 0, 42, &req), ENOSYS,
               "pread_async");
  OT_EXPECT(req == NULL, "no request for a refused submission");

  // CHECK: stats: ompx_io_get_stats on device 42: plugin {{.*}}old-table.so answers extension table version 1, which lacks __tgt_rtl_ompx_io_stats: update the plugin
  ompx_io_stats_t stats;
  EXPECT_ERRNO(ompx_io_get_stats(42, &stats), ENOSYS, "stats");
  printf("stats: %s\n", ompx_io_last_error());

  // A call added after the plugin's table version: ENOSYS, and the count
  // is left alone.
  // CHECK: all settings: ompx_io_get_all_settings on device 42: plugin {{.*}}old-table.so answers extension table version 1, which lacks __tgt_rtl_ompx_settings_info: update the plugin
  size_t count = 777;
  EXPECT_ERRNO(ompx_io_get_all_settings(42, NULL, 0, &count), ENOSYS,
               "all settings");
  OT_EXPECT(count == 777, "count untouched");
  printf("all settings: %s\n", ompx_io_last_error());

  // A batch: the operation on device 42 fails alone.
  // CHECK: batch: ompx_io_batch_wait: 1 of 2 operations failed: operation 1 ({{.*}}device 42): Function not implemented: plugin {{.*}}old-table.so answers extension table version 1, which lacks __tgt_rtl_ompx_io_batch_create: update the plugin
  void *dbuf = omp_target_alloc(64, 0);
  OT_EXPECT(dbuf != NULL, "omp_target_alloc");
  ompx_io_op_t ops[2] = {
      {OMPX_IO_OP_READ, fd, dbuf, 64, 0, 0, 0, 0},
      {OMPX_IO_OP_READ, fd, buf, 64, 0, 42, 0, 0},
  };
  ompx_io_batch_t batch;
  OT_EXPECT(ompx_io_batch_submit(ops, 2, &batch) == 0, "batch submit");
  OT_EXPECT(ompx_io_batch_wait(batch) == 1, "one operation failed");
  printf("batch: %s\n", ompx_io_last_error());
  OT_EXPECT(ops[0].error == 0 && ops[0].result == 64, "device 0 read");
  OT_EXPECT(ops[1].error == ENOSYS && ops[1].result == -1, "device 42 read");

  // Our plugin's device is served as before.
  OT_EXPECT(ompx_target_pread(fd, dbuf, 64, 0, 0) == 64, "device 0 pread");
  omp_target_free(dbuf, 0);
  close(fd);
  // CHECK: done
  printf("done\n");
  return 0;
}

// ompx_io_paths on the host plugin: device memory is host memory, so the
// direct and staged paths serve every device and the fastpath does not
// exist, with the reason given; the initial device has only the host path.
// ompx_io_path_name names the paths. A short why buffer is truncated and
// terminated; why may be NULL; mask may not.
//
// REQUIRES: ompx-io, host-plugin
// RUN: %libomptarget-compile-run-and-check-generic

#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include "offload_test.h"
#include "ompx_io.h"

int main(void) {
  for (int p = 0; p <= OMPX_IO_NUM_PATHS; ++p)
    printf("path %d: %s\n", p, ompx_io_path_name(p));
  printf("path -1: %s\n", ompx_io_path_name(-1));

  unsigned mask = 0;
  char why[256];
  memset(why, 'z', sizeof why);
  int rc = ompx_io_paths(0, &mask, why, sizeof why);
  printf("device 0: rc %d mask %#x\n", rc, mask);
  printf("why: [%s]\n", why);
  OT_EXPECT(mask == ((1u << OMPX_IO_PATH_DIRECT) | (1u << OMPX_IO_PATH_STAGED)),
            "device 0: direct and staged");

  int same = 1;
  for (int d = 1; d < omp_get_num_devices(); ++d) {
    unsigned m = 0;
    same &= ompx_io_paths(d, &m, NULL, 0) == 0 && m == mask;
  }
  OT_EXPECT(same, "every device has the same paths");

  char tiny[9];
  memset(tiny, 'z', sizeof tiny);
  rc = ompx_io_paths(0, &mask, tiny, sizeof tiny);
  printf("tiny: rc %d [%s]\n", rc, tiny);

  mask = 0;
  rc = ompx_io_paths(omp_get_initial_device(), &mask, why, sizeof why);
  printf("initial device: rc %d mask %#x\n", rc, mask);
  printf("why: [%s]\n", why);
  OT_EXPECT(mask == 1u << OMPX_IO_PATH_HOST, "initial device: host only");

  errno = 0;
  rc = ompx_io_paths(0, NULL, why, sizeof why);
  OT_EXPECT(rc == -1 && errno == EINVAL, "NULL mask: EINVAL");
  OT_SUMMARY();
  return 0;
}

// CHECK: path 0: direct
// CHECK-NEXT: path 1: fastpath
// CHECK-NEXT: path 2: staged
// CHECK-NEXT: path 3: host
// CHECK-NEXT: path 4: unknown
// CHECK-NEXT: path -1: unknown
// CHECK-NEXT: device 0: rc 0 mask 0x5
// CHECK-NEXT: why: [fastpath: the x86_64 plugin has no vendor storage DMA
// CHECK-NEXT: ]
// CHECK-NEXT: PASS: device 0: direct and staged
// CHECK-NEXT: PASS: every device has the same paths
// CHECK-NEXT: tiny: rc 0 [fastpath]
// CHECK-NEXT: initial device: rc 0 mask 0x8
// CHECK-NEXT: why: [initial device: plain pread/pwrite
// CHECK-NEXT: ]
// CHECK-NEXT: PASS: initial device: host only
// CHECK-NEXT: PASS: NULL mask: EINVAL
// CHECK-NEXT: failures: 0

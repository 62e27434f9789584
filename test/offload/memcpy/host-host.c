// omp_target_memcpy and omp_target_memcpy_rect with the initial device on
// both sides behave like memcpy.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <omp.h>
#include <stdio.h>
#include <string.h>
#include "offload_test.h"

int main(void) {
  int host = omp_get_initial_device();
  char src[32], dst[32];
  strcpy(src, "offload-io memcpy");
  memset(dst, 0, sizeof(dst));
  OT_EXPECT(omp_target_memcpy(dst, src, strlen(src) + 1, 0, 0, host, host) == 0,
            "host memcpy");
  printf("dst = %s\n", dst);

  int a[4][5], b[4][5];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 5; ++j) {
      a[i][j] = 10 * i + j;
      b[i][j] = -1;
    }
  size_t vol[2] = {2, 2}, dims[2] = {4, 5}, so[2] = {1, 1}, dof[2] = {2, 3};
  OT_EXPECT(omp_target_memcpy_rect(b, a, sizeof(int), 2, vol, dof, so, dims, dims, host,
                                   host) == 0,
            "host memcpy_rect");
  printf("b[2][3] = %d b[3][4] = %d b[0][0] = %d\n", b[2][3], b[3][4], b[0][0]);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: host memcpy
// CHECK: dst = offload-io memcpy
// CHECK: PASS: host memcpy_rect
// CHECK: b[2][3] = 11 b[3][4] = 22 b[0][0] = -1
// CHECK-NOT: FAIL
// CHECK: failures: 0

// omp_target_memcpy_rect argument checking: both pointers NULL is the
// query mode (returns INT_MAX, the maximum number of dimensions); other
// invalid argument combinations return nonzero.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <limits.h>
#include <omp.h>
#include <stdio.h>
#include "offload_test.h"

int main(void) {
  int dev = omp_get_default_device();
  int host = omp_get_initial_device();
  int x[2][2] = {{1, 2}, {3, 4}}, y[2][2] = {{0, 0}, {0, 0}};
  size_t vol[2] = {1, 1}, off[2] = {0, 0}, dims[2] = {2, 2};

  int q = omp_target_memcpy_rect(NULL, NULL, 0, 0, NULL, NULL, NULL, NULL, NULL, dev, host);
  OT_EXPECT(q == INT_MAX, "query mode returns INT_MAX");
  q = omp_target_memcpy_rect(NULL, NULL, sizeof(int), 2, vol, off, off, dims, dims, host,
                             host);
  OT_EXPECT(q == INT_MAX, "query mode ignores the other arguments");

  OT_EXPECT(omp_target_memcpy_rect(y, NULL, sizeof(int), 2, vol, off, off, dims, dims, host,
                                   host) != 0,
            "NULL src fails");
  OT_EXPECT(omp_target_memcpy_rect(NULL, x, sizeof(int), 2, vol, off, off, dims, dims, host,
                                   host) != 0,
            "NULL dst fails");
  OT_EXPECT(omp_target_memcpy_rect(y, x, sizeof(int), 0, vol, off, off, dims, dims, host,
                                   host) != 0,
            "zero dimensions fails");
  OT_EXPECT(omp_target_memcpy_rect(y, x, 0, 2, vol, off, off, dims, dims, host, host) != 0,
            "element size 0 fails");
  OT_EXPECT(omp_target_memcpy_rect(y, x, sizeof(int), 2, NULL, off, off, dims, dims, host,
                                   host) != 0,
            "NULL volume fails");
  OT_EXPECT(omp_target_memcpy_rect(y, x, sizeof(int), 2, vol, NULL, off, dims, dims, host,
                                   host) != 0,
            "NULL dst offsets fails");
  OT_EXPECT(omp_target_memcpy_rect(y, x, sizeof(int), 2, vol, off, off, dims, NULL, host,
                                   host) != 0,
            "NULL src dimensions fails");
  printf("y unchanged: %d %d %d %d\n", y[0][0], y[0][1], y[1][0], y[1][1]);

  // A valid call still works.
  size_t one_off[2] = {1, 1};
  OT_EXPECT(omp_target_memcpy_rect(y, x, sizeof(int), 2, vol, off, one_off, dims, dims, host,
                                   host) == 0,
            "valid call");
  printf("y[0][0] = %d\n", y[0][0]);
  OT_SUMMARY();
  return 0;
}

// CHECK-NOT: FAIL
// CHECK: PASS: query mode returns INT_MAX
// CHECK: PASS: query mode ignores the other arguments
// CHECK: PASS: NULL src fails
// CHECK: PASS: NULL dst fails
// CHECK: PASS: zero dimensions fails
// CHECK: PASS: element size 0 fails
// CHECK: PASS: NULL volume fails
// CHECK: PASS: NULL dst offsets fails
// CHECK: PASS: NULL src dimensions fails
// CHECK: y unchanged: 0 0 0 0
// CHECK: PASS: valid call
// CHECK: y[0][0] = 4
// CHECK-NOT: FAIL
// CHECK: failures: 0

// Bad arguments to omp_target_memcpy: NULL pointers and unknown devices
// give a nonzero result; length 0 succeeds without touching anything.
//
// libomptarget 18 ends the program ("omptarget fatal error N: Device
// number 'N' out of range") where 16 and 17 return an error for an unknown
// device number, with the stock plugin as with ours: this test of those
// errors cannot run there.
// UNSUPPORTED: llvm-18
// RUN: %libomptarget-compile-run-and-check-generic

#include <omp.h>
#include <stdio.h>
#include "offload_test.h"

int main(void) {
  int dev = omp_get_default_device();
  int host = omp_get_initial_device();
  int ndev = omp_get_num_devices();
  int a = 1, b = 2;
  int *d = (int *)omp_target_alloc(sizeof(int), dev);

  OT_EXPECT(omp_target_memcpy(NULL, &a, sizeof(int), 0, 0, dev, host) != 0,
            "NULL dst (H2D) fails");
  OT_EXPECT(omp_target_memcpy(&a, NULL, sizeof(int), 0, 0, host, dev) != 0,
            "NULL src (D2H) fails");
  OT_EXPECT(omp_target_memcpy(NULL, &a, sizeof(int), 0, 0, host, host) != 0,
            "NULL dst (host) fails");
  OT_EXPECT(omp_target_memcpy(d, NULL, sizeof(int), 0, 0, dev, dev) != 0,
            "NULL src (D2D) fails");
  OT_EXPECT(omp_target_memcpy(&a, &b, 0, 0, 0, host, host) == 0, "length 0 (host) returns 0");
  OT_EXPECT(omp_target_memcpy(d, &b, 0, 0, 0, dev, host) == 0, "length 0 (H2D) returns 0");
  OT_EXPECT(omp_target_memcpy(NULL, NULL, 0, 0, 0, dev, host) == 0,
            "length 0 with NULL pointers returns 0");
  OT_EXPECT(omp_target_memcpy(&a, &b, sizeof(int), 0, 0, host, ndev + 3) != 0,
            "unknown source device fails");
  OT_EXPECT(omp_target_memcpy(&a, &b, sizeof(int), 0, 0, ndev + 3, host) != 0,
            "unknown destination device fails");
  OT_EXPECT(omp_target_memcpy(&a, &b, sizeof(int), 0, 0, -5, host) != 0,
            "negative device number fails");
  printf("a = %d b = %d\n", a, b);

  // Valid copies still work afterwards.
  OT_EXPECT(omp_target_memcpy(d, &b, sizeof(int), 0, 0, dev, host) == 0 &&
                omp_target_memcpy(&a, d, sizeof(int), 0, 0, host, dev) == 0,
            "valid copy afterwards");
  printf("a = %d\n", a);
  omp_target_free(d, dev);
  OT_SUMMARY();
  return 0;
}

// CHECK-NOT: FAIL
// CHECK: PASS: NULL dst (H2D) fails
// CHECK: PASS: NULL src (D2H) fails
// CHECK: PASS: NULL dst (host) fails
// CHECK: PASS: NULL src (D2D) fails
// CHECK: PASS: length 0 (host) returns 0
// CHECK: PASS: length 0 (H2D) returns 0
// CHECK: PASS: length 0 with NULL pointers returns 0
// CHECK: PASS: unknown source device fails
// CHECK: PASS: unknown destination device fails
// CHECK: PASS: negative device number fails
// CHECK: a = 1 b = 2
// CHECK: PASS: valid copy afterwards
// CHECK: a = 2
// CHECK-NOT: FAIL
// CHECK: failures: 0

// Copy between the device copies of mapped data on two different devices
// (omp_get_mapped_ptr + omp_target_memcpy), then read it back through the
// mapping on the destination device.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <omp.h>
#include <stdio.h>
#include "offload_test.h"

#define N 512

int main(void) {
  int ndev = omp_get_num_devices();
  int src_dev = 0, dst_dev = ndev - 1;
  static int a[N], b[N];
  for (int i = 0; i < N; ++i) {
    a[i] = i;
    b[i] = 0;
  }
#pragma omp target enter data map(to : a) device(src_dev)
#pragma omp target enter data map(to : b) device(dst_dev)
#pragma omp target device(src_dev)
  for (int i = 0; i < N; ++i)
    a[i] = a[i] * 7 + 1;

  void *pa = omp_get_mapped_ptr(a, src_dev);
  void *pb = omp_get_mapped_ptr(b, dst_dev);
  OT_EXPECT(pa && pb, "mapped pointers");
  OT_EXPECT(omp_target_memcpy(pb, pa, sizeof(a), 0, 0, dst_dev, src_dev) == 0,
            "device-to-device copy of mapped data");

  long s = 0;
#pragma omp target device(dst_dev) map(tofrom : s)
  for (int i = 0; i < N; ++i)
    s += b[i];
  printf("sum on destination = %ld\n", s);
#pragma omp target exit data map(from : b) device(dst_dev)
#pragma omp target exit data map(delete : a) device(src_dev)
  printf("b[0] = %d b[511] = %d a[511] = %d\n", b[0], b[N - 1], a[N - 1]);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: mapped pointers
// CHECK: PASS: device-to-device copy of mapped data
// CHECK: sum on destination = 916224
// CHECK: b[0] = 1 b[511] = 3578 a[511] = 511
// CHECK-NOT: FAIL
// CHECK: failures: 0

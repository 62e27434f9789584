// The offload-io host plugin exposes 4 devices by default and
// OFFLOADIO_HOST_NUM_DEVICES=N devices when set; every one of them computes
// independently and holds its own copy of declare target globals.
//
// REQUIRES: host-plugin
// RUN: %libomptarget-compile-generic
// RUN: env -u OFFLOADIO_HOST_NUM_DEVICES %libomptarget-run-generic \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,DEFAULT
// RUN: env OFFLOADIO_HOST_NUM_DEVICES=2 %libomptarget-run-generic \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,TWO
// RUN: env OFFLOADIO_HOST_NUM_DEVICES=7 %libomptarget-run-generic \
// RUN:   | %fcheck-generic --check-prefixes=CHECK,SEVEN

#include <omp.h>
#include <stdio.h>
#include "offload_test.h"

#pragma omp declare target
int device_id = -1;
#pragma omp end declare target

int main(void) {
  int ndev = omp_get_num_devices();
  printf("devices = %d\n", ndev);
  printf("initial device = %d\n", omp_get_initial_device());

  for (int d = 0; d < ndev; ++d) {
#pragma omp target device(d) firstprivate(d)
    device_id = 10 * d + 1;
  }
  int bad = 0;
  long total = 0;
  for (int d = 0; d < ndev; ++d) {
    int got = -2, sum = 0;
    // tofrom: the sum starts from the host's 0; the device copy of a
    // from-only variable is uninitialised.
#pragma omp target device(d) map(from : got) map(tofrom : sum) firstprivate(d)
    {
      got = device_id;
      for (int i = 0; i <= d; ++i)
        sum += i;
    }
    bad += got != 10 * d + 1 || sum != d * (d + 1) / 2;
    total += got;
  }
  OT_EXPECT(bad == 0, "each device kept its own global and computed its own sum");
  printf("total = %ld\n", total);
  OT_SUMMARY();
  return 0;
}

// DEFAULT: devices = 4
// DEFAULT: initial device = 4
// TWO: devices = 2
// TWO: initial device = 2
// SEVEN: devices = 7
// SEVEN: initial device = 7
// CHECK: PASS: each device kept its own global and computed its own sum
// DEFAULT: total = 64
// TWO: total = 12
// SEVEN: total = 217
// CHECK-NOT: FAIL
// CHECK: failures: 0

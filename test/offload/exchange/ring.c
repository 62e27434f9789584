// A token travels around all devices: each device adds to it and the
// result is copied device-to-device to the next one, three times round.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <omp.h>
#include <stdio.h>
#include "offload_test.h"

#define MAXDEV 16
#define LEN 64

int main(void) {
  int ndev = omp_get_num_devices();
  if (ndev > MAXDEV)
    ndev = MAXDEV;
  int host = omp_get_initial_device();
  long *buf[MAXDEV];
  for (int d = 0; d < ndev; ++d)
    buf[d] = (long *)omp_target_alloc(LEN * sizeof(long), d);
  long init[LEN];
  for (int i = 0; i < LEN; ++i)
    init[i] = i;
  omp_target_memcpy(buf[0], init, sizeof(init), 0, 0, 0, host);

  int rc = 0;
  int hops = 3 * ndev;
  for (int h = 0; h < hops; ++h) {
    int d = h % ndev;
    int next = (d + 1) % ndev;
    long *p = buf[d];
#pragma omp target is_device_ptr(p) device(d) firstprivate(d)
    for (int i = 0; i < LEN; ++i)
      p[i] += d + 1;
    rc |= omp_target_memcpy(buf[next], buf[d], LEN * sizeof(long), 0, 0, next, d);
  }
  OT_EXPECT(rc == 0, "all device-to-device copies succeeded");
  long out[LEN];
  omp_target_memcpy(out, buf[0], sizeof(out), 0, 0, host, 0);
  long per_round = (long)ndev * (ndev + 1) / 2;
  int bad = 0;
  for (int i = 0; i < LEN; ++i)
    bad += out[i] != i + 3 * per_round;
  OT_EXPECT(bad == 0, "token accumulated every device's contribution");
  for (int d = 0; d < ndev; ++d)
    omp_target_free(buf[d], d);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: all device-to-device copies succeeded
// CHECK: PASS: token accumulated every device's contribution
// CHECK-NOT: FAIL
// CHECK: failures: 0

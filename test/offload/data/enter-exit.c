// Unstructured data mapping: target enter data / exit data across function
// boundaries, with to, alloc, from, release and delete.
//
// RUN: %libomptarget-compile-run-and-check-generic

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include "offload_test.h"

static double *make_device_vector(int n) {
  double *v = malloc(n * sizeof(double));
  for (int i = 0; i < n; ++i)
    v[i] = i;
#pragma omp target enter data map(to : v[0 : n])
  return v;
}

static void scale(double *v, int n, double f) {
#pragma omp target teams distribute parallel for
  for (int i = 0; i < n; ++i)
    v[i] *= f;
}

static void finish(double *v, int n) {
#pragma omp target exit data map(from : v[0 : n])
}

int main(void) {
  int dev = omp_get_default_device();
  int n = 1000;
  double *v = make_device_vector(n);
  OT_EXPECT(omp_target_is_present(v, dev), "present after enter data");
  scale(v, n, 2.0);
  scale(v, n, 1.5);
  OT_EXPECT(v[10] == 10.0, "host copy not updated before exit");
  finish(v, n);
  OT_EXPECT(!omp_target_is_present(v, dev), "absent after exit data");
  printf("v[10] = %.1f v[999] = %.1f\n", v[10], v[999]);

  // alloc + release: nothing comes back.
  int w[8] = {1, 1, 1, 1, 1, 1, 1, 1};
#pragma omp target enter data map(alloc : w)
#pragma omp target
  for (int i = 0; i < 8; ++i)
    w[i] = 9;
#pragma omp target exit data map(release : w)
  printf("w[0] after release = %d\n", w[0]);
  OT_EXPECT(!omp_target_is_present(w, dev), "release dropped the last reference");
  free(v);
  OT_SUMMARY();
  return 0;
}

// CHECK: PASS: present after enter data
// CHECK: PASS: host copy not updated before exit
// CHECK: PASS: absent after exit data
// CHECK: v[10] = 30.0 v[999] = 2997.0
// CHECK: w[0] after release = 1
// CHECK: PASS: release dropped the last reference
// CHECK-NOT: FAIL
// CHECK: failures: 0

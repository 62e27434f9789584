// map(present:) and motion with the present modifier succeed for data that
// is mapped, and use the existing device copy.
//
// RUN: %libomptarget-compile-generic -fopenmp-version=51
// RUN: %libomptarget-run-generic 2>&1 | %fcheck-generic %libomptarget-prefix-def

#include <omp.h>
#include <stdio.h>

int main(void) {
  int v[32];
  for (int i = 0; i < 32; ++i)
    v[i] = i;
#pragma omp target enter data map(to : v)
  for (int i = 0; i < 32; ++i)
    v[i] = 0; // host-only change, not seen by the device
  int sum = 0;
#pragma omp target map(present, tofrom : v) map(tofrom : sum)
  for (int i = 0; i < 32; ++i) {
    sum += v[i];
    v[i] = 2 * v[i];
  }
  printf("device sum = %d\n", sum);
  printf("host v[31] before update = %d\n", v[31]);
#pragma omp target update from(present : v)
  printf("host v[31] after update = %d\n", v[31]);
  v[0] = 1000;
#pragma omp target update to(present : v[0 : 1])
#pragma omp target map(present, alloc : v) map(from : sum)
  sum = v[0] + v[1];
  printf("v[0] + v[1] on device = %d\n", sum);
#pragma omp target exit data map(present, release : v)
  printf("present after exit: %d\n", omp_target_is_present(v, omp_get_default_device()));
  return 0;
}

// CHECK: device sum = 496
// CHECK: host v[31] before update = 0
// CHECK: host v[31] after update = 62
// CHECK: v[0] + v[1] on device = 1002
// CHECK: present after exit: 0
// CHECK-NOT: [[LIBOMPTARGET]]

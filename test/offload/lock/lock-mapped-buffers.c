// LIBOMPTARGET_LOCK_MAPPED_HOST_BUFFERS: off leaves mapped buffers alone; on
// locks them for the mapping's lifetime (best effort); mandatory turns a
// failed lock into a failed mapping; invalid values are reported.
//
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic | %fcheck-generic --check-prefix=OFF
// RUN: env LIBOMPTARGET_LOCK_MAPPED_HOST_BUFFERS=on %libomptarget-run-generic | %fcheck-generic --check-prefix=ON
// RUN: env LIBOMPTARGET_LOCK_MAPPED_HOST_BUFFERS=mandatory %libomptarget-run-generic | %fcheck-generic --check-prefix=ON
// RUN: env LIBOMPTARGET_LOCK_MAPPED_HOST_BUFFERS=sometimes %libomptarget-run-generic 2>&1 | %fcheck-generic --check-prefix=BAD
// REQUIRES: ompx-io

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include "ompx_io.h"

int main(void) {
  int dev = omp_get_default_device();
  int *a = malloc(1000 * sizeof(int));
  for (int i = 0; i < 1000; ++i)
    a[i] = i;
  ompx_lock_region_t r;
#pragma omp target data map(tofrom : a[0 : 1000])
  {
    int during = ompx_target_lock_info(a, dev, &r);
    printf("locked during the mapping: %d\n", during);
#pragma omp target
    for (int i = 0; i < 1000; ++i)
      a[i] += 1;
  }
  printf("locked after the mapping: %d\n", ompx_target_lock_info(a, dev, &r));
  int bad = 0;
  for (int i = 0; i < 1000; ++i)
    bad += a[i] != i + 1;
  printf("data %s\n", bad ? "wrong" : "right");
  return 0;
}

// OFF: locked during the mapping: 0
// OFF: locked after the mapping: 0
// OFF: data right
// ON: locked during the mapping: 1
// ON: locked after the mapping: 0
// ON: data right
// BAD: ignoring LIBOMPTARGET_LOCK_MAPPED_HOST_BUFFERS='sometimes'
// BAD: locked during the mapping: 0
// BAD: data right

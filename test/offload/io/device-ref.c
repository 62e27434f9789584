// ompx_io_device_ref names the plugin that serves each OpenMP device and
// the device's number in it (the vendor's ordinal), which is how a program
// holding memory of a vendor device finds its OpenMP device. The initial
// device is "host" with -1; a device no plugin serves is ENODEV; NULL is
// EINVAL.
//
// REQUIRES: ompx-io
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic | %fcheck-generic

#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include "ompx_io.h"

int main(void) {
  int N = omp_get_num_devices();
  int Consecutive = 1, Known = 1;
  for (int D = 0; D < N; ++D) {
    ompx_io_device_ref_t Ref;
    memset(&Ref, 0x7f, sizeof(Ref));
    if (ompx_io_device_ref(D, &Ref)) {
      printf("device %d: error %d: %s\n", D, errno, ompx_io_last_error());
      Known = 0;
      continue;
    }
    // Each plugin's devices are numbered from 0 in OpenMP's order.
    ompx_io_device_ref_t Prev;
    if (D > 0 && !ompx_io_device_ref(D - 1, &Prev) &&
        !strcmp(Prev.target, Ref.target) && Ref.local != Prev.local + 1)
      Consecutive = 0;
    if (!strcmp(Ref.target, "") || Ref.local < 0)
      Known = 0;
  }
  // CHECK: devices: every one named, numbered in order
  printf("devices: %s, %s\n", Known ? "every one named" : "NOT NAMED",
         Consecutive ? "numbered in order" : "OUT OF ORDER");

  ompx_io_device_ref_t Ref;
  int Rc = ompx_io_device_ref(omp_get_default_device(), &Ref);
  int Named = !strcmp(Ref.target, "x86_64") || !strcmp(Ref.target, "cuda") ||
              !strcmp(Ref.target, "amdgpu");
  // CHECK: default device: 0, a plugin's target, a number in it
  printf("default device: %d, %s, %s\n", Rc,
         Named ? "a plugin's target" : Ref.target,
         Ref.local >= 0 ? "a number in it" : "NO NUMBER");

  Rc = ompx_io_device_ref(omp_get_initial_device(), &Ref);
  // CHECK: initial device: 0 host -1
  printf("initial device: %d %s %d\n", Rc, Ref.target, Ref.local);

  errno = 0;
  Rc = ompx_io_device_ref(N + 1, &Ref);
  // CHECK: no device: -1 ENODEV
  printf("no device: %d %s\n", Rc, errno == ENODEV ? "ENODEV" : "OTHER");
  errno = 0;
  Rc = ompx_io_device_ref(0, NULL);
  // CHECK: null ref: -1 EINVAL
  printf("null ref: %d %s\n", Rc, errno == EINVAL ? "EINVAL" : "OTHER");
  return 0;
}

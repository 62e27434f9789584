// A target region runs and the program exits normally: the plugin check
// linked into every test program (test/support/plugin_check.c) verifies at exit
// that libomptarget.rtl.<plugin>* was loaded only from the offload-io plugin
// directory, so this test fails if libomptarget fell back to a stock plugin.
//
// RUN: %libomptarget-compile-generic
// RUN: %libomptarget-run-generic 2>&1 | %fcheck-generic
// RUN: env LIBOMPTARGET_NEXTGEN_PLUGINS=1 %libomptarget-run-generic 2>&1 | %fcheck-generic

#include <omp.h>
#include <stdio.h>

int main(void) {
  int x = 40, on_device = -1;
#pragma omp target map(tofrom : x) map(from : on_device)
  {
    x += 2;
    on_device = !omp_is_initial_device();
  }
  printf("x = %d\n", x);
  printf("on device = %d\n", on_device);
  printf("devices > 0: %d\n", omp_get_num_devices() > 0);
  return 0;
}

// CHECK-NOT: offload-io plugin check: FAILED
// CHECK: x = 42
// CHECK-NEXT: on device = 1
// CHECK-NEXT: devices > 0: 1
// CHECK-NOT: offload-io plugin check: FAILED

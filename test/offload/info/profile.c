// OFFLOADIO_PROFILE=1: at exit the plugin prints, per entry point it served,
// the number of calls and the total and mean time spent in it. The counts
// are exact: 5 empty target regions are 5 launch_kernel calls, and two
// omp_target_memcpy calls one data_submit and one data_retrieve each
// (asynchronous forms where the plugin has them). Without the variable, or
// with it off, nothing is printed; an invalid value is reported and ignored.
//
// RUN: %libomptarget-compile-generic
// RUN: env OFFLOADIO_PROFILE=1 %libomptarget-run-generic 2>&1 \
// RUN:   | %fcheck-generic -DPLUGIN=%plugin-name
// RUN: %libomptarget-run-generic 2>&1 \
// RUN:   | %fcheck-generic -check-prefix=OFF
// RUN: env OFFLOADIO_PROFILE=off %libomptarget-run-generic 2>&1 \
// RUN:   | %fcheck-generic -check-prefix=OFF
// RUN: env OFFLOADIO_PROFILE=sometimes %libomptarget-run-generic 2>&1 \
// RUN:   | %fcheck-generic -check-prefixes=OFF,BAD

#include <omp.h>
#include <stdio.h>

int main(void) {
  int Dev = omp_get_default_device();
  char Host[64] = "profile";
  char *Buf = omp_target_alloc(sizeof(Host), Dev);
  if (!Buf)
    return 1;
  for (int I = 0; I < 5; ++I) {
#pragma omp target device(Dev)
    {}
  }
  int Rc = omp_target_memcpy(Buf, Host, sizeof(Host), 0, 0, Dev,
                             omp_get_initial_device());
  Rc |= omp_target_memcpy(Host, Buf, sizeof(Host), 0, 0,
                          omp_get_initial_device(), Dev);
  omp_target_free(Buf, Dev);
  // stderr, like the profile: the order of the lines is then fixed.
  fprintf(stderr, "done rc=%d %s\n", Rc, Host);
  return Rc;
}

// CHECK: done rc=0 profile
// CHECK: offload-io([[PLUGIN]])[{{[0-9]+}}]: profile: entry point or stage, calls, total ms, mean us
// CHECK-DAG: offload-io([[PLUGIN]])[{{[0-9]+}}]: profile: launch_kernel 5 {{[0-9]+\.[0-9]+ [0-9]+\.[0-9]+$}}
// CHECK-DAG: offload-io([[PLUGIN]])[{{[0-9]+}}]: profile: data_submit{{(_async)?}} 1 {{[0-9]+\.[0-9]+ [0-9]+\.[0-9]+$}}
// CHECK-DAG: offload-io([[PLUGIN]])[{{[0-9]+}}]: profile: data_retrieve{{(_async)?}} 1 {{[0-9]+\.[0-9]+ [0-9]+\.[0-9]+$}}
// CHECK-DAG: offload-io([[PLUGIN]])[{{[0-9]+}}]: profile: data_alloc 1 {{[0-9]+\.[0-9]+ [0-9]+\.[0-9]+$}}
// CHECK-DAG: offload-io([[PLUGIN]])[{{[0-9]+}}]: profile: data_delete 1 {{[0-9]+\.[0-9]+ [0-9]+\.[0-9]+$}}

// BAD: OFFLOADIO_PROFILE='sometimes'
// OFF: done rc=0 profile
// OFF-NOT: profile:

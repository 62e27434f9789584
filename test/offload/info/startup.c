// With any nonzero OFFLOADIO_INFO the offload-io plugin announces itself
// at start-up with "offload-io(<plugin>): <N> devices"; N matches what the
// program sees.  Without OFFLOADIO_INFO (or with 0) the plugin prints none
// of its own lines, whatever LIBOMPTARGET_INFO (the stock plugins' lines)
// says.
//
// RUN: %libomptarget-compile-generic
// RUN: env OFFLOADIO_INFO=1 %libomptarget-run-generic 2>&1 \
// RUN:   | %fcheck-generic -DPLUGIN=%plugin-name
// RUN: env OFFLOADIO_INFO=0x20 %libomptarget-run-generic 2>&1 \
// RUN:   | %fcheck-generic -DPLUGIN=%plugin-name
// RUN: env OFFLOADIO_INFO=-1 %libomptarget-run-generic 2>&1 \
// RUN:   | %fcheck-generic -DPLUGIN=%plugin-name
// RUN: env OFFLOADIO_INFO=0 %libomptarget-run-generic 2>&1 \
// RUN:   | %fcheck-generic --check-prefix=QUIET
// RUN: env -u OFFLOADIO_INFO %libomptarget-run-generic 2>&1 \
// RUN:   | %fcheck-generic --check-prefix=QUIET
// With every info bit set, libomptarget 16 takes two of its own mutexes in
// both orders, which ThreadSanitizer reports as a lock-order inversion; that
// run is left out of the TSan build.
// RUN: %if !thread-sanitizer %{ env -u OFFLOADIO_INFO LIBOMPTARGET_INFO=-1 \
// RUN:   %libomptarget-run-generic 2>&1 | %fcheck-generic --check-prefix=QUIET %}

#include <omp.h>
#include <stdio.h>

int main(void) {
  int x = 0;
#pragma omp target map(tofrom : x)
  x = 5;
  fprintf(stderr, "program sees %d devices, x = %d\n", omp_get_num_devices(), x);
  return 0;
}

// CHECK: {{^}}offload-io([[PLUGIN]])[{{[0-9]+}}]: [[N:[0-9]+]] devices
// CHECK: program sees [[N]] devices, x = 5

// QUIET-NOT: offload-io(
// QUIET: program sees {{[0-9]+}} devices, x = 5
// QUIET-NOT: offload-io(

// Kernel launch lines, one per launch and none for constructs that launch
// nothing:
// - LIBOMPTARGET_INFO=16 (plugin kernel info): the stock plugins' line,
//   '"PluginInterface" device <N> info: Launching kernel <name> with <B>
//   blocks and <T> threads in <mode> mode', and no line of ours;
// - OFFLOADIO_INFO=0x10: ours, "offload-io(<plugin>) ... launch kernel ...",
//   with the argument count, and not the stock one.
//
// RUN: %libomptarget-compile-generic
// RUN: env LIBOMPTARGET_INFO=16 %libomptarget-run-generic 2>&1 \
// RUN:   | %fcheck-generic --check-prefix=STOCK --implicit-check-not=offload-io
// RUN: env OFFLOADIO_INFO=0x10 %libomptarget-run-generic 2>&1 \
// RUN:   | %fcheck-generic -DPLUGIN=%plugin-name \
// RUN:     --implicit-check-not=PluginInterface

#include <stdio.h>

int main(void) {
  int a[100], s = 0;
  for (int i = 0; i < 100; ++i)
    a[i] = i;

  fprintf(stderr, "phase 1: plain target\n");
#pragma omp target map(tofrom : a)
  for (int i = 0; i < 100; ++i)
    a[i] += 1;

  fprintf(stderr, "phase 2: teams reduction\n");
#pragma omp target teams distribute parallel for reduction(+ : s) map(to : a)
  for (int i = 0; i < 100; ++i)
    s += a[i];

  fprintf(stderr, "phase 3: data only\n");
#pragma omp target data map(tofrom : a)
  {
#pragma omp target update from(a)
  }
#pragma omp target enter data map(to : s)
#pragma omp target exit data map(delete : s)

  fprintf(stderr, "phase 4: two regions\n");
  for (int k = 0; k < 2; ++k) {
#pragma omp target map(tofrom : a)
    a[k] = -k;
  }
  fprintf(stderr, "done: s = %d a[0] = %d a[1] = %d\n", s, a[0], a[1]);
  return 0;
}

// STOCK: phase 1: plain target
// STOCK-NOT: phase 2
// STOCK: {{^}}"PluginInterface" device {{[0-9]+}} info: Launching kernel __omp_offloading_{{[^ ]+}} with {{[0-9]+}} blocks and {{[0-9]+}} threads in {{SPMD|Generic|Generic-SPMD}} mode{{$}}
// STOCK-NOT: Launching kernel
// STOCK: phase 2: teams reduction
// STOCK-NOT: phase 3
// STOCK: {{^}}"PluginInterface" device {{[0-9]+}} info: Launching kernel __omp_offloading_{{[^ ]+}} with {{[0-9]+}} blocks and {{[0-9]+}} threads in {{SPMD|Generic|Generic-SPMD}} mode{{$}}
// STOCK-NOT: Launching kernel
// STOCK: phase 3: data only
// STOCK-NOT: Launching kernel
// STOCK: phase 4: two regions
// STOCK: {{^}}"PluginInterface" device {{[0-9]+}} info: Launching kernel __omp_offloading_{{[^ ]+}} with {{[0-9]+}} blocks and {{[0-9]+}} threads in {{SPMD|Generic|Generic-SPMD}} mode{{$}}
// STOCK-NOT: done:
// STOCK: {{^}}"PluginInterface" device {{[0-9]+}} info: Launching kernel __omp_offloading_{{[^ ]+}} with {{[0-9]+}} blocks and {{[0-9]+}} threads in {{SPMD|Generic|Generic-SPMD}} mode{{$}}
// STOCK-NOT: Launching kernel
// STOCK: done: s = 5050 a[0] = 0 a[1] = -1
// STOCK-NOT: Launching kernel

// CHECK: phase 1: plain target
// CHECK-NOT: phase 2
// CHECK: {{^}}offload-io([[PLUGIN]]){{.*}}launch kernel
// CHECK-NOT: launch kernel
// CHECK: phase 2: teams reduction
// CHECK-NOT: phase 3
// CHECK: {{^}}offload-io([[PLUGIN]]){{.*}}launch kernel
// CHECK-NOT: launch kernel
// CHECK: phase 3: data only
// CHECK-NOT: launch kernel
// CHECK: phase 4: two regions
// CHECK: {{^}}offload-io([[PLUGIN]]){{.*}}launch kernel
// CHECK-NOT: done:
// CHECK: {{^}}offload-io([[PLUGIN]]){{.*}}launch kernel
// CHECK-NOT: launch kernel
// CHECK: done: s = 5050 a[0] = 0 a[1] = -1
// CHECK-NOT: launch kernel
